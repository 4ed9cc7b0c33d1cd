// Deposits (D21, D24) through the real app on real PostgreSQL: instructions, receipt (exact, under and
// over the expected amount), expiry by the durable timer, the operator's failure and reversal.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ledgerViolations } from '../../src/balances/repository.ts';
import { withTransaction } from '../../src/db/pool.ts';
import { expireDeposit } from '../../src/payments/deposits.ts';
import { errorBody, startTestApp, TEST_ADMIN_KEY, type TestApp } from '../helpers/app.ts';
import { depositsAfterMigration } from '../helpers/database.ts';
import { storedEnvelope } from '../helpers/event-payloads.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';
import { activeSubscription, client } from '../webhooks/fixtures.ts';
import { balance, DEPOSITS, eventsOf, expectStatus, publishedKeysOf, transactionsOf } from './fixtures.ts';

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
    // A crypto deposit is credited by its chain transaction: each caller is told how it would arrive.
    const crypto = await create(api, { currency: 'USDC', method: 'crypto', expected_amount: '5.000000' });
    const simulated = await api.post(`/api/v1/sandbox/deposits/${crypto.id}/receive`);
    expectStatus(simulated, 400);
    assert.deepEqual(
      [errorBody(simulated.body).code, errorBody(simulated.body).error],
      [
        'INVALID_STATE',
        'The deposit is a pending crypto deposit: it is credited by a simulated chain transaction (POST /api/v1/sandbox/crypto/deposits)',
      ],
    );
    const recorded = await admin(`/admin/v1/deposits/${crypto.id}/receive`, { amount: '5.000000' });
    expectStatus(recorded, 400);
    assert.equal(
      errorBody(recorded.body).error,
      'The deposit is a pending crypto deposit: it is credited by its chain notification (POST /admin/v1/crypto/deposits)',
    );
  });

  it("shows instructions with D20's keys in D20's order, the same in the GET and in deposit.created", async () => {
    const api = await organisation();
    const bank = ['type', 'currency', 'amount', 'account_holder', 'bank_name'];
    const cases: [Record<string, string>, string[]][] = [
      [{ currency: 'EUR', method: 'bank_transfer' }, [...bank, 'iban', 'bic', 'reference']],
      [
        { currency: 'USD', method: 'bank_transfer' },
        [...bank, 'account_number', 'routing_code', 'bic', 'reference'],
      ],
      [{ currency: 'USDC', method: 'crypto' }, ['type', 'network', 'asset', 'amount', 'address']],
    ];
    for (const [body, keys] of cases) {
      const created = await create(api, body);
      const got = (await api.get(`${DEPOSITS}/${created.id}`)).json() as { instructions: object };
      const event = await t.db.pool.query<{ payload: string }>(
        "SELECT payload FROM webhook_events WHERE source_object_id = $1 AND event_type_code = 'deposit.created'",
        [created.id],
      );
      const published = storedEnvelope<{ data: { object: { instructions: object } } }>(
        t.deps,
        event.rows[0]!.payload,
      ).data.object.instructions;
      assert.deepEqual(Object.keys(created.instructions), keys, body.currency);
      assert.deepEqual(Object.keys(got.instructions), keys, body.currency);
      assert.deepEqual(Object.keys(published), keys, body.currency);
    }
  });

  it("lists D21's deposit fields first and in D21's order in the answer, the GET and every event", async () => {
    const api = await organisation();
    const created = await create(api, { currency: 'EUR', method: 'bank_transfer', expected_amount: '20.00' });
    expectStatus(await api.post(`/api/v1/sandbox/deposits/${created.id}/receive`), 200);
    const keys = [
      ...['id', 'method', 'currency', 'expected_amount', 'received_amount', 'status', 'instructions'],
      ...[
        'transfer_id',
        'tx_hash',
        'confirmations',
        'external_id',
        'expires_at',
        'detected_at',
        'received_at',
      ],
      ...['network', 'failure_reason', 'failed_at', 'reversed_at', 'created_at', 'updated_at'],
    ];
    assert.deepEqual(Object.keys(created), keys);
    assert.deepEqual(Object.keys((await api.get(`${DEPOSITS}/${created.id}`)).json()), keys);
    assert.deepEqual(await publishedKeysOf(t, created.id), {
      'deposit.created': keys,
      'deposit.received': keys,
    });
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

  it("records a further bank payment quoting a received deposit's reference as a new deposit, once per bank_transaction_id", async () => {
    const api = await organisation();
    const deposit = await create(api, {
      currency: 'EUR',
      method: 'bank_transfer',
      expected_amount: '1000.00',
    });
    const reference = String(deposit.instructions.reference);
    const byReference = () =>
      t.app.inject({
        method: 'GET',
        url: `/admin/v1/deposits/by-reference/${reference}`,
        headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` },
      });
    // The payer splits the payment: 400.00, then 600.00, both quoting the reference.
    const first = await admin(`/admin/v1/deposits/${deposit.id}/receive`, {
      amount: '400.00',
      reference,
      bank_transaction_id: 'STMT-0001',
    });
    expectStatus(first, 200);
    assert.deepEqual(
      [first.json().id, first.json().status, first.json().received_amount],
      [deposit.id, 'received', '400.00'],
    );
    // The operator's retry of that record (a timeout, say) changes nothing, also with spaces around the
    // statement's id (a copy from the statement): it names the same payment.
    for (const bankId of ['STMT-0001', ' STMT-0001\t']) {
      const retried = await admin(`/admin/v1/deposits/${deposit.id}/receive`, {
        amount: '400.00',
        reference,
        bank_transaction_id: bankId,
      });
      expectStatus(retried, 200);
      assert.deepEqual(retried.json(), first.json(), JSON.stringify(bankId));
    }
    const blank = await admin(`/admin/v1/deposits/${deposit.id}/receive`, {
      amount: '400.00',
      reference,
      bank_transaction_id: '   ',
    });
    expectStatus(blank, 422);
    assert.deepEqual(
      [errorBody(blank.body).field, errorBody(blank.body).error],
      ['bank_transaction_id', 'bank_transaction_id must not be blank'],
    );
    assert.deepEqual(await balance(api, 'EUR'), { available: '1000400.00', held: '0.00' });
    // The reference still names the received deposit.
    expectStatus(await byReference(), 200);
    assert.equal((await byReference()).json().id, deposit.id);
    // Without the bank's id of the payment, a further payment is refused: a retry could credit it twice.
    const anonymous = await admin(`/admin/v1/deposits/${deposit.id}/receive`, {
      amount: '600.00',
      reference,
    });
    expectStatus(anonymous, 422);
    assert.deepEqual(
      [errorBody(anonymous.body).code, errorBody(anonymous.body).field, errorBody(anonymous.body).error],
      [
        'VALIDATION_FAILED',
        'bank_transaction_id',
        "The deposit is received (400.00 EUR recorded): a further payment quoting its reference is credited as a new deposit and needs the bank's id of the payment in bank_transaction_id, so that it is credited once. A payment already recorded must not be recorded again.",
      ],
    );
    assert.deepEqual(await balance(api, 'EUR'), { available: '1000400.00', held: '0.00' });
    // With it: 201 with a new deposit of its own, credited in full.
    const second = await admin(`/admin/v1/deposits/${deposit.id}/receive`, {
      amount: '600.00',
      reference: reference.toLowerCase(),
      bank_transaction_id: 'STMT-0002',
    });
    expectStatus(second, 201);
    const further = second.json() as DepositJson & { transfer_id: string | null };
    assert.match(further.id, /^dep_[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.notEqual(further.id, deposit.id);
    assert.deepEqual(
      [
        further.method,
        further.currency,
        further.status,
        further.expected_amount,
        further.received_amount,
        further.transfer_id,
      ],
      ['bank_transfer', 'EUR', 'received', null, '600.00', null],
    );
    // It shows the instructions the payer followed, their reference and amount included; it expects no
    // amount of its own.
    assert.deepEqual(further.instructions, deposit.instructions);
    assert.deepEqual((await api.get(`${DEPOSITS}/${further.id}`)).json(), further);
    assert.equal((await byReference()).json().id, deposit.id, 'the reference keeps naming the first deposit');
    assert.deepEqual(await balance(api, 'EUR'), { available: '1001000.00', held: '0.00' });
    assert.deepEqual(await transactionsOf(api, further.id), [
      {
        amount: '600.00',
        balance_after: '1001000.00',
        type: 'deposit',
        resource_type: 'deposit',
        resource_id: further.id,
      },
    ]);
    assert.deepEqual(await eventsOf(t, further.id), [
      { code: 'deposit.created', previous: null, status: 'pending' },
      { code: 'deposit.received', previous: 'pending', status: 'received' },
    ]);
    const expiry = await t.db.pool.query("SELECT 1 FROM jobs WHERE payload->>'deposit_id' = $1", [
      further.id,
    ]);
    assert.equal(expiry.rowCount, 0, 'no expiry timer is left behind');
    // Its retry answers the same deposit (200) and credits nothing; so does a record without the amount's
    // reference guard, or through the new deposit's own id.
    for (const [id, body] of [
      [deposit.id, { amount: '600.00', reference, bank_transaction_id: 'STMT-0002' }],
      [deposit.id, { amount: '600.00', bank_transaction_id: 'STMT-0002' }],
      [further.id, { amount: '600.00', reference, bank_transaction_id: 'STMT-0002' }],
    ] as const) {
      const again = await admin(`/admin/v1/deposits/${id}/receive`, body);
      expectStatus(again, 200);
      assert.deepEqual(again.json(), further);
    }
    // A known bank id with another amount, or for another deposit's reference: another payment, 409.
    const other = await create(api, { currency: 'EUR', method: 'bank_transfer' });
    for (const [id, amount] of [
      [deposit.id, '601.00'],
      [other.id, '600.00'],
    ] as const) {
      const clash = await admin(`/admin/v1/deposits/${id}/receive`, {
        amount,
        bank_transaction_id: 'STMT-0002',
      });
      expectStatus(clash, 409);
      assert.deepEqual(
        [errorBody(clash.body).code, errorBody(clash.body).error],
        [
          'CONFLICT',
          `The bank payment STMT-0002 is recorded already, as deposit ${further.id} of 600.00 EUR quoting ${reference}: check the payment`,
        ],
      );
    }
    assert.equal((await api.get(`${DEPOSITS}/${other.id}`)).json().status, 'pending');
    assert.deepEqual(await balance(api, 'EUR'), { available: '1001000.00', held: '0.00' });
    assert.deepEqual(await eventsOf(t, deposit.id), [
      { code: 'deposit.created', previous: null, status: 'pending' },
      { code: 'deposit.received', previous: 'pending', status: 'received' },
    ]);
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
  });

  it('payments migration 034 trims the bank ids stored with whitespace around them, leaving a payment recorded twice alone', async () => {
    const api = await organisation();
    const recorded = async (bankId: string) => {
      const deposit = await create(api, {
        currency: 'EUR',
        method: 'bank_transfer',
        expected_amount: '10.00',
      });
      const received = await admin(`/admin/v1/deposits/${deposit.id}/receive`, {
        amount: '10.00',
        bank_transaction_id: bankId,
      });
      expectStatus(received, 200);
      return { id: deposit.id, reference: String(deposit.instructions.reference) };
    };
    const spaced = await recorded('STMT-M34-A');
    const twin = await recorded('STMT-M34-B');
    const twinToo = await recorded('STMT-M34-C');
    // As an earlier release stored them: spaces kept, and one payment under two spellings.
    assert.deepEqual(
      await depositsAfterMigration(t.db.pool, 34, 'bank_transaction_id', {
        [spaced.id]: ' STMT-M34-A\t',
        [twin.id]: 'STMT-M34-B',
        [twinToo.id]: 'STMT-M34-B ',
      }),
      { [spaced.id]: 'STMT-M34-A', [twin.id]: 'STMT-M34-B', [twinToo.id]: 'STMT-M34-B ' },
    );
    // The trimmed payment's retry finds the deposit that recorded it and credits nothing more.
    const retry = await admin(`/admin/v1/deposits/${spaced.id}/receive`, {
      amount: '10.00',
      reference: spaced.reference,
      bank_transaction_id: 'STMT-M34-A',
    });
    expectStatus(retry, 200);
    assert.equal(retry.json().id, spaced.id);
    assert.deepEqual(await balance(api, 'EUR'), { available: '1000030.00', held: '0.00' });
  });

  it('never credits twice a payment first recorded without bank_transaction_id and retried with one', async () => {
    const api = await organisation();
    const deposit = await create(api, {
      currency: 'EUR',
      method: 'bank_transfer',
      expected_amount: '100.00',
    });
    const reference = String(deposit.instructions.reference);
    expectStatus(
      await admin(`/admin/v1/deposits/${deposit.id}/receive`, { amount: '100.00', reference }),
      200,
    );
    // The answer was lost; the operator retries, now with the statement's id of the payment.
    const retry = await admin(`/admin/v1/deposits/${deposit.id}/receive`, {
      amount: '100.00',
      reference,
      bank_transaction_id: 'STMT-RETRY',
    });
    expectStatus(retry, 409);
    assert.equal(errorBody(retry.body).code, 'CONFLICT');
    assert.deepEqual(await balance(api, 'EUR'), { available: '1000100.00', held: '0.00' });
    // Another payment says so, and is credited once, as a deposit of its own.
    const another = await admin(`/admin/v1/deposits/${deposit.id}/receive`, {
      amount: '100.00',
      reference,
      bank_transaction_id: 'STMT-ANOTHER',
      further_payment: true,
    });
    expectStatus(another, 201);
    assert.deepEqual(await balance(api, 'EUR'), { available: '1000200.00', held: '0.00' });
    // The first payment's retry names the new deposit, which shows the same reference: the deposit the
    // reference belongs to, credited without the bank's id, still cannot tell it from a retry.
    const retryElsewhere = await admin(`/admin/v1/deposits/${another.json().id}/receive`, {
      amount: '100.00',
      reference,
      bank_transaction_id: 'STMT-RETRY',
    });
    expectStatus(retryElsewhere, 409);
    assert.equal(
      errorBody(retryElsewhere.body).error,
      `The deposit ${deposit.id} was credited with 100.00 EUR without a bank_transaction_id, so this record cannot be told apart from a retry of that one: if it is another payment, send it again with "further_payment": true`,
    );
    assert.deepEqual(await balance(api, 'EUR'), { available: '1000200.00', held: '0.00' });
    // A record against that new deposit's id still checks the payer's reference against the one it shows.
    const wrong = await admin(`/admin/v1/deposits/${another.json().id}/receive`, {
      amount: '5.00',
      reference: 'PSDWRONGWRONG',
      bank_transaction_id: 'STMT-WRONG',
    });
    expectStatus(wrong, 422);
    assert.deepEqual(
      [errorBody(wrong.body).field, errorBody(wrong.body).error],
      [
        'reference',
        `The payer quoted PSDWRONGWRONG, not this deposit's reference ${reference}: check the deposit`,
      ],
    );
    assert.deepEqual(await balance(api, 'EUR'), { available: '1000200.00', held: '0.00' });
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
  });

  it('records a payment quoting the reference of an expired, failed or reversed deposit as a new deposit', async () => {
    const api = await organisation();
    const expired = await create(api, { currency: 'USD', method: 'bank_transfer', expected_amount: '50.00' });
    await withTransaction(t.db.pool, (tx) => expireDeposit(tx, t.deps, expired.id));
    const failed = await create(api, { currency: 'USD', method: 'bank_transfer', expected_amount: '50.00' });
    expectStatus(await admin(`/admin/v1/deposits/${failed.id}/fail`, {}), 200);
    const reversed = await create(api, {
      currency: 'USD',
      method: 'bank_transfer',
      expected_amount: '50.00',
    });
    expectStatus(await admin(`/admin/v1/deposits/${reversed.id}/receive`, { amount: '50.00' }), 200);
    expectStatus(await admin(`/admin/v1/deposits/${reversed.id}/reverse`), 200);
    assert.deepEqual(await balance(api, 'USD'), { available: '1000000.00', held: '0.00' });
    // The reversed deposit was credited without the bank's id: a record quoting it may be a retry of that
    // one, so the operator must say it is another payment.
    const unsure = await admin(`/admin/v1/deposits/${reversed.id}/receive`, {
      amount: '50.00',
      bank_transaction_id: 'LATE-2',
    });
    expectStatus(unsure, 409);
    assert.deepEqual(
      [errorBody(unsure.body).code, errorBody(unsure.body).error],
      [
        'CONFLICT',
        `The deposit ${reversed.id} was credited with 50.00 USD without a bank_transaction_id, so this record cannot be told apart from a retry of that one: if it is another payment, send it again with "further_payment": true`,
      ],
    );
    for (const [index, deposit] of [expired, failed, reversed].entries()) {
      const late = await admin(`/admin/v1/deposits/${deposit.id}/receive`, {
        amount: '50.00',
        bank_transaction_id: `LATE-${index}`,
        ...(deposit === reversed ? { further_payment: true } : {}),
      });
      expectStatus(late, 201);
      assert.deepEqual([late.json().status, late.json().received_amount], ['received', '50.00']);
      assert.equal(late.json().instructions.reference, deposit.instructions.reference);
      // The deposit it quoted stays as it was.
      assert.equal(
        (await api.get(`${DEPOSITS}/${deposit.id}`)).json().status,
        ['expired', 'failed', 'reversed'][index],
      );
    }
    assert.deepEqual(await balance(api, 'USD'), { available: '1000150.00', held: '0.00' });
    // Bad input is refused in the platform envelope, nothing credited.
    const cases: [string, Record<string, unknown>, number, string, string | undefined][] = [
      [expired.id, { amount: '-1', bank_transaction_id: 'BAD-1' }, 422, 'VALIDATION_FAILED', 'amount'],
      [expired.id, { amount: '1.001', bank_transaction_id: 'BAD-1' }, 422, 'VALIDATION_FAILED', 'amount'],
      [expired.id, { bank_transaction_id: 'BAD-1' }, 422, 'VALIDATION_FAILED', 'amount'],
      [
        expired.id,
        { amount: '1.00', bank_transaction_id: '' },
        422,
        'VALIDATION_FAILED',
        'bank_transaction_id',
      ],
      [
        expired.id,
        { amount: '1.00', bank_transaction_id: 'x'.repeat(141) },
        422,
        'VALIDATION_FAILED',
        'bank_transaction_id',
      ],
      [
        expired.id,
        { amount: '1.00', bank_transaction_id: 'A\u0000B' },
        422,
        'VALIDATION_FAILED',
        'bank_transaction_id',
      ],
      [
        expired.id,
        { amount: '1.00', bank_transaction_id: 42 },
        422,
        'VALIDATION_FAILED',
        'bank_transaction_id',
      ],
      [
        'dep_01JD3V6M2Q8W1X4Y5Z6A7B8C9D',
        { amount: '1.00', bank_transaction_id: 'BAD-1' },
        404,
        'NOT_FOUND',
        undefined,
      ],
    ];
    for (const [id, body, status, code, field] of cases) {
      const refused = await admin(`/admin/v1/deposits/${id}/receive`, body);
      assert.equal(refused.statusCode, status, `${JSON.stringify(body)}: ${refused.body}`);
      assert.deepEqual(
        [errorBody(refused.body).code, errorBody(refused.body).field],
        [code, field],
        JSON.stringify(body),
      );
    }
    assert.deepEqual(await balance(api, 'USD'), { available: '1000150.00', held: '0.00' });
    // The sandbox simulation stands for a payment to a waiting deposit only: as before, 400 on the others.
    const simulated = await api.post(`/api/v1/sandbox/deposits/${expired.id}/receive`, { amount: '1.00' });
    expectStatus(simulated, 400);
    assert.equal(errorBody(simulated.body).code, 'INVALID_STATE');
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
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
      [{ currency: 'USDC', method: 'crypto', network: 'solana' }, 'network'],
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
