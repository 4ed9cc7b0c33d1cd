// One organisation's payment resources, made through the API and the real job runner, each in a state where
// the actions on it can still succeed: the hostile-input and isolation tests of the payment routes aim at them.
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { bodyOf, createBeneficiary } from '../beneficiaries/fixtures.ts';
import type { Tenant, TestApp } from '../helpers/app.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';
import { waitUntil } from '../helpers/wait.ts';
import { DEPOSITS, PAYOUTS, runJobs } from '../payments/fixtures.ts';
import { activeSubscription, EVENT_TYPES_URL, type SubscriptionJson } from '../webhooks/fixtures.ts';

export const USD_EUR = 'cor_0000SANDBX0000000000000001';
export const QUOTES = '/api/v1/transfers/quotes';
export const TRANSFERS = '/api/v1/transfers';
export const SCREENINGS = '/api/v1/sanctions/screenings';
export const ADDRESSES = '/api/v1/crypto/deposit-addresses';

export interface PaymentWorld {
  api: ApiClient;
  /** Active, on every published event type: each state change of the organisation records an event. */
  subscription: SubscriptionJson;
  /** Active, paid in EUR (DE IBAN): payouts and transfers go to it. */
  beneficiary: string;
  /** Active, for PATCH. */
  patchBeneficiary: string;
  /** Active, for DELETE. */
  deleteBeneficiary: string;
  /** A potential match of a direct screening, waiting for its review. */
  screening: string;
  /** Another one, for the operator's review. */
  adminScreening: string;
  /** Open quotes: one to confirm, one to expire. */
  quote: string;
  expireQuote: string;
  /** Transfers awaiting their bank-transfer deposit: one to fund, one to cancel, one to expire. */
  transfer: string;
  cancelTransfer: string;
  expireTransfer: string;
  /** Pending bank-transfer deposits: received by the sandbox, received by the operator, failed by the operator. */
  deposit: string;
  adminDeposit: string;
  /** The reference of adminDeposit's instructions, which the operator's receive checks. */
  adminDepositReference: string;
  failDeposit: string;
  /** A received deposit, for the operator's reverse. */
  receivedDeposit: string;
  /** Pending payouts: one to read, one to cancel. */
  payout: string;
  cancelPayout: string;
  /** Payouts in processing (account ending 4444 stays there until simulated): completed, failed. */
  processingPayout: string;
  failPayout: string;
  /** A completed payout, for the sandbox's return. */
  completedPayout: string;
  /** An active crypto deposit address (ethereum USDC): one to read and pay, one to disable. */
  address: { id: string; address: string };
  disableAddress: string;
}

export function created(
  response: LightMyRequestResponse,
  status = 201,
): { id: string } & Record<string, unknown> {
  assert.equal(response.statusCode, status, response.body);
  return response.json() as { id: string } & Record<string, unknown>;
}

/**
 * Builds the world of `tenant` on `t`, whose app runs with SANDBOX_STEP_DELAY_MS=0. The job runner runs only
 * while the payouts that must move (processing, completed) are made; the rest stays where it was made.
 */
export async function paymentWorld(t: TestApp, tenant: Tenant): Promise<PaymentWorld> {
  const api = apiClient(t, tenant);
  const codes = ((await api.get(EVENT_TYPES_URL)).json() as { code: string }[]).map((type) => type.code);
  const subscription = await activeSubscription(api, { event_type_codes: codes });

  const beneficiary = (await createBeneficiary(api, bodyOf('DE'))).id;
  // An account ending 4444: the sandbox rail holds its payouts in processing until a simulation (D24).
  const held = (await createBeneficiary(api, bodyOf('US', { account: { account_number: '000123454444' } })))
    .id;

  const payout = (currency: string, to: string, amount = '10.00') =>
    api.post(PAYOUTS, { beneficiary_id: to, currency, amount });
  const payoutReaches = (id: string, status: string) =>
    waitUntil(
      async () => ((await api.get(`${PAYOUTS}/${id}`)).json() as { status: string }).status === status,
      `payout ${id} ${status}`,
    );
  const jobs = runJobs(t);
  let processingPayout: string;
  let failPayout: string;
  let completedPayout: string;
  try {
    processingPayout = created(await payout('USD', held)).id;
    failPayout = created(await payout('USD', held)).id;
    completedPayout = created(await payout('EUR', beneficiary)).id;
    await payoutReaches(processingPayout, 'processing');
    await payoutReaches(failPayout, 'processing');
    await payoutReaches(completedPayout, 'completed');
  } finally {
    await jobs.stop();
  }

  const screening = async () => {
    const body = created(
      await api.post(SCREENINGS, { entity_type: 'individual', name: 'Sanctioned Person' }),
    );
    assert.equal(body.match_status, 'potential_match');
    return body.id;
  };
  const quote = async () =>
    created(await api.post(QUOTES, { corridor_id: USD_EUR, source_amount: '100.00' })).id;
  const transfer = async () =>
    created(
      await api.post(`${QUOTES}/${await quote()}/confirm`, {
        beneficiary_id: beneficiary,
        funding_method: 'bank_transfer',
      }),
    ).id;
  const pendingDeposit = async () =>
    created(
      await api.post(DEPOSITS, { currency: 'EUR', method: 'bank_transfer', expected_amount: '250.00' }),
    );
  const deposit = async () => (await pendingDeposit()).id;
  const address = async () => created(await api.post(ADDRESSES, { network: 'ethereum', asset: 'USDC' }));

  const adminDeposit = await pendingDeposit();
  const receivedDeposit = await deposit();
  created(await api.post(`/api/v1/sandbox/deposits/${receivedDeposit}/receive`, {}), 200);
  const payAddress = await address();
  return {
    api,
    subscription,
    beneficiary,
    patchBeneficiary: (await createBeneficiary(api, bodyOf('FR'))).id,
    deleteBeneficiary: (await createBeneficiary(api, bodyOf('ES'))).id,
    screening: await screening(),
    adminScreening: await screening(),
    quote: await quote(),
    expireQuote: await quote(),
    transfer: await transfer(),
    cancelTransfer: await transfer(),
    expireTransfer: await transfer(),
    deposit: await deposit(),
    adminDeposit: adminDeposit.id,
    adminDepositReference: String((adminDeposit.instructions as { reference: string }).reference),
    failDeposit: await deposit(),
    receivedDeposit,
    payout: created(await payout('EUR', beneficiary)).id,
    cancelPayout: created(await payout('EUR', beneficiary)).id,
    processingPayout,
    failPayout,
    completedPayout,
    address: { id: payAddress.id, address: payAddress.address as string },
    disableAddress: (await address()).id,
  };
}
