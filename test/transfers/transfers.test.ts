// Transfers (D20) through the real app, the real job runner and the sandbox rail: every state transition
// with its balances, ledger entries and events checked.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as ledger from '../../src/balances/ledger.ts';
import { ledgerViolations } from '../../src/balances/repository.ts';
import { withTransaction } from '../../src/db/pool.ts';
import { creditDeposit } from '../../src/payments/deposits.ts';
import { lockDeposit } from '../../src/payments/repository.ts';
import type { JobRunner } from '../../src/platform/jobs/runner.ts';
import { Decimal } from '../../src/platform/money.ts';
import { errorBody, startTestApp, TEST_ADMIN_KEY, type TestApp } from '../helpers/app.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';
import { sendAgainstLocks, waitUntil } from '../helpers/wait.ts';
import {
  balance,
  beneficiary,
  createBeneficiaryTable,
  eventsOf,
  expectStatus,
  runJobs,
  testBeneficiaries,
  transactionsOf,
} from '../payments/fixtures.ts';
import { activeSubscription, client } from '../webhooks/fixtures.ts';

const QUOTES = '/api/v1/transfers/quotes';
const TRANSFERS = '/api/v1/transfers';
const USD_EUR = 'cor_0000SANDBX0000000000000001';

interface TransferJson {
  id: string;
  status: string;
  status_reason: string | null;
  source_amount: string;
  fee_amount: string;
  destination_amount: string;
  deposit_instructions: Record<string, unknown> | null;
  deposit: {
    id: string;
    status: string;
    received_amount: string | null;
    instructions: Record<string, unknown>;
  } | null;
  payout: {
    id: string;
    status: string;
    amount: string;
    currency: string;
    updated_at: string;
    completed_at: string | null;
  } | null;
  screening_id: string | null;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
}

/**
 * A describe's app on a database of its own, with the test beneficiaries and the job runner (the sandbox
 * rail without step delay), started before its tests and stopped after them.
 */
function useTransfersApp(started: (t: TestApp) => void): void {
  let t: TestApp;
  let jobs: JobRunner;
  before(async () => {
    t = await startTestApp({ env: { SANDBOX_STEP_DELAY_MS: '0' }, extraAreas: [testBeneficiaries] });
    await createBeneficiaryTable(t);
    jobs = runJobs(t);
    started(t);
  });
  after(async () => {
    await jobs.stop();
    await t.close();
  });
}

/** The manual rail's record of a bank transfer that arrived (D21), as the operator API takes it. */
const operatorReceive = (t: TestApp, depositId: string, amount: string) =>
  t.app.inject({
    method: 'POST',
    url: `/admin/v1/deposits/${depositId}/receive`,
    headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ amount }),
  });

