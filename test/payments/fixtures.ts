// Fixtures of the payment tests: a test area that answers the payouts' beneficiary look-up from a table of
// the test's own (the beneficiaries area answers it in the service), and helpers over the API.
import assert from 'node:assert/strict';
import pino from 'pino';
import type { Area } from '../../src/platform/area.ts';
import { type JobRunner, startJobRunner } from '../../src/platform/jobs/runner.ts';
import type { TestApp } from '../helpers/app.ts';
import { storedEnvelope } from '../helpers/event-payloads.ts';
import type { ApiClient } from '../helpers/http.ts';

export const PAYOUTS = '/api/v1/payments/payouts';
export const DEPOSITS = '/api/v1/payments/deposits';

/** Payout destinations from `test_beneficiaries`, created by `createBeneficiaryTable`. */
export const testBeneficiaries: Area = {
  name: 'test-beneficiaries',
  async payoutDestination(db, organisationId, beneficiaryId) {
    const result = await db.query<{
      status: string;
      currency: string;
      account: string;
      name: string;
      country: string;
    }>(
      'SELECT status, currency, account, name, country FROM test_beneficiaries WHERE id = $1 AND organisation_id = $2',
      [beneficiaryId, organisationId],
    );
    const row = result.rows[0];
    return (
      row && {
        beneficiaryId,
        status: row.status,
        blocked: row.status === 'blocked',
        reviewPending: row.status === 'in_review',
        currency: row.currency,
        country: row.country,
        payoutMethod: 'bank_account' as const,
        name: row.name,
        entityType: 'individual' as const,
        dateOfBirth: null,
        accountIdentifier: row.account,
        address: { line1: '1 Main Street', city: 'Berlin', postal_code: null, country: row.country },
        account: { iban: row.account },
        bank: null,
      }
    );
  },
};

export async function createBeneficiaryTable(t: TestApp): Promise<void> {
  await t.db.pool.query(
    `CREATE TABLE test_beneficiaries (id text PRIMARY KEY, organisation_id uuid NOT NULL, status text NOT NULL,
       currency text NOT NULL, account text NOT NULL, name text NOT NULL, country text NOT NULL)`,
  );
}

let counter = 0;
/** A beneficiary of the organisation paid in `currency` to `account` (its last digits are the sandbox's magic). */
export async function beneficiary(
  t: TestApp,
  api: ApiClient,
  account = 'DE89370400440532013000',
  currency = 'EUR',
  status = 'active',
  name = 'Ada Lovelace',
  country = 'DE',
): Promise<string> {
  const id = `ben_TEST${String(++counter).padStart(22, '0')}`;
  await t.db.pool.query(
    'INSERT INTO test_beneficiaries (id, organisation_id, status, currency, account, name, country) VALUES ($1, $2, $3, $4, $5, $6, $7)',
    [id, api.tenant.organisationId, status, currency, account, name, country],
  );
  return id;
}

export async function balance(
  api: ApiClient,
  currency: string,
): Promise<{ available: string; held: string }> {
  const balances = (await api.get('/api/v1/balances')).json() as {
    currency: string;
    available: string;
    held: string;
  }[];
  const found = balances.find((entry) => entry.currency === currency);
  return { available: found?.available ?? 'none', held: found?.held ?? 'none' };
}

export interface TransactionJson {
  amount: string;
  balance_after: string;
  type: string;
  resource_type: string | null;
  resource_id: string | null;
}

/** The balance transactions of one resource, oldest first. */
export async function transactionsOf(api: ApiClient, resourceId: string): Promise<TransactionJson[]> {
  const page = (
    await api.post('/api/v1/balances/transactions/search', {
      filters: { resource_id: [resourceId] },
      sort_direction: 'asc',
    })
  ).json() as { items: TransactionJson[] };
  return page.items.map(({ amount, balance_after, type, resource_type, resource_id }) => ({
    amount,
    balance_after,
    type,
    resource_type,
    resource_id,
  }));
}

/** The events recorded for a resource, oldest first: code and previous_status. */
export async function eventsOf(
  t: TestApp,
  resourceId: string,
): Promise<{ code: string; previous: unknown; status: unknown }[]> {
  const result = await t.db.pool.query<{ event_type_code: string; payload: string }>(
    'SELECT event_type_code, payload FROM webhook_events WHERE source_object_id = $1 ORDER BY id',
    [resourceId],
  );
  return result.rows.map((row) => {
    const { data } = storedEnvelope<{ data: { object: { status: unknown }; previous_status: unknown } }>(
      t.deps,
      row.payload,
    );
    return { code: row.event_type_code, previous: data.previous_status, status: data.object.status };
  });
}

/** The keys of the resource object each event of the resource carries, in the order they were sent. */
export async function publishedKeysOf(t: TestApp, resourceId: string): Promise<Record<string, string[]>> {
  const result = await t.db.pool.query<{ event_type_code: string; payload: string }>(
    'SELECT event_type_code, payload FROM webhook_events WHERE source_object_id = $1 ORDER BY id',
    [resourceId],
  );
  return Object.fromEntries(
    result.rows.map((row) => [
      row.event_type_code,
      Object.keys(storedEnvelope<{ data: { object: object } }>(t.deps, row.payload).data.object),
    ]),
  );
}

export function runJobs(t: TestApp): JobRunner {
  return startJobRunner(t.deps, pino({ level: 'silent' }), { listen: false, maxIdleMs: 50 });
}

export function expectStatus(response: { statusCode: number; body: string }, status: number): void {
  assert.equal(response.statusCode, status, response.body);
}
