// Payouts (D21, D24) through the real app and the real job runner on real PostgreSQL: every path with its
// balances, balance transactions and events checked exactly.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { ledgerViolations } from '../../src/balances/repository.ts';
import { withTransaction } from '../../src/db/pool.ts';
import { HAND_OFF_KIND, handOff } from '../../src/payments/payouts.ts';
import { type JobRunner, startJobRunner } from '../../src/platform/jobs/runner.ts';
import { BENEFICIARIES, type BeneficiaryJson, bodyOf, createBeneficiary } from '../beneficiaries/fixtures.ts';
import { errorBody, startTestApp, TEST_ADMIN_KEY, type TestApp } from '../helpers/app.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';
import { sendAgainstLocks, waitUntil } from '../helpers/wait.ts';
import { activeSubscription, client } from '../webhooks/fixtures.ts';
import {
  balance,
  beneficiary,
  createBeneficiaryTable,
  eventsOf,
  expectStatus,
  PAYOUTS,
  publishedKeysOf,
  runJobs,
  testBeneficiaries,
  transactionsOf,
} from './fixtures.ts';

interface PayoutJson {
  id: string;
  status: string;
  failure_reason: string | null;
  amount: string;
  completed_at: string | null;
  returned_at: string | null;
}

const PAYOUT_EVENTS = [
  'payout.created',
  'payout.processing',
  'payout.completed',
  'payout.failed',
  'payout.cancelled',
  'payout.returned',
];

