// The API's endpoints as the hostile-input tests drive them: the platform's (tokens, webhooks, operator
// organisations and clients) and the payment areas' (D15-D24), each payment route with the real resource its
// path names and a body it accepts, which the tests mutate field by field. Together the two lists cover the
// route table (every /api, /admin and /realms route): payment-hostile-input.test.ts fails when a route is
// missing, so that a new route gets hostile input too.
import { readFileSync } from 'node:fs';
import { bodyOf } from '../beneficiaries/fixtures.ts';
import type { Endpoint } from '../helpers/hostile.ts';
import { type PaymentWorld, USD_EUR } from './payment-world.ts';

/** The limits the hostile-input apps run with: a rate limit would answer 429 instead of testing the request. */
export const HOSTILE_LIMITS = {
  RATE_LIMIT_MAX: '10000000',
  TOKEN_FAILURE_LIMIT_CLIENT: '1000000',
  TOKEN_FAILURE_LIMIT_ADDRESS: '1000000',
};

/** Route prefixes the lists must cover; the rest (/healthz, /readyz, /metrics, /docs, /openapi.json) take no input. */
export const COVERED_PREFIXES = ['/api/', '/admin/', '/realms/'];

const bearer = { auth: 'bearer', envelope: 'platform' } as const;
const admin = { auth: 'admin', envelope: 'platform' } as const;

export const PLATFORM_ENDPOINTS: Endpoint[] = [
  {
    method: 'POST',
    path: '/realms/:realm/protocol/openid-connect/token',
    auth: 'none',
    envelope: 'oauth',
    fixed: { realm: 'sandbox' },
  },
  { method: 'GET', path: '/realms/:realm/protocol/openid-connect/certs', auth: 'none', envelope: 'oauth' },
  { method: 'GET', path: '/realms/:realm/.well-known/openid-configuration', auth: 'none', envelope: 'oauth' },
  { method: 'GET', path: '/api/v1/webhooks/event-types', ...bearer },
  { method: 'POST', path: '/api/v1/webhooks/subscriptions', ...bearer },
  { method: 'POST', path: '/api/v1/webhooks/subscriptions/search', ...bearer },
  { method: 'GET', path: '/api/v1/webhooks/subscriptions/:subscription_id', ...bearer },
  { method: 'PATCH', path: '/api/v1/webhooks/subscriptions/:subscription_id', ...bearer },
  { method: 'DELETE', path: '/api/v1/webhooks/subscriptions/:subscription_id', ...bearer },
  { method: 'POST', path: '/api/v1/webhooks/subscriptions/:subscription_id/rotate-secret', ...bearer },
  { method: 'POST', path: '/api/v1/webhooks/events/search', ...bearer },
  { method: 'GET', path: '/api/v1/webhooks/events/:event_id', ...bearer },
  { method: 'POST', path: '/api/v1/webhooks/events/:event_id/replay', ...bearer },
  { method: 'POST', path: '/api/v1/webhooks/delivery-attempts/search', ...bearer },
  { method: 'GET', path: '/api/v1/webhooks/delivery-attempts/:attempt_id', ...bearer },
  { method: 'POST', path: '/api/v1/sandbox/webhooks/events', ...bearer },
  { method: 'POST', path: '/admin/v1/organisations', ...admin },
  { method: 'POST', path: '/admin/v1/clients', ...admin },
  { method: 'DELETE', path: '/admin/v1/clients/:client_id', ...admin },
  { method: 'POST', path: '/admin/v1/signing-keys/rotate', ...admin },
  { method: 'GET', path: '/admin/v1/secrets', ...admin },
  { method: 'POST', path: '/admin/v1/secrets/reseal', ...admin },
];

/** What the payment routes act on: one organisation's world plus shared reference data. */
export interface Targets extends PaymentWorld {
  /** A corridor of the test's own, for the operator's PATCH. */
  corridor: string;
  bank: string;
  branch: string;
  /** A sanctions list code of the test's own, so that imports leave the sandbox list alone. */
  listCode: string;
}

