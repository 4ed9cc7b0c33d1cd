// A crypto-funded transfer and the on-chain transactions to its address (D20, D22): each transaction is a
// deposit of its own; one to the address the transfer shows while it awaits its deposit is the
// transfer's, and the first of at least the source amount to be credited funds it. A transaction on
// another network, to an address the transfer no longer shows, or after the transfer stopped waiting is
// credited to the balance. No job runner: every status seen is the one the notifications left.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ledgerViolations } from '../../src/balances/repository.ts';
import { errorBody, startTestApp, TEST_ADMIN_KEY, type TestApp } from '../helpers/app.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';
import {
  balance,
  beneficiary,
  createBeneficiaryTable,
  DEPOSITS,
  eventsOf,
  expectStatus,
  testBeneficiaries,
  transactionsOf,
} from '../payments/fixtures.ts';
import { activeSubscription, client } from '../webhooks/fixtures.ts';

const QUOTES = '/api/v1/transfers/quotes';
const USDC_MXN = 'cor_0000SANDBX0000000000000012';

interface DepositJson {
  id: string;
  status: string;
  transfer_id: string | null;
  network: string | null;
  expected_amount: string | null;
  received_amount: string | null;
}

interface TransferJson {
  id: string;
  status: string;
  status_reason: string | null;
  fee_amount: string;
  deposit_instructions: { address: string; amount: string; network: string };
  deposit: DepositJson;
}