describe('payouts (D21, D24)', () => {
  let t: TestApp;
  let jobs: JobRunner | undefined;
  before(async () => {
    t = await startTestApp({ env: { SANDBOX_STEP_DELAY_MS: '0' }, extraAreas: [testBeneficiaries] });
    await createBeneficiaryTable(t);
  });
  after(async () => {
    await jobs?.stop();
    await t.close();
  });

  /** A fresh organisation (opening balances of D24) with a subscription to every payout event. */
  async function organisation(): Promise<ApiClient> {
    const tenant = await t.tenant();
    await activeSubscription(client(t, tenant), { event_type_codes: PAYOUT_EVENTS });
    return apiClient(t, tenant);
  }
  const payoutOf = async (api: ApiClient, id: string) =>
    (await api.get(`${PAYOUTS}/${id}`)).json() as PayoutJson;
  const settled = (api: ApiClient, id: string, status: string) =>
    waitUntil(async () => (await payoutOf(api, id)).status === status, `payout ${status}`, 10_000);
  const startJobs = () => {
    jobs ??= runJobs(t);
  };

  it('pays out: pending -> processing -> completed, the amount held then sent to the rail', async () => {
    const api = await organisation();
    const ben = await beneficiary(t, api);
    const created = await api.post(PAYOUTS, {
      beneficiary_id: ben,
      currency: 'EUR',
      amount: '150.00',
      reference: 'Invoice 42',
    });
    expectStatus(created, 201);
    const payout = created.json() as PayoutJson;
    assert.match(payout.id, /^pyt_[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.equal(payout.status, 'pending');
    assert.deepEqual(await balance(api, 'EUR'), { available: '999850.00', held: '150.00' });
    startJobs();
    await settled(api, payout.id, 'completed');
    assert.deepEqual(await balance(api, 'EUR'), { available: '999850.00', held: '0.00' });
    assert.deepEqual(await transactionsOf(api, payout.id), [
      {
        amount: '-150.00',
        balance_after: '999850.00',
        type: 'payout',
        resource_type: 'payout',
        resource_id: payout.id,
      },
    ]);
    assert.deepEqual(await eventsOf(t, payout.id), [
      { code: 'payout.created', previous: null, status: 'pending' },
      { code: 'payout.processing', previous: 'pending', status: 'processing' },
      { code: 'payout.completed', previous: 'processing', status: 'completed' },
    ]);
    const rail = await t.db.pool.query<{ sum: string }>(
      `SELECT sum(e.amount)::text AS sum FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id
       WHERE a.name = 'rail:sandbox' AND e.resource_id = $1`,
      [payout.id],
    );
    assert.equal(rail.rows[0]!.sum, '150.00');
    const handOffs = await t.db.pool.query('SELECT connector FROM payout_hand_offs WHERE payout_id = $1', [
      payout.id,
    ]);
    assert.deepEqual(handOffs.rows, [{ connector: 'sandbox' }]);
  });

  it("lists D21's payout fields first and in D21's order in the answer, the GET and every event", async () => {
    const api = await organisation();
    const created = await api.post(PAYOUTS, {
      beneficiary_id: await beneficiary(t, api),
      currency: 'EUR',
      amount: '10.00',
    });
    expectStatus(created, 201);
    const { id } = created.json() as PayoutJson;
    startJobs();
    await settled(api, id, 'completed');
    const keys = [
      ...['id', 'beneficiary_id', 'currency', 'amount', 'reference', 'status', 'failure_reason'],
      ...['transfer_id', 'external_id', 'completed_at'],
      ...['processing_at', 'failed_at', 'cancelled_at', 'returned_at', 'created_at', 'updated_at'],
    ];
    assert.deepEqual(Object.keys(created.json()), keys);
    assert.deepEqual(Object.keys((await api.get(`${PAYOUTS}/${id}`)).json()), keys);
    assert.deepEqual(await publishedKeysOf(t, id), {
      'payout.created': keys,
      'payout.processing': keys,
      'payout.completed': keys,
    });
  });

  for (const [ending, reason] of [
    ['1111', 'account_closed'],
    ['2222', 'invalid_account'],
  ] as const) {
    it(`fails an account ending in ${ending} with ${reason} and credits the amount back`, async () => {
      const api = await organisation();
      const ben = await beneficiary(t, api, `GB33BUKB2020155555${ending}`, 'GBP');
      const payout = (
        await api.post(PAYOUTS, { beneficiary_id: ben, currency: 'GBP', amount: '75.25' })
      ).json() as PayoutJson;
      startJobs();
      await settled(api, payout.id, 'failed');
      const final = await payoutOf(api, payout.id);
      assert.equal(final.failure_reason, reason);
      assert.deepEqual(await balance(api, 'GBP'), { available: '1000000.00', held: '0.00' });
      assert.deepEqual(await transactionsOf(api, payout.id), [
        {
          amount: '-75.25',
          balance_after: '999924.75',
          type: 'payout',
          resource_type: 'payout',
          resource_id: payout.id,
        },
        {
          amount: '75.25',
          balance_after: '1000000.00',
          type: 'payout_reversal',
          resource_type: 'payout',
          resource_id: payout.id,
        },
      ]);
      assert.deepEqual(await eventsOf(t, payout.id), [
        { code: 'payout.created', previous: null, status: 'pending' },
        { code: 'payout.processing', previous: 'pending', status: 'processing' },
        { code: 'payout.failed', previous: 'processing', status: 'failed' },
      ]);
    });
  }

  it('completes then returns an account ending in 3333: the amount comes back', async () => {
    const api = await organisation();
    const ben = await beneficiary(t, api, 'DE00000000000000003333');
    const payout = (
      await api.post(PAYOUTS, { beneficiary_id: ben, currency: 'EUR', amount: '20.00' })
    ).json() as PayoutJson;
    startJobs();
    await settled(api, payout.id, 'returned');
    const final = await payoutOf(api, payout.id);
    assert.equal(final.failure_reason, 'returned');
    assert.ok(final.completed_at !== null && final.returned_at !== null);
    assert.deepEqual(await balance(api, 'EUR'), { available: '1000000.00', held: '0.00' });
    assert.deepEqual(
      (await transactionsOf(api, payout.id)).map((entry) => [entry.type, entry.amount]),
      [
        ['payout', '-20.00'],
        ['payout_reversal', '20.00'],
      ],
    );
    assert.deepEqual(
      (await eventsOf(t, payout.id)).map((event) => event.code),
      ['payout.created', 'payout.processing', 'payout.completed', 'payout.returned'],
    );
  });

  it('holds an account ending in 4444 in processing until a simulation completes or fails it', async () => {
    const api = await organisation();
    const ben = await beneficiary(t, api, 'DE00000000000000004444');
    const first = (
      await api.post(PAYOUTS, { beneficiary_id: ben, currency: 'EUR', amount: '5.00' })
    ).json() as PayoutJson;
    const second = (
      await api.post(PAYOUTS, { beneficiary_id: ben, currency: 'EUR', amount: '6.00' })
    ).json() as PayoutJson;
    startJobs();
    await settled(api, first.id, 'processing');
    await settled(api, second.id, 'processing');
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal((await payoutOf(api, first.id)).status, 'processing');
    const completedWithReason = await api.post(`/api/v1/sandbox/payouts/${first.id}/complete`, {
      failure_reason: 'account_closed',
    });
    expectStatus(completedWithReason, 422);
    const refusal = errorBody(completedWithReason.body);
    assert.deepEqual(
      [refusal.error, refusal.code, refusal.field],
      [
        'A payout that completes has no failure_reason; it applies to fail and return',
        'VALIDATION_FAILED',
        'failure_reason',
      ],
    );
    assert.equal((await payoutOf(api, first.id)).status, 'processing');
    const completed = await api.post(`/api/v1/sandbox/payouts/${first.id}/complete`);
    expectStatus(completed, 200);
    assert.equal(completed.json().status, 'completed');
    const failedAsReturned = await api.post(`/api/v1/sandbox/payouts/${second.id}/fail`, {
      failure_reason: 'returned',
    });
    expectStatus(failedAsReturned, 422);
    assert.deepEqual(
      [errorBody(failedAsReturned.body).field, errorBody(failedAsReturned.body).error],
      [
        'failure_reason',
        'returned is the reason of a return; a failure is account_closed, invalid_account, rejected_by_bank or compliance',
      ],
    );
    assert.equal((await payoutOf(api, second.id)).status, 'processing');
    const failed = await api.post(`/api/v1/sandbox/payouts/${second.id}/fail`, {
      failure_reason: 'rejected_by_bank',
    });
    expectStatus(failed, 200);
    assert.equal(failed.json().failure_reason, 'rejected_by_bank');
    const again = await api.post(`/api/v1/sandbox/payouts/${first.id}/complete`);
    expectStatus(again, 400);
    assert.equal(errorBody(again.body).code, 'INVALID_STATE');
    // The rail's own reason for the return, where it gives one (the default, `returned`: the 3333 test).
    const returned = await api.post(`/api/v1/sandbox/payouts/${first.id}/return`, {
      failure_reason: 'account_closed',
    });
    expectStatus(returned, 200);
    assert.equal(returned.json().status, 'returned');
    assert.equal(returned.json().failure_reason, 'account_closed');
    assert.deepEqual(await balance(api, 'EUR'), { available: '1000000.00', held: '0.00' });
  });

  it('cancels a pending payout (its hand-off is dropped) and refuses to cancel it twice', async () => {
    await jobs?.stop();
    jobs = undefined;
    const api = await organisation();
    const ben = await beneficiary(t, api);
    const payout = (
      await api.post(PAYOUTS, { beneficiary_id: ben, currency: 'EUR', amount: '10.00' })
    ).json() as PayoutJson;
    const cancelled = await api.post(`${PAYOUTS}/${payout.id}/cancel`);
    expectStatus(cancelled, 200);
    assert.equal(cancelled.json().status, 'cancelled');
    const jobsLeft = await t.db.pool.query("SELECT 1 FROM jobs WHERE payload->>'payout_id' = $1", [
      payout.id,
    ]);
    assert.equal(jobsLeft.rowCount, 0);
    assert.deepEqual(await balance(api, 'EUR'), { available: '1000000.00', held: '0.00' });
    assert.deepEqual(
      (await eventsOf(t, payout.id)).map((event) => [event.code, event.previous]),
      [
        ['payout.created', null],
        ['payout.cancelled', 'pending'],
      ],
    );
    const twice = await api.post(`${PAYOUTS}/${payout.id}/cancel`);
    expectStatus(twice, 400);
    assert.equal(errorBody(twice.body).code, 'INVALID_STATE');
    assert.match(errorBody(twice.body).error, /cancelled/);
  });

  it('cancels a pending payout whose hand-off a worker has claimed, without a deadlock; the hand-off then does nothing', async () => {
    await jobs?.stop();
    jobs = undefined;
    const api = await organisation();
    const ben = await beneficiary(t, api);
    const payout = (
      await api.post(PAYOUTS, { beneficiary_id: ben, currency: 'EUR', amount: '10.00' })
    ).json() as PayoutJson;
    // A worker's job transaction has taken the hand-off job (its row locked by the job's delete) and
    // has not reached the payout yet.
    const worker = await t.db.pool.connect();
    try {
      await worker.query('BEGIN');
      const claimed = await worker.query<{ id: number }>(
        'SELECT id FROM jobs WHERE dedupe_key = $1 FOR UPDATE SKIP LOCKED',
        [`${HAND_OFF_KIND}:${payout.id}`],
      );
      assert.equal(claimed.rowCount, 1);
      // The cancel either answers or waits for a lock; then the worker's hand-off locks the payout.
      const answer = await sendAgainstLocks(
        t.db.pool,
        () => api.post(`${PAYOUTS}/${payout.id}/cancel`),
        'the cancel',
      );
      await handOff(worker, t.deps, payout.id);
      await worker.query('DELETE FROM jobs WHERE id = $1', [claimed.rows[0]!.id]);
      await worker.query('COMMIT');
      expectStatus(await answer(), 200);
    } finally {
      await worker.query('ROLLBACK').catch(() => {});
      worker.release();
    }
    assert.equal((await payoutOf(api, payout.id)).status, 'cancelled');
    assert.equal(
      (await t.db.pool.query('SELECT 1 FROM payout_hand_offs WHERE payout_id = $1', [payout.id])).rowCount,
      0,
    );
    assert.deepEqual(await balance(api, 'EUR'), { available: '1000000.00', held: '0.00' });
    assert.deepEqual(
      (await eventsOf(t, payout.id)).map((event) => [event.code, event.previous]),
      [
        ['payout.created', null],
        ['payout.cancelled', 'pending'],
      ],
    );
  });

  it("runs each job in a transaction of its own: a job's locks never wait on the next, so a cancel meeting them does not deadlock", async () => {
    await jobs?.stop();
    jobs = undefined;
    const api = await organisation();
    const ben = await beneficiary(t, api);
    const create = async () =>
      (
        await api.post(PAYOUTS, { beneficiary_id: ben, currency: 'EUR', amount: '10.00' })
      ).json() as PayoutJson;
    const first = await create();
    const second = await create();
    // The first is with its rail, its completion due; a job that pauses comes next, then the second's hand-off.
    await withTransaction(t.db.pool, async (tx) => {
      await tx.query('DELETE FROM jobs WHERE dedupe_key = $1', [`${HAND_OFF_KIND}:${first.id}`]);
      await handOff(tx, t.deps, first.id);
    });
    await t.db.pool.query(
      `UPDATE jobs SET run_at = now() - interval '3 seconds' WHERE payload->>'payout_id' = $1`,
      [first.id],
    );
    await t.db.pool.query(
      `INSERT INTO jobs (kind, payload, run_at) VALUES ('test.pause', '{}', now() - interval '2 seconds')`,
    );
    await t.db.pool.query(`UPDATE jobs SET run_at = now() - interval '1 second' WHERE dedupe_key = $1`, [
      `${HAND_OFF_KIND}:${second.id}`,
    ]);
    let paused = false;
    let resume = () => {};
    const resumed = new Promise<void>((resolve) => {
      resume = resolve;
    });
    const runner = startJobRunner(
      { ...t.deps, config: { ...t.deps.config, jobConcurrency: 1 } },
      pino({ level: 'silent' }),
      {
        listen: false,
        maxIdleMs: 50,
        handlers: {
          'test.pause': async () => {
            paused = true;
            await resumed;
          },
        },
      },
    );
    try {
      await waitUntil(() => paused, 'the pausing job runs', 10_000);
      // The first payout's completion has moved the organisation's held balance. The client cancels the
      // second payout, which moves that balance too.
      const answer = await sendAgainstLocks(
        t.db.pool,
        () => api.post(`${PAYOUTS}/${second.id}/cancel`),
        'the cancel',
      );
      resume();
      expectStatus(await answer(), 200);
      await settled(api, first.id, 'completed');
      await waitUntil(
        async () => (await t.db.pool.query('SELECT 1 FROM jobs WHERE run_at <= now()')).rowCount === 0,
        'nothing due',
        10_000,
      );
    } finally {
      resume();
      await runner.stop();
    }
    assert.equal((await payoutOf(api, second.id)).status, 'cancelled');
    assert.deepEqual(await balance(api, 'EUR'), { available: '999990.00', held: '0.00' });
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
  });

  it("refuses to cancel a transfer's payout leg, even while pending: the transfer owns it (D20)", async () => {
    await jobs?.stop();
    jobs = undefined;
    const api = await organisation();
    const ben = await beneficiary(t, api);
    const quote = await api.post('/api/v1/transfers/quotes', {
      corridor_id: 'cor_0000SANDBX0000000000000001',
      source_amount: '100.00',
    });
    expectStatus(quote, 201);
    const confirmed = await api.post(`/api/v1/transfers/quotes/${quote.json().id}/confirm`, {
      beneficiary_id: ben,
      funding_method: 'balance',
    });
    expectStatus(confirmed, 201);
    const transfer = confirmed.json() as { id: string; payout: PayoutJson };
    assert.equal(transfer.payout.status, 'pending');
    const cancel = await api.post(`${PAYOUTS}/${transfer.payout.id}/cancel`);
    expectStatus(cancel, 400);
    assert.equal(errorBody(cancel.body).code, 'INVALID_STATE');
    assert.match(errorBody(cancel.body).error, /pending.*transfer/);
    // Nothing moved: the leg still goes to its rail, and the transfer completes with it.
    assert.equal((await payoutOf(api, transfer.payout.id)).status, 'pending');
    assert.deepEqual(await eventsOf(t, transfer.payout.id), [
      { code: 'payout.created', previous: null, status: 'pending' },
    ]);
    startJobs();
    await settled(api, transfer.payout.id, 'completed');
    await waitUntil(
      async () => (await api.get(`/api/v1/transfers/${transfer.id}`)).json().status === 'completed',
      'transfer completed',
      10_000,
    );
    assert.deepEqual(await balance(api, 'USD'), { available: '999900.00', held: '0.00' });
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
  });

  it('refuses a payout beyond the balance with 400 INSUFFICIENT_FUNDS and leaves nothing behind', async () => {
    const api = await organisation();
    const ben = await beneficiary(t, api);
    const refused = await api.post(PAYOUTS, {
      beneficiary_id: ben,
      currency: 'EUR',
      amount: '1000000.01',
      external_id: 'too-much',
    });
    expectStatus(refused, 400);
    assert.equal(errorBody(refused.body).code, 'INSUFFICIENT_FUNDS');
    const left = await t.db.pool.query('SELECT 1 FROM payouts WHERE organisation_id = $1', [
      api.tenant.organisationId,
    ]);
    assert.equal(left.rowCount, 0);
    const events = await t.db.pool.query(
      "SELECT 1 FROM webhook_events WHERE organisation_id = $1 AND source_object_type = 'payout'",
      [api.tenant.organisationId],
    );
    assert.equal(events.rowCount, 0);
    assert.deepEqual(await balance(api, 'EUR'), { available: '1000000.00', held: '0.00' });
    // Nothing was kept: the same external_id is free.
    expectStatus(
      await api.post(PAYOUTS, {
        beneficiary_id: ben,
        currency: 'EUR',
        amount: '1.00',
        external_id: 'too-much',
      }),
      201,
    );
  });

  it('never overdraws one balance under 30 concurrent payouts', async () => {
    // No worker: the payouts stay pending with their amounts held, whatever the earlier tests left running.
    await jobs?.stop();
    jobs = undefined;
    const api = await organisation();
    expectStatus(await api.post('/api/v1/sandbox/balances/top-up', { currency: 'JPY', amount: '1000' }), 200);
    const ben = await beneficiary(t, api, 'JP00000000000001234', 'JPY');
    const responses = await Promise.all(
      Array.from({ length: 30 }, () =>
        api.post(PAYOUTS, { beneficiary_id: ben, currency: 'JPY', amount: '100' }),
      ),
    );
    const statuses = responses.map((response) => response.statusCode).sort();
    assert.deepEqual(statuses, [...Array(10).fill(201), ...Array(20).fill(400)]);
    assert.deepEqual(await balance(api, 'JPY'), { available: '0', held: '1000' });
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
  });

  it('checks the beneficiary and the amount: 404 or 422 naming the field, 400 BENEFICIARY_NOT_ACTIVE, 409 external_id', async () => {
    const api = await organisation();
    const ben = await beneficiary(t, api);
    const blocked = await beneficiary(t, api, 'DE89370400440532013000', 'EUR', 'blocked');
    const cases: [unknown, number, string, string | undefined][] = [
      [
        { beneficiary_id: 'ben_unknown', currency: 'EUR', amount: '1.00' },
        404,
        'NOT_FOUND',
        'beneficiary_id',
      ],
      [{ beneficiary_id: ben, currency: 'GBP', amount: '1.00' }, 422, 'VALIDATION_FAILED', 'currency'],
      [{ beneficiary_id: ben, currency: 'EUR', amount: '1.001' }, 422, 'VALIDATION_FAILED', 'amount'],
      [{ beneficiary_id: ben, currency: 'EUR', amount: '0.00' }, 422, 'VALIDATION_FAILED', 'amount'],
      [{ beneficiary_id: ben, currency: 'EUR' }, 422, 'VALIDATION_FAILED', 'amount'],
      [
        { beneficiary_id: blocked, currency: 'EUR', amount: '1.00' },
        400,
        'BENEFICIARY_NOT_ACTIVE',
        undefined,
      ],
    ];
    for (const [body, status, code, field] of cases) {
      const response = await api.post(PAYOUTS, body);
      assert.equal(response.statusCode, status, JSON.stringify(body));
      const error = errorBody(response.body);
      assert.equal(error.code, code);
      assert.equal(error.field, field);
    }
    expectStatus(
      await api.post(PAYOUTS, { beneficiary_id: ben, currency: 'EUR', amount: '1.00', external_id: 'x-1' }),
      201,
    );
    const duplicate = await api.post(PAYOUTS, {
      beneficiary_id: ben,
      currency: 'EUR',
      amount: '1.00',
      external_id: 'x-1',
    });
    expectStatus(duplicate, 409);
    assert.equal(errorBody(duplicate.body).field, undefined);
  });

  it('keeps organisations apart: another organisation’s payout is 404, and its beneficiaries unknown', async () => {
    const mine = await organisation();
    const theirs = await organisation();
    const ben = await beneficiary(t, mine);
    const payout = (
      await mine.post(PAYOUTS, { beneficiary_id: ben, currency: 'EUR', amount: '1.00' })
    ).json() as PayoutJson;
    expectStatus(await theirs.get(`${PAYOUTS}/${payout.id}`), 404);
    expectStatus(await theirs.post(`${PAYOUTS}/${payout.id}/cancel`), 404);
    const borrowed = await theirs.post(PAYOUTS, { beneficiary_id: ben, currency: 'EUR', amount: '1.00' });
    expectStatus(borrowed, 404);
    assert.deepEqual(
      [errorBody(borrowed.body).code, errorBody(borrowed.body).field, errorBody(borrowed.body).error],
      ['NOT_FOUND', 'beneficiary_id', 'No beneficiary of the organisation matches beneficiary_id'],
    );
    const page = (await theirs.post(`${PAYOUTS}/search`, {})).json() as { total: number };
    assert.equal(page.total, 0);
  });

  it('searches payouts by status and beneficiary (D4)', async () => {
    const api = await organisation();
    const a = await beneficiary(t, api);
    const b = await beneficiary(t, api);
    await api.post(PAYOUTS, { beneficiary_id: a, currency: 'EUR', amount: '1.00' });
    await api.post(PAYOUTS, { beneficiary_id: b, currency: 'EUR', amount: '2.00' });
    const byBeneficiary = (
      await api.post(`${PAYOUTS}/search`, { filters: { beneficiary_id: [b] } })
    ).json() as {
      total: number;
      items: PayoutJson[];
    };
    assert.equal(byBeneficiary.total, 1);
    assert.equal(byBeneficiary.items[0]!.amount, '2.00');
    const bad = await api.post(`${PAYOUTS}/search`, { filters: { status: ['paid'] } });
    assert.equal(errorBody(bad.body).field, 'filters.status[0]');
  });
});

describe('payouts on the sandbox rail with a step delay (D21, D24)', () => {
  const STEP_MS = 60_000;
  let t: TestApp;
  let jobs: JobRunner;
  before(async () => {
    t = await startTestApp({
      env: { SANDBOX_STEP_DELAY_MS: String(STEP_MS) },
      extraAreas: [testBeneficiaries],
    });
    await createBeneficiaryTable(t);
    jobs = runJobs(t);
  });
  after(async () => {
    await jobs.stop();
    await t.close();
  });
  /** Milliseconds from now until the payout's hand-off is due. */
  const handOffDueIn = async (payoutId: string) =>
    (
      await t.db.pool.query<{ ms: number }>(
        `SELECT (extract(epoch FROM run_at - now()) * 1000)::int AS ms FROM jobs WHERE dedupe_key = $1`,
        [`${HAND_OFF_KIND}:${payoutId}`],
      )
    ).rows.map((row) => row.ms);

  it('keeps a payout of its own pending for one step, so that its cancel can be tried; a transfer leg goes at once', async () => {
    const api = apiClient(t, await t.tenant());
    const ben = await beneficiary(t, api);
    const created = await api.post(PAYOUTS, { beneficiary_id: ben, currency: 'EUR', amount: '10.00' });
    expectStatus(created, 201);
    const payout = created.json() as PayoutJson;
    const [due] = await handOffDueIn(payout.id);
    assert.ok(due !== undefined && due > STEP_MS - 10_000 && due <= STEP_MS, `hand-off due in ${due} ms`);
    const cancelled = await api.post(`${PAYOUTS}/${payout.id}/cancel`);
    expectStatus(cancelled, 200);
    assert.equal(cancelled.json().status, 'cancelled');
    assert.deepEqual(await handOffDueIn(payout.id), []);
    assert.deepEqual(await balance(api, 'EUR'), { available: '1000000.00', held: '0.00' });

    const quote = await api.post('/api/v1/transfers/quotes', {
      corridor_id: 'cor_0000SANDBX0000000000000001',
      source_amount: '100.00',
    });
    expectStatus(quote, 201);
    const transfer = await api.post(`/api/v1/transfers/quotes/${quote.json().id}/confirm`, {
      beneficiary_id: ben,
      funding_method: 'balance',
    });
    expectStatus(transfer, 201);
    const leg = transfer.json().payout as PayoutJson;
    await waitUntil(
      async () => (await handOffDueIn(leg.id)).length === 0,
      'the leg handed off at once',
      10_000,
    );
    assert.equal((await api.get(`${PAYOUTS}/${leg.id}`)).json().status, 'processing');
  });
});

describe('payouts on the manual rail (D21)', () => {
  let t: TestApp;
  let jobs: JobRunner;
  before(async () => {
    t = await startTestApp({ env: { PAYMENT_CONNECTOR: 'manual' }, extraAreas: [testBeneficiaries] });
    await createBeneficiaryTable(t);
    jobs = runJobs(t);
  });
  after(async () => {
    await jobs.stop();
    await t.close();
  });
  const admin = (method: 'GET' | 'POST', url: string, body?: unknown) =>
    t.app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${TEST_ADMIN_KEY}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });

  it('waits in processing for the operator, who completes or fails it', async () => {
    const api = apiClient(t, await t.tenant());
    const ben = await beneficiary(t, api);
    const one = (
      await api.post(PAYOUTS, { beneficiary_id: ben, currency: 'EUR', amount: '30.00' })
    ).json() as PayoutJson;
    const two = (
      await api.post(PAYOUTS, { beneficiary_id: ben, currency: 'EUR', amount: '40.00' })
    ).json() as PayoutJson;
    await waitUntil(async () => {
      const waiting = (await admin('GET', '/admin/v1/payouts/waiting')).json() as PayoutJson[];
      return [one.id, two.id].every((id) => waiting.some((payout) => payout.id === id));
    }, 'condition');
    const done = await admin('POST', `/admin/v1/payouts/${one.id}/complete`);
    expectStatus(done, 200);
    assert.equal(done.json().status, 'completed');
    // D21: the operator says why the bank refused it.
    for (const body of [undefined, {}, { failure_reason: 'returned_by_mistake' }]) {
      const refused = await admin('POST', `/admin/v1/payouts/${two.id}/fail`, body);
      expectStatus(refused, 422);
      assert.equal(errorBody(refused.body).field, 'failure_reason');
    }
    const failed = await admin('POST', `/admin/v1/payouts/${two.id}/fail`, {
      failure_reason: 'account_closed',
    });
    expectStatus(failed, 200);
    assert.equal(failed.json().failure_reason, 'account_closed');
    const waiting = (await admin('GET', '/admin/v1/payouts/waiting')).json() as PayoutJson[];
    assert.ok(!waiting.some((payout) => payout.id === one.id || payout.id === two.id));
    assert.deepEqual(await balance(api, 'EUR'), { available: '999970.00', held: '0.00' });
    /** What the manual rail's account holds of the payout: paid out, or back again. */
    const onRail = async (id: string) =>
      (
        await t.db.pool.query<{ sum: string }>(
          `SELECT sum(e.amount)::text AS sum FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id
           WHERE a.name = 'rail:manual' AND e.resource_id = $1`,
          [id],
        )
      ).rows[0]!.sum;
    assert.equal(await onRail(one.id), '30.00');
    const line = t.logs.lines.find((entry) => entry.includes('"operator_action":"payout.complete"'));
    assert.ok(line?.includes(one.id), 'the operator action is logged with the payout');

    // Days later the bank sends the paid payout back: the operator records the return with its reason.
    const early = await admin('POST', `/admin/v1/payouts/${two.id}/return`, {});
    expectStatus(early, 400);
    assert.equal(errorBody(early.body).code, 'INVALID_STATE');
    const returned = await admin('POST', `/admin/v1/payouts/${one.id}/return`, {
      failure_reason: 'account_closed',
    });
    expectStatus(returned, 200);
    assert.deepEqual(
      [returned.json().status, returned.json().failure_reason],
      ['returned', 'account_closed'],
    );
    assert.deepEqual(await balance(api, 'EUR'), { available: '1000000.00', held: '0.00' });
    assert.equal(await onRail(one.id), '0.00');
    assert.ok(
      t.logs.lines.some(
        (entry) => entry.includes('"operator_action":"payout.return"') && entry.includes(one.id),
      ),
      'the return is logged with the payout',
    );
  });

  /** Creates a payout and waits until the manual rail holds it in processing. */
  async function processingPayout(api: ApiClient, body: Record<string, unknown>): Promise<PayoutJson> {
    const created = await api.post(PAYOUTS, body);
    expectStatus(created, 201);
    const payout = created.json() as PayoutJson;
    await waitUntil(
      async () => (await api.get(`${PAYOUTS}/${payout.id}`)).json().status === 'processing',
      'payout processing',
    );
    return payout;
  }
  const destinationOf = (id: string) => admin('GET', `/admin/v1/payouts/${id}/destination`);
  /** The operator action lines of `payout.destination` written since `from`, with the fields that matter. */
  const destinationLines = (from: number) =>
    t.logs.lines
      .slice(from)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.operator_action === 'payout.destination')
      .map((line) => ({
        payout_id: line.payout_id,
        beneficiary_id: line.beneficiary_id,
        actor: line.actor,
        outcome: line.outcome,
        status: line.status,
        error_code: line.error_code,
      }));

  it("shows the operator where to pay a payout by hand: the beneficiary's account as its own GET answers it", async () => {
    const api = apiClient(t, await t.tenant());
    const iban = await createBeneficiary(api, bodyOf('DE'));
    const us = await createBeneficiary(api, bodyOf('US'));
    const toIban = await processingPayout(api, {
      beneficiary_id: iban.id,
      currency: 'EUR',
      amount: '150.00',
      reference: 'Invoice 42',
    });
    const toUs = await processingPayout(api, { beneficiary_id: us.id, currency: 'USD', amount: '1200.5' });
    const from = t.logs.lines.length;

    const first = await destinationOf(toIban.id);
    expectStatus(first, 200);
    assert.equal(first.headers['cache-control'], 'no-store');
    assert.deepEqual(first.json(), {
      payout_id: toIban.id,
      status: 'processing',
      currency: 'EUR',
      amount: '150.00',
      reference: 'Invoice 42',
      beneficiary: {
        id: iban.id,
        status: 'active',
        blocked: false,
        review_pending: false,
        entity_type: 'individual',
        name: 'Anna Schmidt',
        address: { line1: '1 Main Street', city: 'Berlin', postal_code: '10117', country: 'DE' },
        destination_country: 'DE',
        destination_currency: 'EUR',
        payout_method: 'bank_account',
        account: { iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' },
        bank: { id: iban.bank!.id, name: 'Commerzbank', bic: 'COBADEFF' },
      },
    });
    const second = await destinationOf(toUs.id);
    expectStatus(second, 200);
    assert.deepEqual(second.json(), {
      payout_id: toUs.id,
      status: 'processing',
      currency: 'USD',
      amount: '1200.50',
      reference: null,
      beneficiary: {
        id: us.id,
        status: 'active',
        blocked: false,
        review_pending: false,
        entity_type: 'business',
        name: 'Acme Widgets LLC',
        address: { line1: '1 Main Street', city: 'New York', postal_code: '10117', country: 'US' },
        destination_country: 'US',
        destination_currency: 'USD',
        payout_method: 'bank_account',
        account: { account_number: '000123456789', routing_number: '021000021', account_type: 'checking' },
        bank: { id: us.bank!.id, name: 'JPMorgan Chase Bank', bic: 'CHASUS33' },
      },
    });
    // The same account, address and bank as the organisation reads them.
    for (const [payout, ben] of [
      [first, iban],
      [second, us],
    ] as const) {
      const read = (await api.get(`${BENEFICIARIES}/${ben.id}`)).json() as BeneficiaryJson;
      const shown = payout.json().beneficiary as BeneficiaryJson;
      assert.deepEqual([shown.account, shown.address, shown.bank], [read.account, read.address, read.bank]);
    }

    // Each read is an operator action, logged with the payout and the beneficiary and never the account.
    const actor = { credential: 'ADMIN_API_KEY', address: '127.0.0.1' };
    assert.deepEqual(destinationLines(from), [
      {
        payout_id: toIban.id,
        beneficiary_id: iban.id,
        actor,
        outcome: 'succeeded',
        status: 200,
        error_code: undefined,
      },
      {
        payout_id: toUs.id,
        beneficiary_id: us.id,
        actor,
        outcome: 'succeeded',
        status: 200,
        error_code: undefined,
      },
    ]);
    const logged = t.logs.lines.slice(from).join('\n');
    for (const secret of ['DE89370400440532013000', '000123456789', '021000021'])
      assert.ok(!logged.includes(secret), `${secret} is not logged`);
  });

  it('is 404 for an unknown or malformed payout id and 401 without the admin credential, each logged', async () => {
    const api = apiClient(t, await t.tenant());
    const ben = await createBeneficiary(api, bodyOf('DE'));
    const payout = await processingPayout(api, { beneficiary_id: ben.id, currency: 'EUR', amount: '5.00' });
    const from = t.logs.lines.length;
    const unknown = 'pyt_00000000000000000000000000';
    for (const id of [unknown, 'not-a-payout', ben.id]) {
      const response = await destinationOf(id);
      expectStatus(response, 404);
      assert.deepEqual(
        [errorBody(response.body).code, errorBody(response.body).error],
        ['NOT_FOUND', 'No payout matches the id'],
      );
    }
    for (const headers of [{}, { authorization: 'Bearer wrong-admin-key' }, api.tenant.auth]) {
      const response = await t.app.inject({
        method: 'GET',
        url: `/admin/v1/payouts/${payout.id}/destination`,
        headers,
      });
      expectStatus(response, 401);
      assert.equal(errorBody(response.body).code, 'UNAUTHORIZED');
      assert.ok(!response.body.includes('DE89370400440532013000'));
    }
    const actor = { credential: 'ADMIN_API_KEY', address: '127.0.0.1' };
    const nobody = { credential: 'none', address: '127.0.0.1' };
    const refused = (id: string, who: typeof actor, status: number, code: string) => ({
      payout_id: id,
      beneficiary_id: undefined,
      actor: who,
      outcome: 'refused',
      status,
      error_code: code,
    });
    assert.deepEqual(destinationLines(from), [
      refused(unknown, actor, 404, 'NOT_FOUND'),
      refused('not-a-payout', actor, 404, 'NOT_FOUND'),
      refused(ben.id, actor, 404, 'NOT_FOUND'),
      refused(payout.id, nobody, 401, 'UNAUTHORIZED'),
      refused(payout.id, nobody, 401, 'UNAUTHORIZED'),
      refused(payout.id, nobody, 401, 'UNAUTHORIZED'),
    ]);
  });

  it('tells the operator not to pay a name that waits for its review or that a review confirmed, also once deleted', async () => {
    const api = apiClient(t, await t.tenant());
    const ben = await createBeneficiary(api, bodyOf('DE'));
    const payout = await processingPayout(api, { beneficiary_id: ben.id, currency: 'EUR', amount: '75.00' });
    const flags = async () => {
      const response = await destinationOf(payout.id);
      expectStatus(response, 200);
      const { status, blocked, review_pending } = response.json().beneficiary;
      return [status, blocked, review_pending];
    };
    assert.deepEqual(await flags(), ['active', false, false]);
    const renamed = await api.patch(`${BENEFICIARIES}/${ben.id}`, { name: 'Paula Sanctioned' });
    expectStatus(renamed, 200);
    assert.deepEqual(await flags(), ['in_review', false, true]);
    expectStatus(await api.del(`${BENEFICIARIES}/${ben.id}`), 200);
    assert.deepEqual(await flags(), ['deleted', false, true]);
    expectStatus(
      await api.post(`/api/v1/sandbox/screenings/${renamed.json().screening_id}/review`, {
        decision: 'confirmed_match',
      }),
      200,
    );
    assert.deepEqual(await flags(), ['deleted', true, false]);
  });

  it("still shows a deleted beneficiary's destination: a transfer's payout leg is paid after the delete (D19, D20)", async () => {
    const api = apiClient(t, await t.tenant());
    const ben = await createBeneficiary(api, bodyOf('DE'));
    const quote = await api.post('/api/v1/transfers/quotes', {
      corridor_id: 'cor_0000SANDBX0000000000000001',
      source_amount: '1000.00',
    });
    expectStatus(quote, 201);
    const confirmed = await api.post(`/api/v1/transfers/quotes/${quote.json().id}/confirm`, {
      beneficiary_id: ben.id,
      funding_method: 'balance',
      reference: 'Rent',
    });
    expectStatus(confirmed, 201);
    const transfer = confirmed.json() as { id: string; payout: PayoutJson };
    expectStatus(await api.del(`${BENEFICIARIES}/${ben.id}`), 200);
    await waitUntil(
      async () => (await api.get(`${PAYOUTS}/${transfer.payout.id}`)).json().status === 'processing',
      'payout leg processing',
    );

    const response = await destinationOf(transfer.payout.id);
    expectStatus(response, 200);
    assert.deepEqual(response.json(), {
      payout_id: transfer.payout.id,
      status: 'processing',
      currency: 'EUR',
      amount: '911.27',
      reference: 'Rent',
      beneficiary: {
        id: ben.id,
        status: 'deleted',
        blocked: false,
        review_pending: false,
        entity_type: 'individual',
        name: 'Anna Schmidt',
        address: { line1: '1 Main Street', city: 'Berlin', postal_code: '10117', country: 'DE' },
        destination_country: 'DE',
        destination_currency: 'EUR',
        payout_method: 'bank_account',
        account: { iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' },
        bank: { id: ben.bank!.id, name: 'Commerzbank', bic: 'COBADEFF' },
      },
    });
    // Paid by hand, the leg completes and so does its transfer.
    expectStatus(await admin('POST', `/admin/v1/payouts/${transfer.payout.id}/complete`), 200);
    await waitUntil(
      async () => (await api.get(`/api/v1/transfers/${transfer.id}`)).json().status === 'completed',
      'transfer completed',
    );
  });

  it('logs an operator action whose client hung up before the answer: the action took effect all the same', async () => {
    const api = apiClient(t, await t.tenant());
    const ben = await createBeneficiary(api, bodyOf('DE'));
    const payout = await processingPayout(api, { beneficiary_id: ben.id, currency: 'EUR', amount: '7.00' });
    const address = new URL(await t.app.listen({ port: 0, host: '127.0.0.1' }));
    const from = t.logs.lines.length;
    // The whole request, and the connection closed right after it: the server still runs the action.
    const socket = net.connect(Number(address.port), address.hostname);
    socket.on('error', () => {});
    await once(socket, 'connect');
    socket.end(
      `POST /admin/v1/payouts/${payout.id}/complete HTTP/1.1\r\nHost: ${address.host}\r\n` +
        `Authorization: Bearer ${TEST_ADMIN_KEY}\r\nContent-Length: 0\r\n\r\n`,
    );
    await waitUntil(
      async () => (await api.get(`${PAYOUTS}/${payout.id}`)).json().status === 'completed',
      'the payout completed',
    );
    const lines = await waitUntil(
      () => {
        const found = t.logs.lines
          .slice(from)
          .map((line) => JSON.parse(line) as Record<string, unknown>)
          .filter((line) => line.operator_action === 'payout.complete');
        return found.length > 0 ? found : undefined;
      },
      'the operator action line of the completed payout',
      3_000,
    );
    assert.deepEqual(
      lines.map((line) => [line.payout_id, line.actor, line.outcome, line.status, line.error_code]),
      [[payout.id, { credential: 'ADMIN_API_KEY', address: '127.0.0.1' }, 'succeeded', 200, undefined]],
    );
  });
});