describe('transfers (D20)', () => {
  let t: TestApp;
  useTransfersApp((app) => {
    t = app;
  });

  async function organisation(): Promise<ApiClient> {
    const tenant = await t.tenant();
    await activeSubscription(client(t, tenant), {
      event_type_codes: [
        'transfer.created',
        'transfer.processing',
        'transfer.completed',
        'transfer.refunding',
        'transfer.refunded',
        'transfer.rejected',
        'transfer.cancelled',
        'transfer.expired',
        'transfer.in_review',
      ],
    });
    return apiClient(t, tenant);
  }
  const quote = async (api: ApiClient, sourceAmount = '1000.00') => {
    const response = await api.post(QUOTES, { corridor_id: USD_EUR, source_amount: sourceAmount });
    assert.equal(response.statusCode, 201, response.body);
    return response.json() as { id: string };
  };
  const confirm = async (api: ApiClient, quoteId: string, body: Record<string, unknown>) =>
    api.post(`${QUOTES}/${quoteId}/confirm`, body);
  /** A transfer of 1,000.00 USD to `ben`, confirmed with bank_transfer funding: awaiting its deposit. */
  const awaitingDeposit = async (api: ApiClient, ben: string) =>
    (
      await confirm(api, (await quote(api)).id, { beneficiary_id: ben, funding_method: 'bank_transfer' })
    ).json() as TransferJson;
  const transferOf = async (api: ApiClient, id: string) =>
    (await api.get(`${TRANSFERS}/${id}`)).json() as TransferJson;
  const reaches = (api: ApiClient, id: string, status: string) =>
    waitUntil(async () => (await transferOf(api, id)).status === status, `transfer ${status}`, 10_000);
  const quoteTimers = async (quoteId: string) =>
    (
      await t.db.pool.query<{ kind: string }>("SELECT kind FROM jobs WHERE payload->>'quote_id' = $1", [
        quoteId,
      ])
    ).rows.map((row) => row.kind);
  const codes = async (id: string) => (await eventsOf(t, id)).map((event) => [event.code, event.previous]);

  it('sends a balance-funded transfer from confirm to completed without another call', async () => {
    const api = await organisation();
    const ben = await beneficiary(t, api);
    const q = await quote(api);
    const response = await confirm(api, q.id, {
      beneficiary_id: ben,
      funding_method: 'balance',
      reference: 'Rent',
      purpose: 'family_support',
    });
    assert.equal(response.statusCode, 201, response.body);
    const transfer = response.json() as TransferJson;
    assert.match(transfer.id, /^trf_[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.equal(transfer.status, 'processing');
    assert.equal(transfer.deposit, null);
    assert.equal(transfer.deposit_instructions, null);
    assert.equal(transfer.expires_at, null, 'funded at confirm: no funding deadline');
    assert.deepEqual(await quoteTimers(q.id), [], "the accepted quote's expiry timer went with it");
    assert.deepEqual(
      { amount: transfer.payout?.amount, currency: transfer.payout?.currency },
      { amount: '911.27', currency: 'EUR' },
    );
    await reaches(api, transfer.id, 'completed');
    const done = await transferOf(api, transfer.id);
    assert.equal(done.payout?.status, 'completed');
    assert.ok(done.completed_at !== null);
    assert.ok(
      Date.parse(done.updated_at) >= Date.parse(done.completed_at!),
      'updated_at is not before completed_at',
    );
    assert.ok(
      Date.parse(done.payout!.updated_at) >= Date.parse(done.payout!.completed_at!),
      "the payout's too",
    );
    assert.deepEqual(await balance(api, 'USD'), { available: '999000.00', held: '0.00' });
    assert.deepEqual(
      (await transactionsOf(api, transfer.id)).map((entry) => [
        entry.type,
        entry.amount,
        entry.balance_after,
      ]),
      [
        ['transfer_funding', '-994.00', '999006.00'],
        ['fee', '-6.00', '999000.00'],
      ],
    );
    assert.deepEqual(await codes(transfer.id), [
      ['transfer.created', null],
      ['transfer.processing', null],
      ['transfer.completed', 'processing'],
    ]);
    assert.equal((await api.get(`${QUOTES}/${q.id}`)).json().status, 'accepted');
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
  });

  it('refunds the source amount when the payout fails (account ending 1111)', async () => {
    const api = await organisation();
    const ben = await beneficiary(t, api, 'DE00000000000000001111');
    const transfer = (
      await confirm(api, (await quote(api)).id, { beneficiary_id: ben, funding_method: 'balance' })
    ).json() as TransferJson;
    await reaches(api, transfer.id, 'refunded');
    const final = await transferOf(api, transfer.id);
    assert.equal(final.payout?.status, 'failed');
    assert.match(final.status_reason ?? '', /account_closed/);
    assert.deepEqual(await balance(api, 'USD'), { available: '1000000.00', held: '0.00' });
    assert.deepEqual(await codes(transfer.id), [
      ['transfer.created', null],
      ['transfer.processing', null],
      ['transfer.refunding', 'processing'],
      ['transfer.refunded', 'refunding'],
    ]);
    assert.deepEqual(
      (await transactionsOf(api, transfer.id)).map((entry) => [entry.type, entry.amount]),
      [
        ['transfer_funding', '-994.00'],
        ['fee', '-6.00'],
        ['transfer_refund', '994.00'],
        ['transfer_refund', '6.00'],
      ],
    );
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
  });

  it('refunds a completed transfer whose payout is returned (account ending 3333)', async () => {
    const api = await organisation();
    const ben = await beneficiary(t, api, 'DE00000000000000003333');
    const transfer = (
      await confirm(api, (await quote(api, '100.00')).id, { beneficiary_id: ben, funding_method: 'balance' })
    ).json() as TransferJson;
    await reaches(api, transfer.id, 'refunded');
    assert.deepEqual(await codes(transfer.id), [
      ['transfer.created', null],
      ['transfer.processing', null],
      ['transfer.completed', 'processing'],
      ['transfer.refunding', 'completed'],
      ['transfer.refunded', 'refunding'],
    ]);
    assert.deepEqual(await balance(api, 'USD'), { available: '1000000.00', held: '0.00' });
  });

  it('waits for a bank transfer, and a deposit of the amount funds it', async () => {
    const api = await organisation();
    const ben = await beneficiary(t, api);
    const transfer = await awaitingDeposit(api, ben);
    assert.equal(transfer.status, 'awaiting_deposit');
    // TRANSFER_FUNDING_TTL_SECONDS (86400) after confirm; created_at is the transaction's start, a moment earlier.
    const window = Date.parse(transfer.expires_at!) - Date.parse(transfer.created_at);
    assert.ok(window >= 86_400_000 && window < 86_401_000, `expires ${window} ms after created_at`);
    assert.equal(transfer.payout, null);
    assert.equal(transfer.deposit?.status, 'pending');
    assert.equal(transfer.deposit_instructions?.type, 'bank_transfer');
    assert.equal(transfer.deposit_instructions?.amount, '1000.00');
    assert.match(String(transfer.deposit_instructions?.reference), /^PSD/);
    // The instructions are the deposit's, written as the deposit writes them (the same keys in the same order).
    assert.deepEqual(transfer.deposit_instructions, transfer.deposit?.instructions);
    assert.deepEqual(
      Object.keys(transfer.deposit_instructions!),
      Object.keys(transfer.deposit!.instructions),
    );
    assert.deepEqual(await balance(api, 'USD'), { available: '1000000.00', held: '0.00' });
    const funded = await api.post(`/api/v1/sandbox/transfers/${transfer.id}/fund`);
    assert.equal(funded.statusCode, 200, funded.body);
    assert.equal((funded.json() as TransferJson).deposit?.status, 'received');
    await reaches(api, transfer.id, 'completed');
    // The deposit came in and went out again: the balance is where it was.
    assert.deepEqual(await balance(api, 'USD'), { available: '1000000.00', held: '0.00' });
    assert.deepEqual(await codes(transfer.id), [
      ['transfer.created', null],
      ['transfer.processing', 'awaiting_deposit'],
      ['transfer.completed', 'processing'],
    ]);
    // A malformed amount is 422 on amount, before the transfer's state is looked at (D5, D14).
    for (const amount of ['1e2', ' 1', '-1', '１']) {
      const malformed = await api.post(`/api/v1/sandbox/transfers/${transfer.id}/fund`, { amount });
      assert.equal(malformed.statusCode, 422, malformed.body);
      assert.deepEqual(
        [errorBody(malformed.body).code, errorBody(malformed.body).field],
        ['VALIDATION_FAILED', 'amount'],
      );
    }
    const late = await api.post(`/api/v1/sandbox/transfers/${transfer.id}/fund`, { amount: '1.00' });
    assert.equal(late.statusCode, 400, late.body);
    assert.equal(errorBody(late.body).code, 'INVALID_STATE');
  });

  it("funds a transfer without a deadlock while its deposit's funds arrive the other way (deposit, then transfer)", async () => {
    const api = await organisation();
    const ben = await beneficiary(t, api);
    const transfer = await awaitingDeposit(api, ben);
    const depositId = transfer.deposit!.id;
    // The funds arrive through the deposit (as POST /api/v1/sandbox/deposits/{id}/receive and the operator's
    // receive do): the deposit is locked first, and the transfer when the credit reaches it.
    const arrival = await t.db.pool.connect();
    let answer: (() => Promise<{ statusCode: number; body: string }>) | undefined;
    try {
      await arrival.query('BEGIN');
      const deposit = (await lockDeposit(arrival, api.tenant.organisationId, depositId))!;
      answer = await sendAgainstLocks(
        t.db.pool,
        () => api.post(`/api/v1/sandbox/transfers/${transfer.id}/fund`),
        'the sandbox funding',
      );
      await creditDeposit(arrival, t.deps, deposit, new Decimal(deposit.expected_amount!));
      await arrival.query('COMMIT');
    } finally {
      await arrival.query('ROLLBACK').catch(() => {});
      arrival.release();
    }
    // The arrival funded it first; the sandbox's funding then finds it funded.
    const funding = await answer!();
    assert.equal(funding.statusCode, 400, funding.body);
    assert.equal(errorBody(funding.body).code, 'INVALID_STATE');
    await reaches(api, transfer.id, 'completed');
    assert.deepEqual(await balance(api, 'USD'), { available: '1000000.00', held: '0.00' });
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
  });

  it('credits an under-payment to the balance and keeps waiting; an over-payment leaves the excess', async () => {
    const api = await organisation();
    const ben = await beneficiary(t, api);
    const transfer = await awaitingDeposit(api, ben);
    const first = transfer.deposit!.id;
    const short = (
      await api.post(`/api/v1/sandbox/transfers/${transfer.id}/fund`, { amount: '400.00' })
    ).json() as TransferJson;
    assert.equal(short.status, 'awaiting_deposit');
    assert.equal(
      short.status_reason,
      `deposit ${first} brought 400.00 USD, less than the source amount; it was credited to the balance`,
    );
    assert.notEqual(short.deposit?.id, first);
    assert.equal(short.deposit?.status, 'pending');
    assert.deepEqual(await balance(api, 'USD'), { available: '1000400.00', held: '0.00' });
    const over = await api.post(`/api/v1/sandbox/transfers/${transfer.id}/fund`, { amount: '1250.00' });
    assert.equal(over.statusCode, 200, over.body);
    await reaches(api, transfer.id, 'completed');
    assert.equal(
      (await transferOf(api, transfer.id)).status_reason,
      null,
      'funded: the reason no longer holds',
    );
    assert.deepEqual(await balance(api, 'USD'), { available: '1000650.00', held: '0.00' });
  });

  it("credits a split payment's second part quoting the first leg's reference; a full payment quoting it funds the transfer", async () => {
    const api = await organisation();
    const ben = await beneficiary(t, api);
    const transfer = await awaitingDeposit(api, ben);
    const first = transfer.deposit!.id;
    const reference = String(transfer.deposit_instructions!.reference);
    const record = (amount: string, bankTransactionId: string) =>
      t.app.inject({
        method: 'POST',
        url: `/admin/v1/deposits/${first}/receive`,
        headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ amount, reference, bank_transaction_id: bankTransactionId }),
      });
    // 400.00 quoting the reference: an under-payment, the transfer waits on a new leg (a new reference).
    expectStatus(await record('400.00', 'SPLIT-1'), 200);
    const waiting = await transferOf(api, transfer.id);
    const current = waiting.deposit!.id;
    assert.notEqual(current, first);
    assert.notEqual(waiting.deposit_instructions!.reference, reference);
    // 600.00 quoting the first reference: credited as a deposit of the transfer's own, still short.
    const rest = await record('600.00', 'SPLIT-2');
    expectStatus(rest, 201);
    const restDeposit = rest.json() as {
      id: string;
      status: string;
      received_amount: string;
      transfer_id: string;
    };
    assert.deepEqual(
      [restDeposit.status, restDeposit.received_amount, restDeposit.transfer_id],
      ['received', '600.00', transfer.id],
    );
    const still = await transferOf(api, transfer.id);
    assert.equal(still.status, 'awaiting_deposit');
    assert.equal(
      still.status_reason,
      `deposit ${restDeposit.id} brought 600.00 USD, less than the source amount; it was credited to the balance`,
    );
    // It keeps waiting on the same leg, which still asks for the full amount.
    assert.deepEqual(still.deposit, waiting.deposit);
    assert.equal(still.deposit_instructions!.amount, '1000.00');
    assert.deepEqual(await balance(api, 'USD'), { available: '1001000.00', held: '0.00' });
    // The payer then pays the full amount, again quoting the first reference: it funds the transfer.
    const full = await record('1000.00', 'SPLIT-3');
    expectStatus(full, 201);
    const fullDeposit = full.json() as { id: string; transfer_id: string };
    assert.equal(fullDeposit.transfer_id, transfer.id);
    await reaches(api, transfer.id, 'completed');
    const completed = await transferOf(api, transfer.id);
    assert.equal(completed.status_reason, null);
    assert.deepEqual(
      [completed.deposit!.id, completed.deposit!.status, completed.deposit!.received_amount],
      [fullDeposit.id, 'received', '1000.00'],
    );
    // The instructions the payer followed: the first leg's reference and amount (D20).
    assert.deepEqual(
      [completed.deposit_instructions!.reference, completed.deposit_instructions!.amount],
      [reference, '1000.00'],
    );
    // The leg it no longer waits on stays open until its own expiry.
    assert.equal((await api.get(`/api/v1/payments/deposits/${current}`)).json().status, 'pending');
    // 400.00 + 600.00 + 1000.00 came in, the source amount went out.
    assert.deepEqual(await balance(api, 'USD'), { available: '1001000.00', held: '0.00' });
    assert.deepEqual(
      (await transactionsOf(api, transfer.id)).map((entry) => [entry.type, entry.amount]),
      [
        ['transfer_funding', '-994.00'],
        ['fee', '-6.00'],
      ],
    );
    assert.deepEqual(await codes(transfer.id), [
      ['transfer.created', null],
      ['transfer.processing', 'awaiting_deposit'],
      ['transfer.completed', 'processing'],
    ]);
    // A retry of the record that funded it credits nothing and leaves the transfer as it is.
    const again = await record('1000.00', 'SPLIT-3');
    expectStatus(again, 200);
    assert.equal(again.json().id, fullDeposit.id);
    assert.deepEqual(await balance(api, 'USD'), { available: '1001000.00', held: '0.00' });
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
  });

  it('credits to the balance a payment quoting the reference of a transfer that no longer waits', async () => {
    const api = await organisation();
    const ben = await beneficiary(t, api);
    const paidTwice = await awaitingDeposit(api, ben);
    const cancelled = await awaitingDeposit(api, ben);
    const record = (depositId: string, amount: string, bankTransactionId: string) =>
      t.app.inject({
        method: 'POST',
        url: `/admin/v1/deposits/${depositId}/receive`,
        headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ amount, bank_transaction_id: bankTransactionId }),
      });
    // Paid, then paid again: the transfer is funded once, the second payment stays on the balance.
    expectStatus(await record(paidTwice.deposit!.id, '1000.00', 'TWICE-1'), 200);
    await reaches(api, paidTwice.id, 'completed');
    const second = await record(paidTwice.deposit!.id, '1000.00', 'TWICE-2');
    expectStatus(second, 201);
    assert.equal(second.json().transfer_id, paidTwice.id);
    // Cancelled, then paid (the leg is still pending: the usual record), then paid again.
    expectStatus(await api.post(`${TRANSFERS}/${cancelled.id}/cancel`), 200);
    expectStatus(await record(cancelled.deposit!.id, '1000.00', 'LATE-1'), 200);
    expectStatus(await record(cancelled.deposit!.id, '250.00', 'LATE-2'), 201);
    for (const [id, status] of [
      [paidTwice.id, 'completed'],
      [cancelled.id, 'cancelled'],
    ] as const) {
      const now = await transferOf(api, id);
      assert.equal(now.status, status);
    }
    assert.equal((await transferOf(api, paidTwice.id)).deposit!.id, paidTwice.deposit!.id);
    assert.deepEqual(await codes(paidTwice.id), [
      ['transfer.created', null],
      ['transfer.processing', 'awaiting_deposit'],
      ['transfer.completed', 'processing'],
    ]);
    assert.deepEqual(await codes(cancelled.id), [
      ['transfer.created', null],
      ['transfer.cancelled', 'awaiting_deposit'],
    ]);
    // 1000.00 twice in and once out for the first; 1000.00 + 250.00 in for the cancelled one.
    assert.deepEqual(await balance(api, 'USD'), { available: '1002250.00', held: '0.00' });
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
  });

  it('cancels a transfer awaiting its deposit, and expires another', async () => {
    const api = await organisation();
    const ben = await beneficiary(t, api);
    const a = await awaitingDeposit(api, ben);
    const cancelled = await api.post(`${TRANSFERS}/${a.id}/cancel`);
    assert.equal(cancelled.statusCode, 200);
    assert.equal(cancelled.json().status, 'cancelled');
    const again = await api.post(`${TRANSFERS}/${a.id}/cancel`);
    assert.equal(errorBody(again.body).code, 'INVALID_STATE');
    const b = await awaitingDeposit(api, ben);
    const expired = await api.post(`/api/v1/sandbox/transfers/${b.id}/expire`);
    assert.equal(expired.json().status, 'expired');
    // It expired now, not at the end of its 24 hours: expires_at says when.
    const expiresAt = expired.json().expires_at as string;
    assert.ok(Date.parse(expiresAt) <= Date.now(), `${expiresAt} is not in the future`);
    assert.deepEqual(await codes(b.id), [
      ['transfer.created', null],
      ['transfer.expired', 'awaiting_deposit'],
    ]);
  });

  it('holds a transfer to a sanctioned name in review; cleared goes on, confirmed rejects and gives the money back', async () => {
    const api = await organisation();
    const admin = (url: string, body: unknown) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
    const ben = await beneficiary(t, api, 'DE89370400440532013000', 'EUR', 'active', 'Sanctioned Person');
    const held = (
      await confirm(api, (await quote(api)).id, { beneficiary_id: ben, funding_method: 'balance' })
    ).json() as TransferJson;
    assert.equal(held.status, 'in_review');
    assert.equal(held.payout, null);
    assert.deepEqual(await balance(api, 'USD'), { available: '999000.00', held: '0.00' });
    const cleared = await admin(`/admin/v1/screenings/${held.screening_id}/review`, {
      decision: 'cleared',
      note: 'a namesake',
    });
    assert.equal(cleared.statusCode, 200, cleared.body);
    await reaches(api, held.id, 'completed');

    const rejected = (
      await confirm(api, (await quote(api)).id, { beneficiary_id: ben, funding_method: 'balance' })
    ).json() as TransferJson;
    const confirmed = await admin(`/admin/v1/screenings/${rejected.screening_id}/review`, {
      decision: 'confirmed_match',
      note: 'listed',
    });
    assert.equal(confirmed.statusCode, 200, confirmed.body);
    const final = await transferOf(api, rejected.id);
    assert.equal(final.status, 'rejected');
    assert.deepEqual(await codes(rejected.id), [
      ['transfer.created', null],
      ['transfer.in_review', null],
      ['transfer.rejected', 'in_review'],
    ]);
    assert.deepEqual(await balance(api, 'USD'), { available: '999000.00', held: '0.00' });
  });

  it('rejects at its review a transfer held in review whose funding the configuration no longer takes', async () => {
    const api = await organisation();
    const ben = await beneficiary(t, api, 'DE89370400440532013000', 'EUR', 'active', 'Sanctioned Person');
    const held = (await awaitingDeposit(api, ben)) as TransferJson;
    assert.equal(held.status, 'in_review');
    assert.equal(held.deposit, null);
    // The service restarts without a USD collection account; the operator then clears the review.
    const restarted = await startTestApp({
      db: t.db,
      env: { DEPOSIT_BANK_ACCOUNTS: '{}' },
      extraAreas: [testBeneficiaries],
    });
    try {
      const cleared = await restarted.app.inject({
        method: 'POST',
        url: `/admin/v1/screenings/${held.screening_id}/review`,
        headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ decision: 'cleared', note: 'a namesake' }),
      });
      assert.equal(cleared.statusCode, 200, cleared.body);
    } finally {
      await restarted.close();
    }
    const final = await transferOf(api, held.id);
    assert.deepEqual(
      [final.status, final.status_reason, final.deposit],
      [
        'rejected',
        'Bank transfers in USD cannot be received (no collection account); fund the transfer another way',
        null,
      ],
    );
    assert.deepEqual(await codes(held.id), [
      ['transfer.created', null],
      ['transfer.in_review', null],
      ['transfer.rejected', 'in_review'],
    ]);
    assert.deepEqual(await balance(api, 'USD'), { available: '1000000.00', held: '0.00' });
  });

  /** The operator's screening review (D18), as the operator API takes it. */
  const review = (screeningId: string | null, decision: 'cleared' | 'confirmed_match') =>
    t.app.inject({
      method: 'POST',
      url: `/admin/v1/screenings/${screeningId}/review`,
      headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ decision, note: 'reviewed' }),
    });
  const receive = (depositId: string, amount: string) => operatorReceive(t, depositId, amount);
  const setBeneficiaryStatus = (id: string, status: 'deleted' | 'blocked') =>
    t.db.pool.query('UPDATE test_beneficiaries SET status = $2 WHERE id = $1', [id, status]);

  it('pays a confirmed transfer to a beneficiary deleted since (D19); one blocked since is rejected, its money credited', async () => {
    const api = await organisation();
    const byBank = async () => {
      const ben = await beneficiary(t, api);
      const transfer = await awaitingDeposit(api, ben);
      return { ben, transfer, deposit: transfer.deposit!.id };
    };
    // Deleted after the confirm: "transfers already confirmed go on".
    const deleted = await byBank();
    await setBeneficiaryStatus(deleted.ben, 'deleted');
    assert.equal((await receive(deleted.deposit, '1000.00')).statusCode, 200);
    await reaches(api, deleted.transfer.id, 'completed');
    // Blocked by a sanctions review after the confirm: the payout would be refused, so the transfer is
    // rejected, and the money that came stays on the balance, a smaller amount as well as the whole.
    for (const amount of ['1000.00', '400.00']) {
      const blocked = await byBank();
      await setBeneficiaryStatus(blocked.ben, 'blocked');
      const received = await receive(blocked.deposit, amount);
      assert.equal(received.statusCode, 200, received.body);
      assert.equal(received.json().status, 'received');
      const final = await transferOf(api, blocked.transfer.id);
      assert.deepEqual(
        [final.status, final.status_reason, final.payout, final.deposit?.id],
        [
          'rejected',
          `the beneficiary was blocked by a sanctions review; deposit ${blocked.deposit} brought ${amount} USD, credited to the balance`,
          null,
          blocked.deposit,
        ],
      );
      assert.deepEqual(
        (await transactionsOf(api, blocked.deposit)).map((entry) => [entry.type, entry.amount]),
        [['deposit', amount]],
      );
      assert.deepEqual(await codes(blocked.transfer.id), [
        ['transfer.created', null],
        ['transfer.rejected', 'awaiting_deposit'],
      ]);
    }
    // 1,000.00 came and went out for the first; 1,000.00 and 400.00 stayed for the other two.
    assert.deepEqual(await balance(api, 'USD'), { available: '1001400.00', held: '0.00' });
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
  });

  it('keeps the deposit leg open a day past the funding deadline: money that arrives late is credited', async () => {
    const api = await organisation();
    const ben = await beneficiary(t, api);
    const transfer = await awaitingDeposit(api, ben);
    const deposit = (await api.get(`/api/v1/payments/deposits/${transfer.deposit!.id}`)).json() as {
      expires_at: string;
    };
    // DEPOSIT_TTL_SECONDS (86400) after the transfer's own deadline.
    assert.equal(Date.parse(deposit.expires_at) - Date.parse(transfer.expires_at!), 86_400_000);
    assert.equal(
      (await api.post(`/api/v1/sandbox/transfers/${transfer.id}/expire`)).json().status,
      'expired',
    );
    const late = await receive(transfer.deposit!.id, '1000.00');
    assert.equal(late.statusCode, 200, late.body);
    assert.equal(late.json().status, 'received');
    assert.equal((await transferOf(api, transfer.id)).status, 'expired');
    assert.deepEqual(await balance(api, 'USD'), { available: '1001000.00', held: '0.00' });
  });

  it('expires a transfer held in review past its funding deadline; the later review leaves it expired', async () => {
    const api = await organisation();
    const ben = await beneficiary(t, api, 'DE89370400440532013000', 'EUR', 'active', 'Sanctioned Person');
    const held = await awaitingDeposit(api, ben);
    assert.equal(held.status, 'in_review');
    // The review takes longer than the funding window: its deadline passes and its timer runs.
    await t.db.pool.query("UPDATE transfers SET expires_at = now() - interval '1 second' WHERE id = $1", [
      held.id,
    ]);
    await t.db.pool.query('UPDATE jobs SET run_at = now() WHERE dedupe_key = $1', [
      `transfers.expire_transfer:${held.id}`,
    ]);
    await reaches(api, held.id, 'expired');
    assert.equal((await transferOf(api, held.id)).status_reason, 'not funded in time');
    const cleared = await review(held.screening_id, 'cleared');
    assert.equal(cleared.statusCode, 200, cleared.body);
    const final = await transferOf(api, held.id);
    assert.deepEqual([final.status, final.deposit], ['expired', null]);
    assert.deepEqual(await codes(held.id), [
      ['transfer.created', null],
      ['transfer.in_review', null],
      ['transfer.expired', 'in_review'],
    ]);
    assert.deepEqual(await balance(api, 'USD'), { available: '1000000.00', held: '0.00' });
  });

  it('expires a transfer past its funding deadline although its timer has not run: a late deposit is credited, a cancel refused', async () => {
    const api = await organisation();
    const ben = await beneficiary(t, api);
    const overdue = async () => {
      const transfer = await awaitingDeposit(api, ben);
      // The deadline passes while the workers lag: the timer, due at the original deadline, has not run.
      await t.db.pool.query("UPDATE transfers SET expires_at = now() - interval '2 hours' WHERE id = $1", [
        transfer.id,
      ]);
      return transfer;
    };
    const timers = async (ids: string[]) =>
      (
        await t.db.pool.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM jobs WHERE dedupe_key = ANY($1)',
          [ids.map((id) => `transfers.expire_transfer:${id}`)],
        )
      ).rows[0]!.n;

    const paid = await overdue();
    const received = await receive(paid.deposit!.id, '1000.00');
    assert.equal(received.statusCode, 200, received.body);
    assert.equal(received.json().status, 'received');
    const afterDeposit = await transferOf(api, paid.id);
    assert.deepEqual(
      [afterDeposit.status, afterDeposit.status_reason, afterDeposit.payout],
      [
        'expired',
        `not funded in time; deposit ${paid.deposit!.id} brought 1000.00 USD, credited to the balance`,
        null,
      ],
    );
    assert.deepEqual(await codes(paid.id), [
      ['transfer.created', null],
      ['transfer.expired', 'awaiting_deposit'],
    ]);

    const cancelled = await overdue();
    const refused = await api.post(`${TRANSFERS}/${cancelled.id}/cancel`);
    assert.equal(refused.statusCode, 400, refused.body);
    assert.deepEqual(
      [errorBody(refused.body).code, errorBody(refused.body).error],
      [
        'INVALID_STATE',
        'The transfer is expired; only a transfer awaiting its deposit or in review can be cancelled',
      ],
    );
    const afterCancel = await transferOf(api, cancelled.id);
    assert.deepEqual([afterCancel.status, afterCancel.status_reason], ['expired', 'not funded in time']);
    assert.deepEqual(await codes(cancelled.id), [
      ['transfer.created', null],
      ['transfer.expired', 'awaiting_deposit'],
    ]);

    assert.equal(await timers([paid.id, cancelled.id]), 0);
    // The late 1,000.00 stays on the balance; nothing was taken.
    assert.deepEqual(await balance(api, 'USD'), { available: '1001000.00', held: '0.00' });
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
  });

  it('clears a transfer in review to a beneficiary deleted meanwhile (it goes on); one blocked meanwhile is rejected, the money back', async () => {
    const api = await organisation();
    const held = async (status: 'deleted' | 'blocked') => {
      const ben = await beneficiary(t, api, 'DE89370400440532013000', 'EUR', 'active', 'Sanctioned Person');
      const transfer = (
        await confirm(api, (await quote(api)).id, { beneficiary_id: ben, funding_method: 'balance' })
      ).json() as TransferJson;
      await setBeneficiaryStatus(ben, status);
      const cleared = await review(transfer.screening_id, 'cleared');
      assert.equal(cleared.statusCode, 200, cleared.body);
      return transfer;
    };
    const goesOn = await held('deleted');
    await reaches(api, goesOn.id, 'completed');
    const rejected = await held('blocked');
    const final = await transferOf(api, rejected.id);
    assert.deepEqual(
      [final.status, final.status_reason, final.payout],
      ['rejected', 'the beneficiary was blocked by a sanctions review', null],
    );
    assert.deepEqual(await codes(rejected.id), [
      ['transfer.created', null],
      ['transfer.in_review', null],
      ['transfer.rejected', 'in_review'],
    ]);
    // The first transfer's 1,000.00 went out; the second's came back.
    assert.deepEqual(await balance(api, 'USD'), { available: '999000.00', held: '0.00' });
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
  });

  it('refuses what D20 refuses, creating nothing', async () => {
    const api = await organisation();
    const ben = await beneficiary(t, api);
    const gbp = await beneficiary(t, api, 'GB33BUKB20201555555555', 'GBP', 'active', 'Ada Lovelace', 'GB');
    const blocked = await beneficiary(t, api, 'DE89370400440532013000', 'EUR', 'blocked');
    const big = await quote(api, '50000.00');
    await api.post('/api/v1/sandbox/balances/top-up', { currency: 'USD', amount: '1.00' });
    const cases: [string, Record<string, unknown>, number, string, string | undefined][] = [
      [
        (await quote(api)).id,
        { beneficiary_id: gbp, funding_method: 'balance' },
        422,
        'VALIDATION_FAILED',
        'beneficiary_id',
      ],
      [
        (await quote(api)).id,
        { beneficiary_id: blocked, funding_method: 'balance' },
        400,
        'BENEFICIARY_NOT_ACTIVE',
        undefined,
      ],
      [
        (await quote(api)).id,
        { beneficiary_id: ben, funding_method: 'crypto' },
        422,
        'VALIDATION_FAILED',
        'funding_method',
      ],
      [
        (await quote(api)).id,
        { beneficiary_id: 'ben_nope', funding_method: 'balance' },
        404,
        'NOT_FOUND',
        'beneficiary_id',
      ],
    ];
    for (const [quoteId, body, status, code, field] of cases) {
      const response = await confirm(api, quoteId, body);
      assert.equal(response.statusCode, status, `${JSON.stringify(body)}: ${response.body}`);
      assert.equal(errorBody(response.body).code, code);
      assert.equal(errorBody(response.body).field, field);
      assert.equal((await api.get(`${QUOTES}/${quoteId}`)).json().status, 'open', 'the quote stays open');
      assert.deepEqual(await quoteTimers(quoteId), ['transfers.expire_quote'], 'and keeps its expiry timer');
    }
    // Balance too low: 20 x 50,000 would need 1,000,000 more than there is after the first 19.
    for (let index = 0; index < 19; index++) {
      const q = await quote(api, '50000.00');
      assert.equal(
        (await confirm(api, q.id, { beneficiary_id: ben, funding_method: 'balance' })).statusCode,
        201,
      );
    }
    const short = await confirm(api, big.id, { beneficiary_id: ben, funding_method: 'balance' });
    assert.equal(short.statusCode, 201, 'the 20th still fits: 1,000,001.00 - 19 x 50,000.00');
    const poor = await confirm(api, (await quote(api, '50000.00')).id, {
      beneficiary_id: ben,
      funding_method: 'balance',
    });
    assert.equal(poor.statusCode, 400);
    assert.equal(errorBody(poor.body).code, 'INSUFFICIENT_FUNDS');
    const expired = await quote(api);
    await api.post(`/api/v1/sandbox/quotes/${expired.id}/expire`);
    const late = await confirm(api, expired.id, { beneficiary_id: ben, funding_method: 'balance' });
    assert.equal(errorBody(late.body).code, 'QUOTE_EXPIRED');
    // A quote still open past its expires_at (its timer has not run): the refused confirm expires it.
    const overdue = await quote(api);
    await t.db.pool.query("UPDATE quotes SET expires_at = now() - interval '1 second' WHERE id = $1", [
      overdue.id,
    ]);
    const before = await balance(api, 'USD');
    const tooLate = await confirm(api, overdue.id, { beneficiary_id: ben, funding_method: 'balance' });
    assert.equal(tooLate.statusCode, 400);
    assert.equal(errorBody(tooLate.body).code, 'QUOTE_EXPIRED');
    assert.equal((await api.get(`${QUOTES}/${overdue.id}`)).json().status, 'expired');
    const fromOverdue = (
      await api.post(`${TRANSFERS}/search`, { filters: { quote_id: [overdue.id] } })
    ).json() as { total: number };
    assert.equal(fromOverdue.total, 0, 'the refused confirm created nothing');
    assert.deepEqual(await balance(api, 'USD'), before);
    const used = await confirm(api, big.id, { beneficiary_id: ben, funding_method: 'balance' });
    assert.equal(errorBody(used.body).code, 'INVALID_STATE');
  });

  it('creates one transfer from two concurrent confirms with the same Idempotency-Key', async () => {
    const api = await organisation();
    const ben = await beneficiary(t, api);
    const q = await quote(api);
    const body = { beneficiary_id: ben, funding_method: 'balance' };
    const [a, b] = await Promise.all([
      api.post(`${QUOTES}/${q.id}/confirm`, body, { 'idempotency-key': 'confirm-1' }),
      api.post(`${QUOTES}/${q.id}/confirm`, body, { 'idempotency-key': 'confirm-1' }),
    ]);
    const statuses = [a.statusCode, b.statusCode].sort();
    assert.ok(
      JSON.stringify(statuses) === '[201,201]' || JSON.stringify(statuses) === '[201,409]',
      `statuses ${statuses}`,
    );
    const page = (await api.post(`${TRANSFERS}/search`, { filters: { quote_id: [q.id] } })).json() as {
      total: number;
    };
    assert.equal(page.total, 1);
    assert.deepEqual(await balance(api, 'USD').then((value) => value.available), '999000.00');
  });

  it('keeps organisations apart and searches by status, id and reference', async () => {
    const mine = await organisation();
    const theirs = await organisation();
    const ben = await beneficiary(t, mine);
    const transfer = (
      await confirm(mine, (await quote(mine)).id, {
        beneficiary_id: ben,
        funding_method: 'bank_transfer',
        reference: 'Invoice 77',
      })
    ).json() as TransferJson;
    assert.equal((await theirs.get(`${TRANSFERS}/${transfer.id}`)).statusCode, 404);
    assert.equal((await theirs.post(`${TRANSFERS}/${transfer.id}/cancel`)).statusCode, 404);
    // Another organisation's beneficiary is answered as an unknown one (D14).
    const borrowed = await confirm(theirs, (await quote(theirs)).id, {
      beneficiary_id: ben,
      funding_method: 'balance',
    });
    assert.equal(borrowed.statusCode, 404, borrowed.body);
    assert.deepEqual(
      [errorBody(borrowed.body).code, errorBody(borrowed.body).field],
      ['NOT_FOUND', 'beneficiary_id'],
    );
    const byText = (await mine.post(`${TRANSFERS}/search`, { search: 'invoice 7' })).json() as {
      total: number;
    };
    assert.equal(byText.total, 1);
    const byId = (await mine.post(`${TRANSFERS}/search`, { search: transfer.id })).json() as {
      total: number;
    };
    assert.equal(byId.total, 1);
    const byStatus = (
      await mine.post(`${TRANSFERS}/search`, { filters: { status: ['awaiting_deposit'] } })
    ).json() as { total: number; items: unknown[] };
    assert.equal(byStatus.total, 1);
    // A search row is the transfer as GET returns it, its deposit leg included.
    assert.deepEqual(byStatus.items[0], (await mine.get(`${TRANSFERS}/${transfer.id}`)).json());
    assert.equal(((await theirs.post(`${TRANSFERS}/search`, {})).json() as { total: number }).total, 0);
  });
});

