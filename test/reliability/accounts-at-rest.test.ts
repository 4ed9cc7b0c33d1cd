// Beneficiaries' account identifiers at rest (D19, D13): they are sealed in the beneficiary row, and every
// event (whose payload carries resources as their GET returns them) is stored sealed too. One organisation
// subscribes to every event type and makes a beneficiary of every field set (one through an
// Idempotency-Key), updates one, deletes one, pays two and sends a transfer to one; then every text, json and
// array column of every table is scanned for the account identifiers in clear.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SANDBOX_COLLECTION_ACCOUNTS } from '../../src/config.ts';
import {
  BENEFICIARIES,
  type BeneficiaryJson,
  bodyOf,
  createBeneficiary,
  type FieldSetKey,
  VALID,
} from '../beneficiaries/fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { columnsHolding, textColumns } from '../helpers/column-scan.ts';
import { openStoredPayload } from '../helpers/event-payloads.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';
import { waitUntil } from '../helpers/wait.ts';
import { DEPOSITS, PAYOUTS, runJobs } from '../payments/fixtures.ts';
import { activeSubscription, EVENT_TYPES_URL } from '../webhooks/fixtures.ts';
import { created, QUOTES, TRANSFERS, USD_EUR } from './payment-world.ts';

/** The account fields that identify an account (not a bank: BIC, sort code, routing number, IFSC...). */
const IDENTIFIERS = ['iban', 'account_number', 'clabe', 'mobile_number'];

/** An IBAN with valid check digits (ISO 13616, mod 97) for a country's BBAN. */
function iban(country: string, bban: string): string {
  const digits = [...`${bban}${country}00`]
    .map((char) => (/[A-Z]/.test(char) ? String(char.charCodeAt(0) - 55) : char))
    .join('');
  const check = 98 - Number(BigInt(digits) % 97n);
  return `${country}${String(check).padStart(2, '0')}${bban}`;
}

/**
 * Accounts of the field sets whose examples are also the sandbox's own collection accounts, which deposit
 * instructions print by design (D24): these beneficiaries hold other accounts, so that a hit is theirs.
 */
const OWN_ACCOUNTS: Partial<Record<FieldSetKey, Record<string, string>>> = {
  DE: { iban: iban('DE', '370400440532013018') },
  GB: { account_number: '41926819' },
  US: { account_number: '000987654321' },
};

describe("beneficiaries' account identifiers at rest (D19, D13)", () => {
  let t: TestApp;
  let api: ApiClient;
  const beneficiaries = new Map<FieldSetKey, BeneficiaryJson>();

  before(async () => {
    t = await startTestApp({ env: { SANDBOX_STEP_DELAY_MS: '0' } });
    api = apiClient(t, await t.tenant());
    const codes = ((await api.get(EVENT_TYPES_URL)).json() as { code: string }[]).map((type) => type.code);
    await activeSubscription(api, { event_type_codes: codes });
    // A beneficiary of every field set, one through an Idempotency-Key (its answer is stored for replay).
    for (const key of Object.keys(VALID) as FieldSetKey[]) {
      const account = OWN_ACCOUNTS[key];
      const headers = key === 'KE' ? { 'idempotency-key': 'accounts-at-rest-ke' } : undefined;
      beneficiaries.set(key, await createBeneficiary(api, bodyOf(key, account ? { account } : {}), headers));
    }
    const updated = await api.patch(`${BENEFICIARIES}/${beneficiaries.get('FR')!.id}`, {
      name: 'Claire Dubois',
    });
    assert.equal(updated.statusCode, 200, updated.body);
    const deleted = await api.del(`${BENEFICIARIES}/${beneficiaries.get('ES')!.id}`);
    assert.equal(deleted.statusCode, 200, deleted.body);

    // Payouts to two of them, a transfer to one, and a deposit (its instructions name a collection account).
    const jobs = runJobs(t);
    try {
      const payouts = [
        created(
          await api.post(PAYOUTS, {
            beneficiary_id: beneficiaries.get('DE')!.id,
            currency: 'EUR',
            amount: '10.00',
          }),
        ).id,
        created(
          await api.post(PAYOUTS, {
            beneficiary_id: beneficiaries.get('US')!.id,
            currency: 'USD',
            amount: '10.00',
          }),
        ).id,
      ];
      const quote = created(await api.post(QUOTES, { corridor_id: USD_EUR, source_amount: '100.00' })).id;
      const transfer = created(
        await api.post(`${QUOTES}/${quote}/confirm`, {
          beneficiary_id: beneficiaries.get('DE')!.id,
          funding_method: 'balance',
        }),
      ).id;
      const statusOf = async (url: string) => ((await api.get(url)).json() as { status: string }).status;
      for (const id of payouts)
        await waitUntil(
          async () => (await statusOf(`${PAYOUTS}/${id}`)) === 'completed',
          `payout ${id} completed`,
        );
      await waitUntil(
        async () => (await statusOf(`${TRANSFERS}/${transfer}`)) === 'completed',
        `transfer ${transfer} completed`,
      );
    } finally {
      await jobs.stop();
    }
    created(
      await api.post(DEPOSITS, {
        currency: 'EUR',
        method: 'bank_transfer',
        expected_amount: '25.00',
      }),
    );
  });
  after(() => t?.close());

  it('stores no account identifier in clear text: every text, json and array column of every table is scanned', async () => {
    const needles = [...beneficiaries.values()].flatMap((beneficiary) =>
      Object.entries(beneficiary.account).flatMap(([field, value]) =>
        IDENTIFIERS.includes(field) ? [value] : [],
      ),
    );
    assert.equal(
      needles.length,
      Object.keys(VALID).length,
      `one identifier per field set: ${needles.join(', ')}`,
    );
    const collection = Object.values(SANDBOX_COLLECTION_ACCOUNTS).flatMap((account) => [
      account.iban,
      account.account_number,
    ]);
    assert.deepEqual(
      needles.filter((needle) => collection.includes(needle)),
      [],
      "no beneficiary holds one of the sandbox's collection accounts",
    );

    const columns = await textColumns(t.db.pool);
    const scanned = columns.map(({ table, column }) => `${table}.${column}`);
    for (const expected of [
      'beneficiaries.account_sealed',
      'webhook_events.payload',
      'idempotency_keys.response_body',
      'jobs.payload',
    ])
      assert.ok(scanned.includes(expected), `${expected} is scanned`);
    const found = await columnsHolding(t.db.pool, columns, needles);
    assert.deepEqual(found, [], 'columns holding an account identifier in clear text');

    // The scan is not vacuous: the events of the organisation carry every identifier, sealed.
    const events = await t.db.pool.query<{ event_type_code: string; payload: string }>(
      'SELECT event_type_code, payload FROM webhook_events WHERE organisation_id = $1 ORDER BY id',
      [api.tenant.organisationId],
    );
    const opened = events.rows.map((row) => openStoredPayload(t.deps, row.payload));
    for (const needle of needles) {
      assert.ok(
        opened.some((payload) => payload.includes(needle)),
        `an event carries ${needle}`,
      );
    }
    const codes = new Set(events.rows.map((row) => row.event_type_code));
    for (const code of [
      'beneficiary.created',
      'beneficiary.updated',
      'beneficiary.deleted',
      'payout.created',
      'payout.completed',
      'transfer.created',
      'transfer.completed',
    ])
      assert.ok(codes.has(code), `${code} was recorded`);
  });
});