export interface PaymentEndpoint extends Endpoint {
  /** The resource the path names, in a state where the route can succeed. */
  id?: (w: Targets) => string;
  /** A body the route accepts for that resource; the tests mutate it. */
  body?: (w: Targets) => unknown;
  /** A query string the route accepts; the tests mutate it. */
  query?: (w: Targets) => Record<string, string>;
  /** The route honours Idempotency-Key (D14). */
  idempotent?: boolean;
  /** How a body is sent, when not as JSON. */
  encode?: (body: unknown) => { payload: string; type: string };
  /** A valid request that is slow (the whole IFSC package, about 177,000 branches): never sent. */
  expensive?: (body: unknown) => boolean;
}

const csvCell = (value: unknown): string => {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};
/** Rows (arrays of cells) as CSV text; anything else as its JSON text. */
const csvOf = (rows: unknown): { payload: string; type: string } => ({
  payload: Array.isArray(rows)
    ? rows.map((row) => (Array.isArray(row) ? row.map(csvCell).join(',') : csvCell(row))).join('\n')
    : (JSON.stringify(rows) ?? ''),
  type: 'text/csv',
});

const OPENSANCTIONS_CSV = readFileSync(
  new URL('../fixtures/sanctions/opensanctions/targets.simple.csv', import.meta.url),
  'utf8',
)
  .split('\n')
  .slice(0, 3)
  .join('\n');

const search = (filters: Record<string, unknown[]>, text?: string) => ({
  filters,
  ...(text === undefined ? {} : { search: text }),
  page: 1,
  page_size: 5,
  sort_by: 'created_at',
  sort_direction: 'asc',
});