// Its own database: the debt it creates stays in the ledger checks of every later test.
describe('transfers funded by a deposit to a balance below zero (D20, D21)', () => {
  let t: TestApp;
  useTransfersApp((app) => {
    t = app;
  });
  const receive = (depositId: string, amount: string) => operatorReceive(t, depositId, amount);

  it('credits a deposit that leaves a balance below zero still short, and the transfer keeps waiting', async () => {
    const api = apiClient(t, await t.tenant());
    const ben = await beneficiary(t, api);
    const q = (await api.post(QUOTES, { corridor_id: USD_EUR, source_amount: '1000.00' })).json() as {
      id: string;
    };
    const transfer = (
      await api.post(`${QUOTES}/${q.id}/confirm`, { beneficiary_id: ben, funding_method: 'bank_transfer' })
    ).json() as TransferJson;
    // A deposit reversed after it was spent leaves the balance at -500.00 (only a reversal may overdraw).
    const [debt] = await withTransaction(t.db.pool, (tx) =>
      ledger.post(tx, {
        type: 'adjustment',
        resourceType: null,
        resourceId: null,
        postings: [
          {
            account: ledger.available(api.tenant.organisationId, 'USD'),
            amount: new Decimal('-1000500.00'),
            mayOverdraw: true,
          },
          { account: ledger.platform('sandbox_funding', 'USD'), amount: new Decimal('1000500.00') },
        ],
      }),
    );
    const first = transfer.deposit!.id;
    assert.equal((await receive(first, '1000.00')).statusCode, 200);
    const waiting = (await api.get(`${TRANSFERS}/${transfer.id}`)).json() as TransferJson;
    assert.equal(waiting.status, 'awaiting_deposit');
    assert.equal(
      waiting.status_reason,
      `deposit ${first} brought 1000.00 USD, credited to the balance, which stays below the source amount`,
    );
    assert.notEqual(waiting.deposit?.id, first);
    assert.equal(waiting.deposit?.status, 'pending');
    assert.deepEqual(await balance(api, 'USD'), { available: '500.00', held: '0.00' });
    // The next deposit of the amount funds it.
    assert.equal((await receive(waiting.deposit!.id, '1000.00')).statusCode, 200);
    await waitUntil(
      async () => (await api.get(`${TRANSFERS}/${transfer.id}`)).json().status === 'completed',
      'transfer completed',
      10_000,
    );
    assert.deepEqual(await balance(api, 'USD'), { available: '500.00', held: '0.00' });
    // The one violation is the debt itself, on purpose (docs/operator/ledger.md).
    assert.deepEqual(await ledgerViolations(t.db.pool), [`entry ${debt!.id} below zero: -500.00`]);
  });
});
