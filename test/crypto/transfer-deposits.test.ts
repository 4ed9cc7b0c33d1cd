// A crypto-funded transfer and the on-chain transactions to its address (D20, D22): a transaction on
// another network than the transfer's is credited to the balance. No job runner: every status seen is
// the one the notifications left.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ledgerViolations } from '../../src/balances/repository.ts';
import { startTestApp, TEST_ADMIN_KEY, type TestApp } from '../helpers/app.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';
import {
  balance,
  beneficiary,
  createBeneficiaryTable,
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