export const PAYMENT_ENDPOINTS: PaymentEndpoint[] = [
  // FX and corridors (D15, D16).
  { method: 'GET', path: '/api/v1/fx/currencies', ...bearer },
  {
    method: 'GET',
    path: '/api/v1/fx/rates',
    ...bearer,
    query: () => ({ source_currency: 'USD', destination_currency: 'EUR' }),
  },
  {
    method: 'POST',
    path: '/api/v1/corridors/search',
    ...bearer,
    body: () => search({ source_currency: ['USD'], payout_method: ['bank_account'] }, 'EUR'),
  },
  { method: 'GET', path: '/api/v1/corridors/:corridor_id', ...bearer, id: () => USD_EUR },
  // Banks (D17).
  {
    method: 'POST',
    path: '/api/v1/banks/search',
    ...bearer,
    body: () => search({ country: ['DE'], national_code_type: ['blz'] }, 'commerz'),
  },
  {
    method: 'POST',
    path: '/api/v1/banks/validate',
    ...bearer,
    body: () => ({ code_type: 'iban', code: 'DE89 3704 0044 0532 0130 00', country: 'DE' }),
  },
  { method: 'GET', path: '/api/v1/banks/:bank_id', ...bearer, id: (w) => w.bank },
  {
    method: 'POST',
    path: '/api/v1/bank-branches/search',
    ...bearer,
    body: (w) => search({ bank_id: [w.bank], country: ['DE'] }, 'Köln'),
  },
  { method: 'GET', path: '/api/v1/bank-branches/:branch_id', ...bearer, id: (w) => w.branch },
  // Sanctions (D18).
  { method: 'GET', path: '/api/v1/sanctions/lists', ...bearer },
  {
    method: 'POST',
    path: '/api/v1/sanctions/screenings',
    ...bearer,
    idempotent: true,
    body: () => ({
      entity_type: 'individual',
      name: 'Ada Lovelace',
      date_of_birth: '1815-12-10',
      country: 'GB',
    }),
  },
  {
    method: 'POST',
    path: '/api/v1/sanctions/screenings/search',
    ...bearer,
    body: () => search({ match_status: ['potential_match'], entity_type: ['individual'] }, 'Sanctioned'),
  },
  { method: 'GET', path: '/api/v1/sanctions/screenings/:screening_id', ...bearer, id: (w) => w.screening },
  // Crypto deposit addresses (D22).
  { method: 'GET', path: '/api/v1/crypto/networks', ...bearer },
  {
    method: 'POST',
    path: '/api/v1/crypto/deposit-addresses',
    ...bearer,
    idempotent: true,
    body: () => ({ network: 'ethereum', asset: 'USDC', label: 'Customer 4411' }),
  },
  {
    method: 'POST',
    path: '/api/v1/crypto/deposit-addresses/search',
    ...bearer,
    body: () => search({ network: ['ethereum'], asset: ['USDC'], status: ['active'] }, '0x'),
  },
  {
    method: 'GET',
    path: '/api/v1/crypto/deposit-addresses/:deposit_address_id',
    ...bearer,
    id: (w) => w.address.id,
  },
  {
    method: 'POST',
    path: '/api/v1/crypto/deposit-addresses/:deposit_address_id/disable',
    ...bearer,
    idempotent: true,
    id: (w) => w.disableAddress,
  },
  // Balances (D21).
  { method: 'GET', path: '/api/v1/balances', ...bearer },
  {
    method: 'POST',
    path: '/api/v1/balances/transactions/search',
    ...bearer,
    body: (w) => search({ currency: ['EUR'], type: ['payout'], resource_id: [w.payout] }),
  },
  // Beneficiaries (D19).
  { method: 'POST', path: '/api/v1/beneficiaries', ...bearer, idempotent: true, body: () => bodyOf('DE') },
  {
    method: 'GET',
    path: '/api/v1/beneficiaries/requirements',
    ...bearer,
    query: () => ({ destination_country: 'DE', destination_currency: 'EUR', payout_method: 'bank_account' }),
  },
  {
    method: 'POST',
    path: '/api/v1/beneficiaries/search',
    ...bearer,
    body: () =>
      search({ status: ['active'], destination_country: ['DE'], entity_type: ['individual'] }, 'anna'),
  },
  { method: 'GET', path: '/api/v1/beneficiaries/:beneficiary_id', ...bearer, id: (w) => w.beneficiary },
  {
    method: 'PATCH',
    path: '/api/v1/beneficiaries/:beneficiary_id',
    ...bearer,
    id: (w) => w.patchBeneficiary,
    body: () => {
      const { name, address, account } = bodyOf('FR') as Record<string, unknown>;
      return { name, address, account, email: 'claire@example.com', date_of_birth: '1990-01-31' };
    },
  },
  {
    method: 'DELETE',
    path: '/api/v1/beneficiaries/:beneficiary_id',
    ...bearer,
    id: (w) => w.deleteBeneficiary,
  },
  // Deposits and payouts (D21).
  {
    method: 'POST',
    path: '/api/v1/payments/deposits',
    ...bearer,
    idempotent: true,
    body: () => ({
      currency: 'EUR',
      method: 'bank_transfer',
      expected_amount: '250.00',
      external_id: 'inv-1',
    }),
  },
  {
    method: 'POST',
    path: '/api/v1/payments/deposits/search',
    ...bearer,
    body: () => search({ status: ['pending'], method: ['bank_transfer'], currency: ['EUR'] }),
  },
  { method: 'GET', path: '/api/v1/payments/deposits/:deposit_id', ...bearer, id: (w) => w.deposit },
  {
    method: 'POST',
    path: '/api/v1/payments/payouts',
    ...bearer,
    idempotent: true,
    body: (w) => ({
      beneficiary_id: w.beneficiary,
      currency: 'EUR',
      amount: '10.00',
      reference: 'Invoice 7',
    }),
  },
  {
    method: 'POST',
    path: '/api/v1/payments/payouts/search',
    ...bearer,
    body: (w) => search({ status: ['pending'], beneficiary_id: [w.beneficiary], currency: ['EUR'] }),
  },
  { method: 'GET', path: '/api/v1/payments/payouts/:payout_id', ...bearer, id: (w) => w.payout },
  {
    method: 'POST',
    path: '/api/v1/payments/payouts/:payout_id/cancel',
    ...bearer,
    idempotent: true,
    id: (w) => w.cancelPayout,
  },
  // Quotes and transfers (D20).
  {
    method: 'POST',
    path: '/api/v1/transfers/quotes',
    ...bearer,
    idempotent: true,
    body: () => ({ corridor_id: USD_EUR, source_amount: '100.00' }),
  },
  { method: 'GET', path: '/api/v1/transfers/quotes/:quote_id', ...bearer, id: (w) => w.quote },
  {
    method: 'POST',
    path: '/api/v1/transfers/quotes/:quote_id/confirm',
    ...bearer,
    idempotent: true,
    id: (w) => w.quote,
    body: (w) => ({
      beneficiary_id: w.beneficiary,
      funding_method: 'bank_transfer',
      reference: 'Rent March',
      purpose: 'family_support',
    }),
  },
  {
    method: 'POST',
    path: '/api/v1/transfers/search',
    ...bearer,
    body: (w) =>
      search({ status: ['awaiting_deposit'], beneficiary_id: [w.beneficiary], source_currency: ['USD'] }),
  },
  { method: 'GET', path: '/api/v1/transfers/:transfer_id', ...bearer, id: (w) => w.transfer },
  {
    method: 'POST',
    path: '/api/v1/transfers/:transfer_id/cancel',
    ...bearer,
    idempotent: true,
    id: (w) => w.cancelTransfer,
  },
  // Sandbox simulations (D24).
  {
    method: 'POST',
    path: '/api/v1/sandbox/screenings/:screening_id/review',
    ...bearer,
    idempotent: true,
    id: (w) => w.screening,
    body: () => ({ decision: 'cleared', note: 'A different person: date of birth checked' }),
  },
  {
    method: 'POST',
    path: '/api/v1/sandbox/balances/top-up',
    ...bearer,
    idempotent: true,
    body: () => ({ currency: 'USD', amount: '100.00' }),
  },
  {
    method: 'POST',
    path: '/api/v1/sandbox/deposits/:deposit_id/receive',
    ...bearer,
    idempotent: true,
    id: (w) => w.deposit,
    body: () => ({ amount: '250.00' }),
  },
  {
    method: 'POST',
    path: '/api/v1/sandbox/payouts/:payout_id/complete',
    ...bearer,
    idempotent: true,
    id: (w) => w.processingPayout,
    body: () => ({}),
  },
  {
    method: 'POST',
    path: '/api/v1/sandbox/payouts/:payout_id/fail',
    ...bearer,
    idempotent: true,
    id: (w) => w.failPayout,
    body: () => ({ failure_reason: 'account_closed' }),
  },
  {
    method: 'POST',
    path: '/api/v1/sandbox/payouts/:payout_id/return',
    ...bearer,
    idempotent: true,
    id: (w) => w.completedPayout,
    body: () => ({ failure_reason: 'returned' }),
  },
  {
    method: 'POST',
    path: '/api/v1/sandbox/crypto/deposits',
    ...bearer,
    idempotent: true,
    body: (w) => ({
      address: w.address.address,
      asset: 'USDC',
      amount: '5.000000',
      network: 'ethereum',
      confirmations: 1,
    }),
  },
  {
    method: 'POST',
    path: '/api/v1/sandbox/quotes/:quote_id/expire',
    ...bearer,
    idempotent: true,
    id: (w) => w.expireQuote,
  },
  {
    method: 'POST',
    path: '/api/v1/sandbox/transfers/:transfer_id/fund',
    ...bearer,
    idempotent: true,
    id: (w) => w.transfer,
    body: () => ({ amount: '100.00' }),
  },
  {
    method: 'POST',
    path: '/api/v1/sandbox/transfers/:transfer_id/expire',
    ...bearer,
    idempotent: true,
    id: (w) => w.expireTransfer,
  },
  // The operator API of the payment areas (D23).
  { method: 'GET', path: '/admin/v1/crypto/account-keys', ...admin, query: () => ({ count: '3' }) },
  {
    method: 'POST',
    path: '/admin/v1/crypto/deposits',
    ...admin,
    body: (w) => ({
      network: 'ethereum',
      address: w.address.address,
      asset: 'USDC',
      amount: '5.000000',
      tx_hash: '0x9f2c4a0e1b7d3c5a8e6f4d2b0a9c8e7f6d5c4b3a2918e7d6c5b4a3928170f6e5',
      log_index: 0,
      confirmations: 1,
    }),
  },
  {
    method: 'POST',
    path: '/admin/v1/corridors',
    ...admin,
    body: () => ({
      source_currency: 'GBP',
      destination_country: 'IN',
      destination_currency: 'INR',
      payout_method: 'bank_account',
      min_amount: '1.00',
      max_amount: '50000.00',
      fee_fixed: '1.00',
      fee_percent: '0.50',
      fx_markup_percent: '0.35',
      estimated_delivery_seconds: 86400,
    }),
  },
  {
    method: 'PATCH',
    path: '/admin/v1/corridors/:corridor_id',
    ...admin,
    id: (w) => w.corridor,
    body: () => ({
      min_amount: '5.00',
      max_amount: '9000.00',
      fee_fixed: '0.50',
      fee_percent: '1.25',
      status: 'active',
    }),
  },
  {
    method: 'POST',
    path: '/admin/v1/sanctions/lists/:code/import',
    ...admin,
    id: (w) => w.listCode,
    body: () => ({
      format: 'opensanctions-csv',
      name: 'Hostile input list',
      files: { 'targets.simple.csv': OPENSANCTIONS_CSV },
    }),
  },
  {
    method: 'POST',
    path: '/admin/v1/screenings/:screening_id/review',
    ...admin,
    id: (w) => w.adminScreening,
    body: () => ({ decision: 'confirmed_match', note: 'Same date of birth and nationality' }),
  },
  {
    method: 'GET',
    path: '/admin/v1/screenings/pending',
    ...admin,
    query: (w) => ({ limit: '5', organisation_id: w.api.tenant.organisationId }),
  },
  {
    method: 'POST',
    path: '/admin/v1/banks/import',
    ...admin,
    encode: csvOf,
    body: () => [
      [
        'country',
        'bank_name',
        'bank_bic',
        'bank_code_type',
        'bank_code',
        'branch_name',
        'branch_code_type',
        'branch_code',
        'city',
        'address',
      ],
      [
        'DE',
        'Hostile Test Bank',
        'HOSTDEFF',
        'blz',
        '10020030',
        'Hostile Test Berlin',
        'blz',
        '10020030',
        'Berlin',
        'Unter den Linden 1',
      ],
    ],
  },
  {
    method: 'POST',
    path: '/admin/v1/banks/import/ifsc-package',
    ...admin,
    // ALLA has a single IFSC: an accepted request imports one branch.
    body: () => ({ banks: ['ALLA'] }),
    expensive: (body) =>
      body === undefined ||
      (typeof body === 'object' && body !== null && !Array.isArray(body) && Object.keys(body).length === 0),
  },
  {
    method: 'POST',
    path: '/admin/v1/fx-rates',
    ...admin,
    // Older than the sandbox's rates: accepted, and never the current set that quotes use.
    body: () => ({
      base: 'USD',
      as_of: '2020-01-02T15:00:00.000Z',
      provider: 'hostile',
      rates: { EUR: '0.92', GBP: '0.79' },
    }),
  },
  {
    method: 'POST',
    path: '/admin/v1/deposits/:deposit_id/receive',
    ...admin,
    id: (w) => w.adminDeposit,
    body: (w) => ({ amount: '250.00', reference: w.adminDepositReference }),
  },
  { method: 'POST', path: '/admin/v1/deposits/:deposit_id/reverse', ...admin, id: (w) => w.receivedDeposit },
  {
    method: 'GET',
    path: '/admin/v1/deposits/by-reference/:reference',
    ...admin,
    id: (w) => w.adminDepositReference,
  },
  {
    method: 'POST',
    path: '/admin/v1/deposits/:deposit_id/fail',
    ...admin,
    id: (w) => w.failDeposit,
    body: () => ({ failure_reason: 'The payer cancelled' }),
  },
  { method: 'GET', path: '/admin/v1/payouts/waiting', ...admin },
  { method: 'GET', path: '/admin/v1/payouts/:payout_id/destination', ...admin, id: (w) => w.payout },
  {
    method: 'POST',
    path: '/admin/v1/payouts/:payout_id/complete',
    ...admin,
    id: (w) => w.processingPayout,
    body: () => ({}),
  },
  {
    method: 'POST',
    path: '/admin/v1/payouts/:payout_id/fail',
    ...admin,
    id: (w) => w.failPayout,
    body: () => ({ failure_reason: 'rejected_by_bank' }),
  },
  {
    method: 'POST',
    path: '/admin/v1/payouts/:payout_id/return',
    ...admin,
    id: (w) => w.completedPayout,
    body: () => ({ failure_reason: 'returned' }),
  },
];
