// Deposits (D21, D24) through the real app on real PostgreSQL: instructions, receipt (exact, under and
// over the expected amount), expiry by the durable timer, the operator's failure and reversal.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { withTransaction } from '../../src/db/pool.ts';
import { expireDeposit } from '../../src/payments/deposits.ts';
import { errorBody, startTestApp, TEST_ADMIN_KEY, type TestApp } from '../helpers/app.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';
import { activeSubscription, client } from '../webhooks/fixtures.ts';
import { balance, DEPOSITS, eventsOf, expectStatus, transactionsOf } from './fixtures.ts';

interface DepositJson {
  id: string;
  method: string;
  currency: string;
  expected_amount: string | null;
  received_amount: string | null;
  status: string;
  instructions: Record<string, unknown>;
  expires_at: string;
  received_at: string | null;
}

const DEPOSIT_EVENTS = [
  'deposit.created',
  'deposit.received',
  'deposit.expired',
  'deposit.failed',
  'deposit.reversed',
];

describe('deposits (D21, D24)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  async function organisation(): Promise<ApiClient> {
    const tenant = await t.tenant();
    await activeSubscription(client(t, tenant), { event_type_codes: DEPOSIT_EVENTS });
    return apiClient(t, tenant);
  }
  const admin = (url: string, body?: unknown) =>
    t.app.inject({
      method: 'POST',
      url,
      headers: {
        authorization: `Bearer ${TEST_ADMIN_KEY}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
  const create = async (api: ApiClient, body: Record<string, unknown>) => {
    const response = await api.post(DEPOSITS, body);
    expectStatus(response, 201);
    return response.json() as DepositJson;
  };

  it('answers bank-transfer instructions with a unique reference and expires after DEPOSIT_TTL_SECONDS', async () => {
    const api = await organisation();
    const before = Date.now();
    const deposit = await create(api, {
      currency: 'EUR',
      method: 'bank_transfer',
      expected_amount: '2500.00',
    });
    assert.match(deposit.id, /^dep_[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.equal(deposit.status, 'pending');
    const reference = deposit.instructions.reference as string;
    assert.match(reference, /^PSD[0-9A-HJKMNP-TV-Z]{10}$/);
    assert.deepEqual(deposit.instructions, {
      type: 'bank_transfer',
      currency: 'EUR',
      amount: '2500.00',
      account_holder: 'Payment Service Sandbox Ltd',
      bank_name: 'Commerzbank',
      bic: 'COBADEFFXXX',
      iban: 'DE89370400440532013000',
      reference,
    });
    const ttl = Date.parse(deposit.expires_at) - before;
    assert.ok(ttl > 86_399_000 && ttl < 86_460_000, `expires in ${ttl} ms`);
    const other = await create(api, { currency: 'USD', method: 'bank_transfer' });
    assert.notEqual(other.instructions.reference, reference);
    assert.equal(other.instructions.amount, null);
    assert.equal(other.instructions.routing_code, '021000021');
    assert.deepEqual(await eventsOf(t, deposit.id), [
      { code: 'deposit.created', previous: null, status: 'pending' },
    ]);
  });

  for (const [label, received] of [
    ['exactly', '2500.00'],
    ['under', '1000.50'],
    ['over', '3000.00'],
  ] as const) {
    it(`credits what arrived (${label} the expected amount) to the available balance`, async () => {
      const api = await organisation();
      const deposit = await create(api, {
        currency: 'EUR',
        method: 'bank_transfer',
        expected_amount: '2500.00',
      });
      const response = await api.post(`/api/v1/sandbox/deposits/${deposit.id}/receive`, { amount: received });
      expectStatus(response, 200);
      const credited = response.json() as DepositJson;
      assert.equal(credited.status, 'received');
      assert.equal(credited.received_amount, received);
      assert.equal(credited.expected_amount, '2500.00');
      const expected = (1_000_000 + Number(received)).toFixed(2);
      assert.deepEqual(await balance(api, 'EUR'), { available: expected, held: '0.00' });
      assert.deepEqual(await transactionsOf(api, deposit.id), [
        {
          amount: received,
          balance_after: expected,
          type: 'deposit',
          resource_type: 'deposit',
          resource_id: deposit.id,
        },
      ]);
      assert.deepEqual(await eventsOf(t, deposit.id), [
        { code: 'deposit.created', previous: null, status: 'pending' },
        { code: 'deposit.received', previous: 'pending', status: 'received' },
      ]);
      const expiry = await t.db.pool.query("SELECT 1 FROM jobs WHERE payload->>'deposit_id' = $1", [
        deposit.id,
      ]);
      assert.equal(expiry.rowCount, 0, 'the expiry timer is dropped');
    });
  }

  it('receives the expected amount by default, and needs an amount when none is expected', async () => {
    const api = await organisation();
    const expected = await create(api, {
      currency: 'GBP',
      method: 'bank_transfer',
      expected_amount: '12.34',
    });
    const received = await api.post(`/api/v1/sandbox/deposits/${expected.id}/receive`);
    assert.equal(received.json().received_amount, '12.34');
    const open = await create(api, { currency: 'GBP', method: 'bank_transfer' });
    const refused = await api.post(`/api/v1/sandbox/deposits/${open.id}/receive`, {});
    expectStatus(refused, 422);
    assert.equal(errorBody(refused.body).field, 'amount');
    const twice = await api.post(`/api/v1/sandbox/deposits/${expected.id}/receive`);
    expectStatus(twice, 400);
    assert.equal(errorBody(twice.body).code, 'INVALID_STATE');
  });

  it('expires a pending deposit at its time, through its durable timer', async () => {
    const api = await organisation();
    const deposit = await create(api, { currency: 'USD', method: 'bank_transfer', expected_amount: '5.00' });
    const job = await t.db.pool.query<{ kind: string; due: string }>(
      "SELECT kind, run_at::text AS due FROM jobs WHERE payload->>'deposit_id' = $1",
      [deposit.id],
    );
    assert.equal(job.rows[0]!.kind, 'payments.expire_deposit');
    assert.equal(
      Date.parse(job.rows[0]!.due.replace(' ', 'T').replace(/\+00$/, 'Z')),
      Date.parse(deposit.expires_at),
    );
    await withTransaction(t.db.pool, (tx) => expireDeposit(tx, t.deps, deposit.id));
    assert.equal((await api.get(`${DEPOSITS}/${deposit.id}`)).json().status, 'expired');
    const late = await api.post(`/api/v1/sandbox/deposits/${deposit.id}/receive`);
    expectStatus(late, 400);
    assert.deepEqual(
      (await eventsOf(t, deposit.id)).map((event) => [event.code, event.previous]),
      [
        ['deposit.created', null],
        ['deposit.expired', 'pending'],
      ],
    );
    // A received deposit's timer, had it run, changes nothing.
    const paid = await create(api, { currency: 'USD', method: 'bank_transfer', expected_amount: '5.00' });
    await api.post(`/api/v1/sandbox/deposits/${paid.id}/receive`);
    await withTransaction(t.db.pool, (tx) => expireDeposit(tx, t.deps, paid.id));
    assert.equal((await api.get(`${DEPOSITS}/${paid.id}`)).json().status, 'received');
  });

  it('lets the operator receive, fail and reverse deposits; a reversal debits the amount back', async () => {
    const api = await organisation();
    const deposit = await create(api, { currency: 'USD', method: 'bank_transfer' });
    const reference = String(deposit.instructions.reference);
    // The reference the payer quoted guards against crediting the wrong deposit.
    const mismatched = await admin(`/admin/v1/deposits/${deposit.id}/receive`, {
      amount: '300.00',
      reference: 'PSDNOTTHISONE',
    });
    expectStatus(mismatched, 422);
    assert.deepEqual(
      [errorBody(mismatched.body).field, errorBody(mismatched.body).error],
      [
        'reference',
        `The payer quoted PSDNOTTHISONE, not this deposit's reference ${reference}: check the deposit`,
      ],
    );
    assert.deepEqual(await balance(api, 'USD'), { available: '1000000.00', held: '0.00' });
    // The operator finds the deposit a bank payment quotes, written as the bank passes it on.
    const found = await t.app.inject({
      method: 'GET',
      url: `/admin/v1/deposits/by-reference/${encodeURIComponent(` ${reference.toLowerCase()}`)}`,
      headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` },
    });
    expectStatus(found, 200);
    assert.deepEqual(found.json(), (await api.get(`${DEPOSITS}/${deposit.id}`)).json());
    for (const unknown of ['PSDNOTTHISONE', 'PSD%00X']) {
      const missing = await t.app.inject({
        method: 'GET',
        url: `/admin/v1/deposits/by-reference/${unknown}`,
        headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` },
      });
      expectStatus(missing, 404);
    }
    // As a bank passes it on: in small letters, with spaces.
    const received = await admin(`/admin/v1/deposits/${deposit.id}/receive`, {
      amount: '300.00',
      reference: `${reference.slice(0, 4).toLowerCase()} ${reference.slice(4)}`,
    });
    expectStatus(received, 200);
    const reversed = await admin(`/admin/v1/deposits/${deposit.id}/reverse`);
    expectStatus(reversed, 200);
    assert.equal(reversed.json().status, 'reversed');
    assert.deepEqual(await balance(api, 'USD'), { available: '1000000.00', held: '0.00' });
    assert.deepEqual(
      (await transactionsOf(api, deposit.id)).map((entry) => [entry.type, entry.amount]),
      [
        ['deposit', '300.00'],
        ['adjustment', '-300.00'],
      ],
    );
    const other = await create(api, { currency: 'USD', method: 'bank_transfer' });
    const failed = await admin(`/admin/v1/deposits/${other.id}/fail`, { failure_reason: 'payer cancelled' });
    expectStatus(failed, 200);
    assert.equal(failed.json().status, 'failed');
    assert.equal(failed.json().failure_reason, 'payer cancelled');
    expectStatus(await admin(`/admin/v1/deposits/${other.id}/reverse`), 400);
    assert.deepEqual(
      (await eventsOf(t, deposit.id)).map((event) => event.code),
      ['deposit.created', 'deposit.received', 'deposit.reversed'],
    );
  });

  it('refuses bad deposits with 422 naming the field, and a second external_id with 409', async () => {
    const api = await organisation();
    const cases: [Record<string, unknown>, string][] = [
      [{ currency: 'JPY', method: 'bank_transfer' }, 'currency'],
      [{ currency: 'USDC', method: 'bank_transfer' }, 'currency'],
      [{ currency: 'EUR', method: 'crypto' }, 'currency'],
      [{ currency: 'EUR', method: 'cash' }, 'method'],
      [{ currency: 'EUR', method: 'bank_transfer', expected_amount: '-1' }, 'expected_amount'],
      [{ currency: 'EUR', method: 'bank_transfer', network: 'ethereum' }, 'network'],
      [{ currency: 'USDC', method: 'crypto' }, 'network'],
      // The currency is the deposit's; the network chosen for it does not carry it.
      [{ currency: 'BTC', method: 'crypto', network: 'ethereum' }, 'network'],
      [{ currency: 'EUR', method: 'bank_transfer', external_id: '' }, 'external_id'],
    ];
    for (const [body, field] of cases) {
      const response = await api.post(DEPOSITS, body);
      assert.equal(response.statusCode, 422, JSON.stringify(body));
      assert.equal(errorBody(response.body).field, field, JSON.stringify(body));
    }
    await create(api, { currency: 'EUR', method: 'bank_transfer', external_id: 'dep-1' });
    const duplicate = await api.post(DEPOSITS, {
      currency: 'EUR',
      method: 'bank_transfer',
      external_id: 'dep-1',
    });
    expectStatus(duplicate, 409);
  });

  it('keeps organisations apart and searches by status and method', async () => {
    const mine = await organisation();
    const theirs = await organisation();
    const deposit = await create(mine, { currency: 'EUR', method: 'bank_transfer', expected_amount: '1.00' });
    expectStatus(await theirs.get(`${DEPOSITS}/${deposit.id}`), 404);
    expectStatus(await theirs.post(`/api/v1/sandbox/deposits/${deposit.id}/receive`), 404);
    await mine.post(`/api/v1/sandbox/deposits/${deposit.id}/receive`);
    await create(mine, { currency: 'GBP', method: 'bank_transfer' });
    const page = (
      await mine.post(`${DEPOSITS}/search`, { filters: { status: ['received'], method: ['bank_transfer'] } })
    ).json() as {
      total: number;
      items: DepositJson[];
    };
    assert.equal(page.total, 1);
    assert.equal(page.items[0]!.id, deposit.id);
    assert.equal(((await theirs.post(`${DEPOSITS}/search`, {})).json() as { total: number }).total, 0);
  });
});
