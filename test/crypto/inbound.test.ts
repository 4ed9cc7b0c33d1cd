// Inbound crypto funds (D22, D24): chain notifications recorded once, confirmations, disabled addresses,
// the sandbox simulation, and a crypto-funded transfer on the sandbox USDC -> MXN corridor.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { JobRunner } from '../../src/platform/jobs/runner.ts';
import { Decimal } from '../../src/platform/money.ts';
import { errorBody, startTestApp, TEST_ADMIN_KEY, type TestApp } from '../helpers/app.ts';
import { depositsAfterMigration } from '../helpers/database.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';
import { waitUntil } from '../helpers/wait.ts';
import {
  balance,
  beneficiary,
  createBeneficiaryTable,
  DEPOSITS,
  eventsOf,
  expectStatus,
  runJobs,
  testBeneficiaries,
  transactionsOf,
} from '../payments/fixtures.ts';
import { activeSubscription, client } from '../webhooks/fixtures.ts';

const ADDRESSES = '/api/v1/crypto/deposit-addresses';

interface DepositJson {
  id: string;
  status: string;
  method: string;
  currency: string;
  received_amount: string | null;
  confirmations: number | null;
  network: string | null;
  tx_hash: string | null;
}

describe('inbound crypto deposits (D22)', () => {
  let t: TestApp;
  let jobs: JobRunner;
  before(async () => {
    t = await startTestApp({ env: { SANDBOX_STEP_DELAY_MS: '0' }, extraAreas: [testBeneficiaries] });
    await createBeneficiaryTable(t);
    jobs = runJobs(t);
  });
  after(async () => {
    await jobs.stop();
    await t.close();
  });

  async function organisation(): Promise<ApiClient> {
    const tenant = await t.tenant();
    await activeSubscription(client(t, tenant), {
      event_type_codes: [
        'deposit.created',
        'deposit.detected',
        'deposit.received',
        'transfer.created',
        'transfer.processing',
        'transfer.completed',
      ],
    });
    return apiClient(t, tenant);
  }
  const address = async (api: ApiClient, network = 'ethereum', asset = 'USDC') => {
    const response = await api.post(ADDRESSES, { network, asset });
    assert.equal(response.statusCode, 201, response.body);
    return response.json() as { id: string; address: string };
  };
  /** A POST of the operator API. */
  const operator = (url: string, body: object = {}) =>
    t.app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
  /** What a chain indexer posts. */
  const indexer = (body: Record<string, unknown>) => operator('/admin/v1/crypto/deposits', body);

  it('records a notification once: a replay advances nothing and credits nothing more', async () => {
    const api = await organisation();
    const target = await address(api);
    const notification = {
      network: 'ethereum',
      address: target.address,
      asset: 'USDC',
      amount: '250.500000',
      tx_hash: '0xabc1',
      log_index: 3,
      confirmations: 12,
    };
    const first = await indexer(notification);
    assert.equal(first.statusCode, 201, first.body);
    const deposit = first.json() as DepositJson;
    assert.deepEqual(
      [deposit.status, deposit.method, deposit.currency, deposit.received_amount, deposit.confirmations],
      ['received', 'crypto', 'USDC', '250.500000', 12],
    );
    const replay = await indexer(notification);
    assert.equal(replay.statusCode, 200);
    assert.equal(replay.json().id, deposit.id);
    assert.deepEqual(await balance(api, 'USDC'), { available: '1000250.500000', held: '0.000000' });
    assert.deepEqual(
      (await transactionsOf(api, deposit.id)).map((entry) => [entry.type, entry.amount]),
      [['deposit', '250.500000']],
    );
    // Another log index of the same transaction is another transfer of funds.
    const other = await indexer({ ...notification, log_index: 4 });
    assert.equal(other.statusCode, 201);
    assert.notEqual(other.json().id, deposit.id);
  });

  it('knows a transaction however its hash is written, and never takes another output for a repeat', async () => {
    const api = await organisation();
    const [first, second] = [await address(api, 'bitcoin', 'BTC'), await address(api, 'bitcoin', 'BTC')];
    const output = {
      network: 'bitcoin',
      address: first.address,
      asset: 'BTC',
      amount: '0.50000000',
      tx_hash: 'AB12CD34EF',
      confirmations: 3,
    };
    expectStatus(await indexer(output), 201);
    // Hex ids are case-insensitive: the same transaction in lower case and with spaces is a repeat.
    const repeat = await indexer({ ...output, tx_hash: '  ab12cd34ef ' });
    expectStatus(repeat, 200);
    assert.equal(repeat.json().tx_hash, 'ab12cd34ef');
    // Another output of the batch, without its own log_index, or the same output with another amount: 409,
    // nothing credited or changed.
    for (const changed of [{ address: second.address }, { amount: '5.00000000' }]) {
      const clash = await indexer({ ...output, ...changed });
      expectStatus(clash, 409);
      assert.equal(
        errorBody(clash.body).error,
        `The output ab12cd34ef on bitcoin is recorded as 0.50000000 BTC to ${first.address}: a repeat must name the same address, asset and amount, and each output of a transaction that pays several needs its own log_index (on bitcoin, the output index)`,
      );
    }
    assert.deepEqual(await balance(api, 'BTC'), { available: '0.50000000', held: '0.00000000' });
    // With its output index, the other output is a deposit of its own.
    expectStatus(await indexer({ ...output, address: second.address, log_index: 1 }), 201);
    assert.deepEqual(await balance(api, 'BTC'), { available: '1.00000000', held: '0.00000000' });
    const blank = await indexer({ ...output, tx_hash: '   ' });
    expectStatus(blank, 422);
    assert.equal(errorBody(blank.body).field, 'tx_hash');
  });

  it('payments migration 033 rewrites the ids earlier releases stored as spelled, leaving a transaction recorded twice alone', async () => {
    const api = await organisation();
    const [first, second, third] = [
      await address(api, 'bitcoin', 'BTC'),
      await address(api, 'bitcoin', 'BTC'),
      await address(api, 'bitcoin', 'BTC'),
    ];
    const output = (to: string, txHash: string) => ({
      network: 'bitcoin',
      address: to,
      asset: 'BTC',
      amount: '0.10000000',
      tx_hash: txHash,
      confirmations: 3,
    });
    const old = (await indexer(output(first.address, 'c0ffee01'))).json() as DepositJson;
    const twin = (await indexer(output(second.address, 'f00d01'))).json() as DepositJson;
    const twinToo = (await indexer(output(third.address, 'f00d02'))).json() as DepositJson;
    // As an earlier release stored them: the indexer's spelling, and one transaction under two spellings.
    assert.deepEqual(
      await depositsAfterMigration(t.db.pool, 33, 'tx_hash', {
        [old.id]: ' C0FFEE01',
        [twin.id]: 'F00D01',
        [twinToo.id]: 'f00d01',
      }),
      { [old.id]: 'c0ffee01', [twin.id]: 'F00D01', [twinToo.id]: 'f00d01' },
    );
    // The rewritten deposit's next notification, in any spelling, finds it and credits nothing more.
    const repeat = await indexer(output(first.address, 'C0FFEE01'));
    expectStatus(repeat, 200);
    assert.equal(repeat.json().id, old.id);
    assert.deepEqual(await balance(api, 'BTC'), { available: '0.30000000', held: '0.00000000' });
  });

  it('answers identical notifications arriving together as it answers a repeat, and credits once', async () => {
    const api = await organisation();
    const target = await address(api);
    let credited = new Decimal(0);
    for (let round = 0; round < 6; round++) {
      // Odd rounds land on an address a pending deposit waits on (its own), which the first one takes over.
      let waiting: string | undefined;
      let to = target.address;
      if (round % 2 === 1) {
        const pending = await api.post(DEPOSITS, { method: 'crypto', currency: 'USDC', network: 'ethereum' });
        assert.equal(pending.statusCode, 201, pending.body);
        waiting = pending.json().id as string;
        to = pending.json().instructions.address as string;
      }
      const amount = `${round + 1}.250000`;
      const notification = {
        network: 'ethereum',
        address: to,
        asset: 'USDC',
        amount,
        tx_hash: `0xtogether${round}`,
        ...(round < 3 ? { log_index: round } : {}),
        confirmations: 12,
      };
      const together = await Promise.all(
        Array.from({ length: 2 + (round % 3) }, () => indexer(notification)),
      );
      const repeat = await indexer(notification);
      assert.equal(repeat.statusCode, 200, repeat.body);
      const deposit = repeat.json() as DepositJson;
      if (waiting !== undefined) assert.equal(deposit.id, waiting);
      assert.deepEqual(
        [deposit.status, deposit.received_amount, deposit.tx_hash],
        ['received', amount, notification.tx_hash],
      );
      // Exactly one of them created the deposit; every other one is answered as the repeat is.
      assert.deepEqual(
        together.map((answer) => answer.statusCode).sort(),
        [...Array(together.length - 1).fill(200), 201],
        together.map((answer) => answer.body).join('\n'),
      );
      for (const answer of together) assert.deepEqual(answer.json(), deposit);
      const rows = await t.db.pool.query<{ id: string }>(
        `SELECT id FROM deposits
         WHERE network = 'ethereum' AND tx_hash = $1 AND coalesce(log_index, -1) = coalesce($2::integer, -1)`,
        [notification.tx_hash, notification.log_index ?? null],
      );
      assert.deepEqual(
        rows.rows.map((row) => row.id),
        [deposit.id],
      );
      assert.deepEqual(
        (await transactionsOf(api, deposit.id)).map((entry) => [entry.type, entry.amount]),
        [['deposit', amount]],
      );
      credited = credited.plus(amount);
    }
    assert.deepEqual(await balance(api, 'USDC'), {
      available: new Decimal('1000000').plus(credited).toFixed(6),
      held: '0.000000',
    });
  });

  it('holds a deposit detected until its confirmations, then receives it', async () => {
    const api = await organisation();
    const target = await address(api, 'polygon', 'USDT');
    const seen = await indexer({
      network: 'polygon',
      address: target.address,
      asset: 'USDT',
      amount: '10.000000',
      tx_hash: '0xdef',
      confirmations: 5,
    });
    assert.equal(seen.json().status, 'detected');
    assert.deepEqual(await balance(api, 'USDT'), { available: 'none', held: 'none' });
    const confirmed = await indexer({
      network: 'polygon',
      address: target.address,
      asset: 'USDT',
      amount: '10.000000',
      tx_hash: '0xdef',
      confirmations: 128,
    });
    assert.equal(confirmed.statusCode, 200);
    assert.equal(confirmed.json().status, 'received');
    assert.deepEqual(await balance(api, 'USDT'), { available: '10.000000', held: '0.000000' });
    assert.deepEqual(
      (await eventsOf(t, seen.json().id)).map((event) => [event.code, event.previous]),
      [
        ['deposit.created', null],
        ['deposit.detected', 'pending'],
        ['deposit.received', 'detected'],
      ],
    );
  });

  it('refuses with 400 INVALID_STATE a report of an output whose deposit the operator failed or reversed, and credits nothing', async () => {
    const api = await organisation();
    const target = await address(api);
    const output = { network: 'ethereum', address: target.address, asset: 'USDC', amount: '40.000000' };
    // Detected, then failed by the operator (dropped, they judged), then reported mined after all.
    const dropped = (await indexer({ ...output, tx_hash: '0xfa11', confirmations: 1 })).json() as DepositJson;
    assert.equal(
      (await operator(`/admin/v1/deposits/${dropped.id}/fail`, { failure_reason: 'dropped' })).statusCode,
      200,
    );
    // Received, then reversed by the operator, then reported again.
    const taken = (await indexer({ ...output, tx_hash: '0x7e7e', confirmations: 12 })).json() as DepositJson;
    assert.equal((await operator(`/admin/v1/deposits/${taken.id}/reverse`)).statusCode, 200);
    for (const [txHash, deposit, status] of [
      ['0xFA11', dropped, 'failed'],
      ['0x7e7e', taken, 'reversed'],
    ] as const) {
      for (const confirmations of [1, 12]) {
        const again = await indexer({ ...output, tx_hash: txHash, confirmations });
        assert.equal(again.statusCode, 400, again.body);
        assert.deepEqual(
          [errorBody(again.body).code, errorBody(again.body).error],
          [
            'INVALID_STATE',
            `The output ${txHash.toLowerCase()} on ethereum is recorded on deposit ${deposit.id}, which is ${status}: it is not recorded or credited again`,
          ],
        );
      }
    }
    // The received one was credited once and debited back once; the failed one never moved money.
    assert.deepEqual(await balance(api, 'USDC'), { available: '1000000.000000', held: '0.000000' });
    assert.deepEqual((await transactionsOf(api, dropped.id)).length, 0);
    assert.deepEqual(
      (await transactionsOf(api, taken.id)).map((entry) => [entry.type, entry.amount]),
      [
        ['deposit', '40.000000'],
        ['adjustment', '-40.000000'],
      ],
    );
  });

  it('still credits a deposit to a disabled address', async () => {
    const api = await organisation();
    const target = await address(api);
    assert.equal((await api.post(`${ADDRESSES}/${target.id}/disable`)).statusCode, 200);
    const credited = await indexer({
      network: 'ethereum',
      address: target.address.toLowerCase(),
      asset: 'USDC',
      amount: '1.000000',
      tx_hash: '0xdis',
      confirmations: 20,
    });
    assert.equal(credited.statusCode, 201, credited.body);
    assert.equal(credited.json().status, 'received');
  });

  it('refuses unknown addresses and assets a network does not carry', async () => {
    const api = await organisation();
    const target = await address(api);
    const unknown = await indexer({
      network: 'ethereum',
      address: '0x0000000000000000000000000000000000000001',
      asset: 'USDC',
      amount: '1.000000',
      tx_hash: '0x1',
      confirmations: 1,
    });
    assert.equal(unknown.statusCode, 404);
    const btc = await indexer({
      network: 'ethereum',
      address: target.address,
      asset: 'BTC',
      amount: '1.00000000',
      tx_hash: '0x2',
      confirmations: 1,
    });
    assert.equal(btc.statusCode, 422);
    assert.equal(errorBody(btc.body).field, 'asset');
    const fine = await indexer({
      network: 'ethereum',
      address: target.address,
      asset: 'USDC',
      amount: '1.0000001',
      tx_hash: '0x3',
      confirmations: 1,
    });
    assert.equal(errorBody(fine.body).field, 'amount');
  });

  it('records a simulated deposit together with its next block, or neither: a retry with the same key then succeeds', async () => {
    const api = await organisation();
    const target = await address(api, 'polygon', 'USDC');
    const send = () =>
      api.post(
        '/api/v1/sandbox/crypto/deposits',
        { address: target.address, asset: 'USDC', amount: '7.000000' },
        { 'Idempotency-Key': `block-${target.id}` },
      );
    await t.db.pool.query(
      `CREATE FUNCTION refuse_block() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN RAISE EXCEPTION 'no next block'; END $$;
       CREATE TRIGGER refuse_block BEFORE INSERT ON jobs FOR EACH ROW
         WHEN (NEW.kind = 'crypto.sandbox_confirm') EXECUTE FUNCTION refuse_block();`,
    );
    let failed: Awaited<ReturnType<typeof send>>;
    try {
      failed = await send();
    } finally {
      await t.db.pool.query('DROP TRIGGER refuse_block ON jobs; DROP FUNCTION refuse_block()');
    }
    assert.equal(failed.statusCode, 500);
    const deposits = () =>
      t.db.pool.query<{ status: string }>('SELECT status FROM deposits WHERE address = $1', [target.address]);
    assert.deepEqual((await deposits()).rows, [], 'the deposit went with its next block');
    const retried = await send();
    assert.equal(retried.statusCode, 201, retried.body);
    assert.equal(retried.headers['idempotent-replayed'], undefined);
    await waitUntil(async () => (await deposits()).rows[0]?.status === 'received', 'deposit received');
  });

  it('simulates funds in the sandbox: detected at once, received when the confirmations come', async () => {
    const api = await organisation();
    const target = await address(api, 'tron', 'USDT');
    const response = await api.post('/api/v1/sandbox/crypto/deposits', {
      address: target.address,
      asset: 'USDT',
      amount: '42.000000',
    });
    assert.equal(response.statusCode, 201, response.body);
    const deposit = response.json() as DepositJson;
    assert.deepEqual([deposit.status, deposit.network, deposit.confirmations], ['detected', 'tron', 1]);
    await waitUntil(
      async () => (await api.get(`/api/v1/payments/deposits/${deposit.id}`)).json().status === 'received',
      'condition',
    );
    assert.equal((await api.get(`/api/v1/payments/deposits/${deposit.id}`)).json().confirmations, 19);
    const foreign = await apiClient(t, await t.tenant()).post('/api/v1/sandbox/crypto/deposits', {
      address: target.address,
      asset: 'USDT',
      amount: '1.000000',
    });
    assert.equal(foreign.statusCode, 404);
  });

  it('funds a transfer on the sandbox USDC -> MXN corridor through its own address, to completion', async () => {
    const api = await organisation();
    const ben = await beneficiary(t, api, '032180000118359719', 'MXN', 'active', 'Frida Kahlo', 'MX');
    const quote = await api.post('/api/v1/transfers/quotes', {
      corridor_id: 'cor_0000SANDBX0000000000000012',
      source_amount: '100.000000',
    });
    assert.equal(quote.statusCode, 201, quote.body);
    // D20's confirm body has no network: USDC arrives on its first offered network in D22's order.
    const confirmed = await api.post(`/api/v1/transfers/quotes/${quote.json().id}/confirm`, {
      beneficiary_id: ben,
      funding_method: 'crypto',
    });
    assert.equal(confirmed.statusCode, 201, confirmed.body);
    const transfer = confirmed.json() as {
      id: string;
      status: string;
      deposit_instructions: Record<string, string>;
    };
    assert.equal(transfer.status, 'awaiting_deposit');
    const instructions = transfer.deposit_instructions;
    assert.deepEqual(
      [instructions.type, instructions.network, instructions.asset, instructions.amount],
      ['crypto', 'ethereum', 'USDC', '100.000000'],
    );
    assert.match(instructions.address!, /^0x[0-9a-fA-F]{40}$/);
    const sent = await api.post('/api/v1/sandbox/crypto/deposits', {
      address: instructions.address,
      asset: 'USDC',
      amount: '100.000000',
    });
    assert.equal(sent.statusCode, 201, sent.body);
    await waitUntil(
      async () => (await api.get(`/api/v1/transfers/${transfer.id}`)).json().status === 'completed',
      'condition',
    );
    assert.deepEqual(await balance(api, 'USDC'), { available: '1000000.000000', held: '0.000000' });
  });

  it('opens a crypto deposit without a network on the first offered network of D22 that carries its asset', async () => {
    const api = await organisation();
    const opened = async (body: Record<string, unknown>) => {
      const response = await api.post(DEPOSITS, { method: 'crypto', ...body });
      assert.equal(response.statusCode, 201, response.body);
      const deposit = response.json() as {
        instructions: { network: string; asset: string; address: string };
      };
      return [
        deposit.instructions.network,
        deposit.instructions.asset,
        deposit.instructions.address.match(/^(0x|tb1q|T)/)?.[0],
      ];
    };
    assert.deepEqual(await opened({ currency: 'USDC' }), ['ethereum', 'USDC', '0x']);
    assert.deepEqual(await opened({ currency: 'USDT' }), ['ethereum', 'USDT', '0x']);
    assert.deepEqual(await opened({ currency: 'BTC' }), ['bitcoin', 'BTC', 'tb1q']);
    assert.deepEqual(await opened({ currency: 'USDT', network: 'tron' }), ['tron', 'USDT', 'T']);
  });

  it("refuses at confirm a funding its deposit leg could not take, naming the confirm's fields, also for a name a screening would hold", async () => {
    const api = await organisation();
    const ben = await beneficiary(t, api, '032180000118359719', 'MXN', 'active', 'Sanctioned Person', 'MX');
    const quote = await api.post('/api/v1/transfers/quotes', {
      corridor_id: 'cor_0000SANDBX0000000000000012',
      source_amount: '100.000000',
    });
    assert.equal(quote.statusCode, 201, quote.body);
    const cases: [Record<string, unknown>, string, string][] = [
      [
        { funding_method: 'crypto', network: 'bitcoin' },
        'network',
        'bitcoin does not carry USDC; it carries BTC',
      ],
      [
        { funding_method: 'bank_transfer' },
        'funding_method',
        'Bank transfers in USDC cannot be received (no collection account); fund the transfer another way',
      ],
    ];
    for (const [body, field, message] of cases) {
      const refused = await api.post(`/api/v1/transfers/quotes/${quote.json().id}/confirm`, {
        beneficiary_id: ben,
        ...body,
      });
      assert.equal(refused.statusCode, 422, refused.body);
      const error = errorBody(refused.body);
      assert.deepEqual([error.code, error.field, error.error], ['VALIDATION_FAILED', field, message]);
    }
    assert.equal((await api.get(`/api/v1/transfers/quotes/${quote.json().id}`)).json().status, 'open');
    assert.equal((await api.post('/api/v1/transfers/search', {})).json().total, 0, 'no transfer was created');
  });
});