describe('deposits of a crypto-funded transfer (D20, D22)', () => {
  let t: TestApp;
  let required: Record<string, number>;
  before(async () => {
    t = await startTestApp({ env: { SANDBOX_STEP_DELAY_MS: '0' }, extraAreas: [testBeneficiaries] });
    await createBeneficiaryTable(t);
    const api = apiClient(t, await t.tenant());
    const networks = (await api.get('/api/v1/crypto/networks')).json() as {
      code: string;
      confirmations_required: number;
    }[];
    required = Object.fromEntries(networks.map((network) => [network.code, network.confirmations_required]));
  });
  after(async () => {
    await t.close();
  });

  let hashes = 0;
  /** A transaction hash of its own. */
  const txHash = () => `0x${(++hashes).toString(16).padStart(64, '0')}`;

  /** An organisation and a 100 USDC -> MXN transfer awaiting its deposit on Ethereum. */
  async function awaitingTransfer(): Promise<{ api: ApiClient; transfer: TransferJson }> {
    const tenant = await t.tenant();
    await activeSubscription(client(t, tenant), {
      event_type_codes: [
        'deposit.created',
        'deposit.detected',
        'deposit.received',
        'transfer.created',
        'transfer.processing',
        'transfer.cancelled',
      ],
    });
    const api = apiClient(t, tenant);
    const ben = await beneficiary(t, api, '032180000118359719', 'MXN', 'active', 'Frida Kahlo', 'MX');
    const quote = await api.post(QUOTES, { corridor_id: USDC_MXN, source_amount: '100.000000' });
    assert.equal(quote.statusCode, 201, quote.body);
    const confirmed = await api.post(`${QUOTES}/${quote.json().id}/confirm`, {
      beneficiary_id: ben,
      funding_method: 'crypto',
      network: 'ethereum',
    });
    assert.equal(confirmed.statusCode, 201, confirmed.body);
    const transfer = confirmed.json() as TransferJson;
    assert.equal(transfer.status, 'awaiting_deposit');
    assert.equal(transfer.deposit_instructions.amount, '100.000000');
    return { api, transfer };
  }

  /** The chain indexer's notification of `amount` USDC to `address`; `hash` repeats an earlier transaction. */
  async function arrives(
    address: string,
    amount: string,
    confirmations: 'detected' | 'confirmed',
    hash: string,
    network = 'ethereum',
  ): Promise<DepositJson> {
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/crypto/deposits',
      headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' },
      payload: JSON.stringify({
        network,
        address,
        asset: 'USDC',
        amount,
        tx_hash: hash,
        confirmations: confirmations === 'detected' ? 1 : required[network],
      }),
    });
    assert.ok(response.statusCode === 200 || response.statusCode === 201, response.body);
    return response.json() as DepositJson;
  }

  const transferOf = async (api: ApiClient, id: string) =>
    (await api.get(`/api/v1/transfers/${id}`)).json() as TransferJson;
  const depositsOf = async (api: ApiClient, transferId: string) =>
    (
      (
        await api.post(`${DEPOSITS}/search`, {
          filters: { transfer_id: [transferId] },
          sort_by: 'created_at',
          sort_direction: 'asc',
        })
      ).json() as { items: DepositJson[] }
    ).items.map((deposit) => [deposit.id, deposit.status, deposit.received_amount]);
  const brief = (deposit: DepositJson) => [
    deposit.status,
    deposit.transfer_id,
    deposit.network,
    deposit.expected_amount,
    deposit.received_amount,
  ];
  /** The transfer's own balance transactions: the source amount taken once. */
  const fundedOnce = async (api: ApiClient, transfer: TransferJson) => {
    const fee = transfer.fee_amount;
    const net = (100 - Number(fee)).toFixed(6);
    assert.deepEqual(
      (await transactionsOf(api, transfer.id)).map((entry) => [entry.type, entry.amount]),
      [
        ['transfer_funding', `-${net}`],
        ['fee', `-${fee}`],
      ],
    );
  };
  const transferEvents = [
    { code: 'transfer.created', previous: null, status: 'awaiting_deposit' },
    { code: 'transfer.processing', previous: 'awaiting_deposit', status: 'processing' },
  ];

  it("refuses the sandbox's simulated funding while a transaction to the transfer's address awaits its confirmations", async () => {
    const { api, transfer } = await awaitingTransfer();
    const hash = txHash();
    const seen = await arrives(transfer.deposit_instructions.address, '100.000000', 'detected', hash);
    assert.equal(seen.id, transfer.deposit.id);
    const simulated = await api.post(`/api/v1/sandbox/transfers/${transfer.id}/fund`, {
      amount: '250.000000',
    });
    expectStatus(simulated, 400);
    assert.deepEqual(
      [errorBody(simulated.body).code, errorBody(simulated.body).error],
      [
        'INVALID_STATE',
        `The transfer's deposit ${seen.id} is detected: it is credited with the amount that arrived when its confirmations come`,
      ],
    );
    assert.deepEqual(
      brief(await arrives(transfer.deposit_instructions.address, '100.000000', 'confirmed', hash)),
      ['received', transfer.id, 'ethereum', '100.000000', '100.000000'],
    );
    assert.equal((await transferOf(api, transfer.id)).status, 'processing');
    await fundedOnce(api, transfer);
  });

  it('funds the transfer with a full transaction to its address while a smaller one there awaits its confirmations', async () => {
    const { api, transfer } = await awaitingTransfer();
    const address = transfer.deposit_instructions.address;
    const small = txHash();
    const first = await arrives(address, '50.000000', 'detected', small);
    assert.equal(first.id, transfer.deposit.id, "the first transaction takes the transfer's leg");
    assert.deepEqual(brief(first), ['detected', transfer.id, 'ethereum', '100.000000', '50.000000']);
    const waiting = await transferOf(api, transfer.id);
    assert.deepEqual(
      [waiting.status, waiting.deposit_instructions.address, waiting.deposit_instructions.amount],
      ['awaiting_deposit', address, '100.000000'],
    );

    // The payer sends the amount the transfer still shows to the address it still shows.
    const full = await arrives(address, '100.000000', 'confirmed', txHash());
    assert.notEqual(full.id, first.id, 'each transaction is a deposit of its own');
    assert.deepEqual(brief(full), ['received', transfer.id, 'ethereum', '100.000000', '100.000000']);
    const funded = await transferOf(api, transfer.id);
    assert.deepEqual(
      [funded.status, funded.status_reason, funded.deposit.id, funded.deposit_instructions.address],
      ['processing', null, full.id, address],
    );

    // The first transaction confirms after: credited to the balance, the transfer already funded.
    const late = await arrives(address, '50.000000', 'confirmed', small);
    assert.deepEqual(brief(late), ['received', transfer.id, 'ethereum', '100.000000', '50.000000']);
    const now = await transferOf(api, transfer.id);
    assert.deepEqual(
      [now.status, now.deposit.id, now.deposit_instructions.address],
      ['processing', full.id, address],
    );
    assert.deepEqual(await depositsOf(api, transfer.id), [
      [first.id, 'received', '50.000000'],
      [full.id, 'received', '100.000000'],
    ]);
    assert.deepEqual(await balance(api, 'USDC'), { available: '1000050.000000', held: '0.000000' });
    await fundedOnce(api, transfer);
    assert.deepEqual(
      (await transactionsOf(api, first.id)).map((entry) => [entry.type, entry.amount]),
      [['deposit', '50.000000']],
    );
    assert.deepEqual(
      (await transactionsOf(api, full.id)).map((entry) => [entry.type, entry.amount]),
      [['deposit', '100.000000']],
    );
    assert.deepEqual(await eventsOf(t, transfer.id), transferEvents);
    assert.deepEqual(await eventsOf(t, full.id), [
      { code: 'deposit.created', previous: null, status: 'pending' },
      { code: 'deposit.received', previous: 'pending', status: 'received' },
    ]);
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
  });

  it('waits on a full transaction in flight when a smaller one there confirms first, and asks for nothing again', async () => {
    const { api, transfer } = await awaitingTransfer();
    const address = transfer.deposit_instructions.address;
    const small = txHash();
    const big = txHash();
    const first = await arrives(address, '50.000000', 'detected', small);
    const second = await arrives(address, '100.000000', 'detected', big);
    assert.deepEqual(brief(second), ['detected', transfer.id, 'ethereum', '100.000000', '100.000000']);

    await arrives(address, '50.000000', 'confirmed', small);
    const waiting = await transferOf(api, transfer.id);
    assert.deepEqual(
      [
        waiting.status,
        waiting.status_reason,
        waiting.deposit.id,
        waiting.deposit.status,
        waiting.deposit_instructions.address,
        waiting.deposit_instructions.amount,
      ],
      [
        'awaiting_deposit',
        `deposit ${first.id} brought 50.000000 USDC, less than the source amount; it was credited to the balance`,
        second.id,
        'detected',
        address,
        '100.000000',
      ],
    );

    await arrives(address, '100.000000', 'confirmed', big);
    const funded = await transferOf(api, transfer.id);
    assert.deepEqual(
      [funded.status, funded.status_reason, funded.deposit.id],
      ['processing', null, second.id],
    );
    assert.deepEqual(await depositsOf(api, transfer.id), [
      [first.id, 'received', '50.000000'],
      [second.id, 'received', '100.000000'],
    ]);
    assert.deepEqual(await balance(api, 'USDC'), { available: '1000050.000000', held: '0.000000' });
    await fundedOnce(api, transfer);
    assert.deepEqual(await eventsOf(t, transfer.id), transferEvents);
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
  });

  it('funds the transfer with its full first transaction when a smaller later one confirms before it', async () => {
    const { api, transfer } = await awaitingTransfer();
    const address = transfer.deposit_instructions.address;
    const big = txHash();
    const small = txHash();
    const first = await arrives(address, '100.000000', 'detected', big);
    const second = await arrives(address, '50.000000', 'detected', small);
    assert.deepEqual(brief(second), ['detected', transfer.id, 'ethereum', '100.000000', '50.000000']);

    await arrives(address, '50.000000', 'confirmed', small);
    const waiting = await transferOf(api, transfer.id);
    assert.deepEqual(
      [waiting.status, waiting.status_reason, waiting.deposit.id, waiting.deposit_instructions.address],
      [
        'awaiting_deposit',
        `deposit ${second.id} brought 50.000000 USDC, less than the source amount; it was credited to the balance`,
        first.id,
        address,
      ],
    );

    await arrives(address, '100.000000', 'confirmed', big);
    const funded = await transferOf(api, transfer.id);
    assert.deepEqual(
      [funded.status, funded.status_reason, funded.deposit.id],
      ['processing', null, first.id],
    );
    assert.deepEqual(await balance(api, 'USDC'), { available: '1000050.000000', held: '0.000000' });
    await fundedOnce(api, transfer);
    assert.deepEqual(await eventsOf(t, transfer.id), transferEvents);
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
  });

  it('credits to the balance a transaction to an address the transfer no longer shows, or after it stopped waiting', async () => {
    // An under-payment confirmed: the transfer asks again at a new address; the first address is no longer its.
    const replaced = await awaitingTransfer();
    const oldAddress = replaced.transfer.deposit_instructions.address;
    await arrives(oldAddress, '50.000000', 'confirmed', txHash());
    const asked = await transferOf(replaced.api, replaced.transfer.id);
    assert.notEqual(asked.deposit_instructions.address, oldAddress);
    const stray = await arrives(oldAddress, '100.000000', 'confirmed', txHash());
    assert.deepEqual(brief(stray), ['received', null, 'ethereum', null, '100.000000']);
    const still = await transferOf(replaced.api, replaced.transfer.id);
    assert.deepEqual([still.status, still.deposit.id], ['awaiting_deposit', asked.deposit.id]);
    assert.deepEqual(await balance(replaced.api, 'USDC'), { available: '1000150.000000', held: '0.000000' });

    // Funded: a further transaction to its address is the balance's.
    const funded = await awaitingTransfer();
    const fundedAddress = funded.transfer.deposit_instructions.address;
    await arrives(fundedAddress, '100.000000', 'confirmed', txHash());
    const after = await arrives(fundedAddress, '30.000000', 'confirmed', txHash());
    assert.deepEqual(brief(after), ['received', null, 'ethereum', null, '30.000000']);
    const processing = await transferOf(funded.api, funded.transfer.id);
    assert.deepEqual([processing.status, processing.deposit.id], ['processing', funded.transfer.deposit.id]);
    assert.deepEqual(await balance(funded.api, 'USDC'), { available: '1000030.000000', held: '0.000000' });

    // Cancelled while a first transaction awaited its confirmations: a further one is the balance's.
    const cancelled = await awaitingTransfer();
    const cancelledAddress = cancelled.transfer.deposit_instructions.address;
    const pending = txHash();
    await arrives(cancelledAddress, '50.000000', 'detected', pending);
    const cancel = await cancelled.api.post(`/api/v1/transfers/${cancelled.transfer.id}/cancel`);
    assert.equal(cancel.statusCode, 200, cancel.body);
    const afterCancel = await arrives(cancelledAddress, '100.000000', 'confirmed', txHash());
    assert.deepEqual(brief(afterCancel), ['received', null, 'ethereum', null, '100.000000']);
    await arrives(cancelledAddress, '50.000000', 'confirmed', pending);
    const stopped = await transferOf(cancelled.api, cancelled.transfer.id);
    assert.deepEqual([stopped.status, stopped.deposit.id], ['cancelled', cancelled.transfer.deposit.id]);
    assert.deepEqual(await balance(cancelled.api, 'USDC'), { available: '1000150.000000', held: '0.000000' });
    assert.deepEqual(await eventsOf(t, cancelled.transfer.id), [
      { code: 'transfer.created', previous: null, status: 'awaiting_deposit' },
      { code: 'transfer.cancelled', previous: 'awaiting_deposit', status: 'cancelled' },
    ]);
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
  });

  it("credits to the balance, from that network's rail, a transaction on another network to the transfer's address", async () => {
    const { api, transfer } = await awaitingTransfer();
    const address = transfer.deposit_instructions.address;
    assert.equal(transfer.deposit_instructions.network, 'ethereum');
    // An Ethereum address is an account on Polygon too: the chain delivers what is sent there.
    const other = await arrives(address, '100.000000', 'confirmed', txHash(), 'polygon');
    assert.notEqual(other.id, transfer.deposit.id, "the transfer's leg waits for an Ethereum transaction");
    assert.deepEqual(brief(other), ['received', null, 'polygon', null, '100.000000']);
    const rails = await t.db.pool.query<{ account_name: string; amount: string }>(
      'SELECT account_name, amount::text FROM ledger_entries WHERE resource_id = $1 AND organisation_id IS NULL',
      [other.id],
    );
    assert.deepEqual(rails.rows, [{ account_name: 'rail:crypto:polygon', amount: '-100.000000' }]);
    const waiting = await transferOf(api, transfer.id);
    assert.deepEqual(
      [waiting.status, waiting.deposit.id, waiting.deposit.status, waiting.deposit.network],
      ['awaiting_deposit', transfer.deposit.id, 'pending', 'ethereum'],
    );
    assert.deepEqual(await balance(api, 'USDC'), { available: '1000100.000000', held: '0.000000' });

    // The same amount on Ethereum, with Ethereum's confirmations, funds it.
    const own = await arrives(address, '100.000000', 'confirmed', txHash());
    assert.equal(own.id, transfer.deposit.id);
    assert.deepEqual(brief(own), ['received', transfer.id, 'ethereum', '100.000000', '100.000000']);
    assert.equal((await transferOf(api, transfer.id)).status, 'processing');
    assert.deepEqual(await balance(api, 'USDC'), { available: '1000100.000000', held: '0.000000' });
    await fundedOnce(api, transfer);
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
  });
});
