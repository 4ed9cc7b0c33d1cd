// Crypto networks and deposit addresses over HTTP (D22): the networks on offer, create / get / disable /
// search, events, isolation, idempotency keys, never-reused indexes across two app instances, the
// production rules for a family without a key, the look-up for inbound notifications, and the operator's
// view of the keys.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { createClient, createOrganisation } from '../../src/admin/service.ts';
import { loadConfig } from '../../src/config.ts';
import { encodeAddress } from '../../src/crypto/derivation.ts';
import { SANDBOX_ACCOUNT_KEYS } from '../../src/crypto/keys.ts';
import { cryptoArea } from '../../src/crypto/module.ts';
import type { KeyFamily } from '../../src/crypto/networks.ts';
import { depositNetwork, findAddressByNetworkAndAddress } from '../../src/crypto/service.ts';
import { createPool } from '../../src/db/pool.ts';
import type { AppDeps } from '../../src/platform/deps.ts';
import { AppError } from '../../src/platform/errors.ts';
import {
  errorBody,
  requestToken,
  startTestApp,
  TEST_ADMIN_KEY,
  TEST_ENCRYPTION_KEY,
  type Tenant,
  type TestApp,
} from '../helpers/app.ts';
import { storedEnvelope } from '../helpers/event-payloads.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';
import { activeSubscription, client } from '../webhooks/fixtures.ts';

const NETWORKS_URL = '/api/v1/crypto/networks';
const ADDRESSES = '/api/v1/crypto/deposit-addresses';
const SEARCH = `${ADDRESSES}/search`;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const DAD_ID = /^dad_[0-9A-HJKMNP-TV-Z]{26}$/;

const root = HDKey.fromMasterSeed(
  mnemonicToSeedSync(
    'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about',
  ),
);
const FAMILY_OF: Record<string, KeyFamily> = {
  ethereum: 'evm',
  polygon: 'evm',
  tron: 'tron',
  bitcoin: 'bitcoin',
};

interface AddressJson {
  id: string;
  network: string;
  asset: string;
  address: string;
  derivation_path: string;
  status: string;
  label: string | null;
  external_id: string | null;
  created_at: string;
  updated_at: string;
  disabled_at: string | null;
}
interface PageJson {
  items: AddressJson[];
  total: number;
  page: number;
  page_size: number;
}

/** What a wallet holding the test mnemonic shows at `path` (private derivation from the seed). */
function walletAddress(network: string, path: string): string {
  const family = FAMILY_OF[network]!;
  return encodeAddress(
    family,
    root.derive(path).publicKey!,
    network === 'bitcoin' && path.startsWith("m/84'/1'"),
  );
}

const indexOf = (address: AddressJson): number => Number(address.derivation_path.split('/').at(-1));

function expectError(
  response: { statusCode: number; body: string },
  status: number,
  code: string,
  field?: string,
) {
  assert.equal(response.statusCode, status, response.body);
  const body = errorBody(response.body);
  assert.equal(body.code, code, response.body);
  assert.equal(body.field, field, `field of ${response.body}`);
  return body;
}

async function create(api: ApiClient, body: Record<string, unknown>, headers?: Record<string, string>) {
  const response = await api.post(ADDRESSES, body, headers);
  assert.equal(response.statusCode, 201, response.body);
  return response.json() as AddressJson;
}

describe('crypto networks and deposit addresses (sandbox)', () => {
  let t: TestApp;
  let api: ApiClient;
  before(async () => {
    t = await startTestApp();
    api = apiClient(t, await t.tenant());
  });
  after(() => t.close());

  it('lists the four networks, sorted by code, with their assets, confirmations and address format', async () => {
    const response = await api.get(NETWORKS_URL);
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), [
      {
        code: 'bitcoin',
        name: 'Bitcoin',
        assets: ['BTC'],
        confirmations_required: 3,
        address_format: 'bech32',
      },
      {
        code: 'ethereum',
        name: 'Ethereum',
        assets: ['USDC', 'USDT'],
        confirmations_required: 12,
        address_format: 'eip55',
      },
      {
        code: 'polygon',
        name: 'Polygon PoS',
        assets: ['USDC', 'USDT'],
        confirmations_required: 128,
        address_format: 'eip55',
      },
      {
        code: 'tron',
        name: 'Tron',
        assets: ['USDT', 'USDC'],
        confirmations_required: 19,
        address_format: 'base58check',
      },
    ]);
  });

  it('creates an address on every network: the one a wallet of the test mnemonic shows at the returned path', async () => {
    const cases: [string, string, RegExp, RegExp][] = [
      ['ethereum', 'USDC', /^m\/44'\/60'\/0'\/0\/\d+$/, /^0x[0-9a-fA-F]{40}$/],
      ['polygon', 'USDT', /^m\/44'\/60'\/0'\/0\/\d+$/, /^0x[0-9a-fA-F]{40}$/],
      ['tron', 'USDT', /^m\/44'\/195'\/0'\/0\/\d+$/, /^T[1-9A-HJ-NP-Za-km-z]{33}$/],
      ['bitcoin', 'BTC', /^m\/84'\/1'\/0'\/0\/\d+$/, /^tb1q[02-9ac-hj-np-z]{38}$/],
    ];
    for (const [network, asset, path, format] of cases) {
      const before = Date.now();
      const address = await create(api, {
        network,
        asset,
        label: `Label ${network}`,
        external_id: `ext-${network}`,
      });
      assert.deepEqual(Object.keys(address), [
        'id',
        'network',
        'asset',
        'address',
        'derivation_path',
        'status',
        'label',
        'external_id',
        'created_at',
        'updated_at',
        'disabled_at',
      ]);
      assert.match(address.id, DAD_ID);
      assert.equal(address.network, network);
      assert.equal(address.asset, asset);
      assert.match(address.derivation_path, path);
      assert.match(address.address, format);
      assert.equal(address.address, walletAddress(network, address.derivation_path));
      assert.equal(address.status, 'active');
      assert.equal(address.label, `Label ${network}`);
      assert.equal(address.external_id, `ext-${network}`);
      assert.equal(address.disabled_at, null);
      assert.match(address.created_at, ISO);
      assert.equal(address.updated_at, address.created_at);
      assert.ok(Date.parse(address.created_at) >= before - 1000);
    }
  });

  it('gives each address the next index of its key: ethereum and polygon share the EVM sequence, tron has its own', async () => {
    const first = await create(api, { network: 'ethereum', asset: 'USDT' });
    const second = await create(api, { network: 'polygon', asset: 'USDC' });
    const third = await create(api, { network: 'ethereum', asset: 'USDC' });
    assert.deepEqual([indexOf(second), indexOf(third)], [indexOf(first) + 1, indexOf(first) + 2]);
    assert.equal(new Set([first.address, second.address, third.address]).size, 3);
    const tronA = await create(api, { network: 'tron', asset: 'USDC' });
    const tronB = await create(api, { network: 'tron', asset: 'USDT' });
    assert.equal(indexOf(tronB), indexOf(tronA) + 1);
    const label = await create(api, { network: 'tron', asset: 'USDT' });
    assert.equal(label.label, null);
    assert.equal(label.external_id, null);
  });

  it('answers 422 for an unknown network, an unknown asset, an asset the network does not offer and bad fields', async () => {
    expectError(
      await api.post(ADDRESSES, { network: 'solana', asset: 'USDC' }),
      422,
      'VALIDATION_FAILED',
      'network',
    );
    expectError(
      await api.post(ADDRESSES, { network: 'ethereum', asset: 'ETH' }),
      422,
      'VALIDATION_FAILED',
      'asset',
    );
    const notOffered = expectError(
      await api.post(ADDRESSES, { network: 'ethereum', asset: 'BTC' }),
      422,
      'VALIDATION_FAILED',
      'asset',
    );
    assert.equal(notOffered.error, 'asset BTC is not offered on ethereum; it offers USDC, USDT');
    expectError(
      await api.post(ADDRESSES, { network: 'bitcoin', asset: 'USDT' }),
      422,
      'VALIDATION_FAILED',
      'asset',
    );
    expectError(await api.post(ADDRESSES, { asset: 'USDC' }), 422, 'VALIDATION_FAILED', 'network');
    expectError(
      await api.post(ADDRESSES, { network: 'tron', asset: 'USDT', colour: 'red' }),
      422,
      'VALIDATION_FAILED',
      'colour',
    );
    expectError(
      await api.post(ADDRESSES, { network: 'tron', asset: 'USDT', label: 'x'.repeat(201) }),
      422,
      'VALIDATION_FAILED',
      'label',
    );
    expectError(
      await api.post(ADDRESSES, { network: 'tron', asset: 'USDT', external_id: '' }),
      422,
      'VALIDATION_FAILED',
      'external_id',
    );
  });

  it('answers 409 for an external_id the organisation used already, and takes no index for it', async () => {
    const first = await create(api, { network: 'tron', asset: 'USDT', external_id: 'dup-1' });
    const again = await api.post(ADDRESSES, { network: 'ethereum', asset: 'USDC', external_id: 'dup-1' });
    expectError(again, 409, 'CONFLICT');
    const next = await create(api, { network: 'tron', asset: 'USDT' });
    assert.equal(indexOf(next), indexOf(first) + 1, 'the refused create left no gap');
    // Another organisation may use the same external_id.
    const other = apiClient(t, await t.tenant());
    assert.equal(
      (await create(other, { network: 'tron', asset: 'USDT', external_id: 'dup-1' })).external_id,
      'dup-1',
    );
  });

  it('reads an address by id; another organisation’s id, a malformed id and an unknown id are 404', async () => {
    const address = await create(api, { network: 'bitcoin', asset: 'BTC' });
    const read = await api.get(`${ADDRESSES}/${address.id}`);
    assert.equal(read.statusCode, 200);
    assert.deepEqual(read.json(), address);
    const other = apiClient(t, await t.tenant());
    expectError(await other.get(`${ADDRESSES}/${address.id}`), 404, 'NOT_FOUND');
    expectError(await api.get(`${ADDRESSES}/nope`), 404, 'NOT_FOUND');
    expectError(await api.get(`${ADDRESSES}/dad_01JD3V6M2Q8W1X4Y5Z6A7B8C9D`), 404, 'NOT_FOUND');
    expectError(await other.post(`${ADDRESSES}/${address.id}/disable`), 404, 'NOT_FOUND');
    assert.equal((await api.get(`${ADDRESSES}/${address.id}`)).json().status, 'active');
  });

  it('disables an address (200, repeatable) and publishes deposit_address.created and .disabled once each', async () => {
    const owner = apiClient(t, await t.tenant());
    const hooks = client(t, owner.tenant);
    await activeSubscription(hooks, {
      event_type_codes: ['deposit_address.created', 'deposit_address.disabled'],
    });
    const address = await create(owner, { network: 'ethereum', asset: 'USDC', label: 'evented' });

    const disabled = await owner.post(`${ADDRESSES}/${address.id}/disable`);
    assert.equal(disabled.statusCode, 200, disabled.body);
    const body = disabled.json() as AddressJson;
    assert.equal(body.status, 'disabled');
    assert.match(body.disabled_at!, ISO);
    assert.equal(body.updated_at, body.disabled_at);
    assert.deepEqual(
      { ...body, status: 'active', disabled_at: null, updated_at: address.updated_at },
      address,
    );

    const again = await owner.post(`${ADDRESSES}/${address.id}/disable`);
    assert.equal(again.statusCode, 200);
    assert.deepEqual(again.json(), body);
    assert.deepEqual((await owner.get(`${ADDRESSES}/${address.id}`)).json(), body);

    const events = await t.db.pool.query<{
      event_type_code: string;
      payload: string;
      source_object_type: string;
      source_object_id: string;
    }>(
      `SELECT event_type_code, payload, source_object_type, source_object_id FROM webhook_events
       WHERE organisation_id = $1 ORDER BY id`,
      [owner.tenant.organisationId],
    );
    assert.deepEqual(
      events.rows.map((row) => [row.event_type_code, row.source_object_type, row.source_object_id]),
      [
        ['deposit_address.created', 'deposit_address', address.id],
        ['deposit_address.disabled', 'deposit_address', address.id],
      ],
    );
    assert.deepEqual(storedEnvelope(t.deps, events.rows[0]!.payload).data, {
      object: address,
      previous_status: null,
    });
    assert.deepEqual(storedEnvelope(t.deps, events.rows[1]!.payload).data, {
      object: body,
      previous_status: 'active',
    });
  });

  it('searches by network, asset, status, external_id, and by address (any case) or label', async () => {
    const owner = apiClient(t, await t.tenant());
    const eth = await create(owner, {
      network: 'ethereum',
      asset: 'USDC',
      label: 'Alice wallet',
      external_id: 's-1',
    });
    const poly = await create(owner, { network: 'polygon', asset: 'USDT', label: 'Bob' });
    const tron = await create(owner, { network: 'tron', asset: 'USDT', external_id: 's-3' });
    const btc = await create(owner, { network: 'bitcoin', asset: 'BTC', label: 'alice cold' });
    await owner.post(`${ADDRESSES}/${poly.id}/disable`);
    // Another organisation's addresses never appear.
    await create(apiClient(t, await t.tenant()), {
      network: 'ethereum',
      asset: 'USDC',
      label: 'Alice wallet',
    });

    const ids = async (body: unknown) => {
      const response = await owner.post(SEARCH, body);
      assert.equal(response.statusCode, 200, response.body);
      const page = response.json() as PageJson;
      assert.equal(page.total, page.items.length);
      return page.items.map((item) => item.id);
    };
    assert.deepEqual(await ids({}), [btc.id, tron.id, poly.id, eth.id]);
    assert.deepEqual(await ids({ sort_direction: 'asc' }), [eth.id, poly.id, tron.id, btc.id]);
    assert.deepEqual(await ids({ filters: { network: ['ethereum', 'polygon'] } }), [poly.id, eth.id]);
    assert.deepEqual(await ids({ filters: { asset: ['USDT'] } }), [tron.id, poly.id]);
    assert.deepEqual(await ids({ filters: { status: ['disabled'] } }), [poly.id]);
    assert.deepEqual(await ids({ filters: { status: ['active'], asset: ['USDT'] } }), [tron.id]);
    assert.deepEqual(await ids({ filters: { external_id: ['s-1', 's-3'] } }), [tron.id, eth.id]);
    assert.deepEqual(await ids({ search: 'alice' }), [btc.id, eth.id]);
    assert.deepEqual(await ids({ search: eth.address.toLowerCase().slice(2, 30) }), [eth.id]);
    assert.deepEqual(await ids({ search: eth.address.toUpperCase().slice(2, 30) }), [eth.id]);
    assert.deepEqual(await ids({ search: tron.address }), [tron.id]);

    const page = (
      await owner.post(SEARCH, { page: 2, page_size: 3, sort_by: 'created_at' })
    ).json() as PageJson;
    assert.deepEqual([page.total, page.page, page.page_size, page.items.length], [4, 2, 3, 1]);
    expectError(
      await owner.post(SEARCH, { filters: { network: 'tron' } }),
      422,
      'VALIDATION_FAILED',
      'filters.network',
    );
    expectError(
      await owner.post(SEARCH, { filters: { status: ['gone'] } }),
      422,
      'VALIDATION_FAILED',
      'filters.status[0]',
    );
    expectError(await owner.post(SEARCH, { sort_by: 'address' }), 422, 'VALIDATION_FAILED', 'sort_by');
  });

  it('honours Idempotency-Key on create and disable: a repeat replays the first response and creates nothing', async () => {
    const owner = apiClient(t, await t.tenant());
    const headers = { 'idempotency-key': 'create-once' };
    const first = await owner.post(ADDRESSES, { network: 'tron', asset: 'USDT' }, headers);
    assert.equal(first.statusCode, 201);
    const replay = await owner.post(ADDRESSES, { network: 'tron', asset: 'USDT' }, headers);
    assert.equal(replay.statusCode, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body, first.body);
    expectError(
      await owner.post(ADDRESSES, { network: 'tron', asset: 'USDC' }, headers),
      422,
      'IDEMPOTENCY_KEY_REUSED',
      'Idempotency-Key',
    );
    const page = (await owner.post(SEARCH, {})).json() as PageJson;
    assert.equal(page.total, 1);

    const id = (first.json() as AddressJson).id;
    const disableHeaders = { 'idempotency-key': 'disable-once' };
    const disabled = await owner.post(`${ADDRESSES}/${id}/disable`, undefined, disableHeaders);
    assert.equal(disabled.statusCode, 200);
    const replayed = await owner.post(`${ADDRESSES}/${id}/disable`, undefined, disableHeaders);
    assert.equal(replayed.headers['idempotent-replayed'], 'true');
    assert.equal(replayed.body, disabled.body);
  });

  it('needs crypto:read to read and crypto:write to create or disable', async () => {
    const reader = apiClient(t, await t.tenant(['crypto:read']));
    assert.equal((await reader.get(NETWORKS_URL)).statusCode, 200);
    expectError(
      await reader.post(ADDRESSES, { network: 'tron', asset: 'USDT' }),
      403,
      'AUTHORIZATION_FAILED',
    );
    assert.equal((await reader.post(SEARCH, {})).statusCode, 200);
    const writer = apiClient(t, await t.tenant(['crypto:write']));
    expectError(await writer.get(NETWORKS_URL), 403, 'AUTHORIZATION_FAILED');
  });

  it('finds the organisation and address of an inbound notification, in any case, on either EVM network, disabled or not', async () => {
    const owner = apiClient(t, await t.tenant());
    const eth = await create(owner, { network: 'ethereum', asset: 'USDC' });
    const tron = await create(owner, { network: 'tron', asset: 'USDT' });
    const btc = await create(owner, { network: 'bitcoin', asset: 'BTC' });
    await owner.post(`${ADDRESSES}/${btc.id}/disable`);
    const pool = t.db.pool;

    for (const form of [eth.address, eth.address.toLowerCase(), `0x${eth.address.slice(2).toUpperCase()}`]) {
      const found = await findAddressByNetworkAndAddress(pool, 'ethereum', form);
      assert.deepEqual(found, { organisationId: owner.tenant.organisationId, depositAddress: eth });
    }
    const onPolygon = await findAddressByNetworkAndAddress(pool, 'polygon', eth.address.toLowerCase());
    assert.equal(onPolygon?.depositAddress.id, eth.id);
    assert.equal(onPolygon?.depositAddress.network, 'ethereum');

    assert.equal(
      (await findAddressByNetworkAndAddress(pool, 'tron', tron.address))?.depositAddress.id,
      tron.id,
    );
    assert.equal(await findAddressByNetworkAndAddress(pool, 'tron', tron.address.toLowerCase()), undefined);
    assert.equal(await findAddressByNetworkAndAddress(pool, 'ethereum', tron.address), undefined);

    const disabled = await findAddressByNetworkAndAddress(pool, 'bitcoin', btc.address.toUpperCase());
    assert.equal(disabled?.depositAddress.status, 'disabled');
    assert.equal(disabled?.organisationId, owner.tenant.organisationId);
    assert.equal(await findAddressByNetworkAndAddress(pool, 'solana', eth.address), undefined);
  });

  it('shows the operator each key, its next index and its first addresses, without taking an index', async () => {
    const get = (url: string, key = TEST_ADMIN_KEY) =>
      t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
    const response = await get('/admin/v1/crypto/account-keys?count=2');
    assert.equal(response.statusCode, 200, response.body);
    const keys = response.json() as {
      family: string;
      variable: string;
      networks: string[];
      configured: boolean;
      extended_key: string;
      account_path: string;
      next_index: number;
      first_addresses: { index: number; derivation_path: string; address: string }[];
    }[];
    const counters = await t.db.pool.query<{ family: string; next_index: number }>(
      'SELECT family, next_index FROM crypto_account_keys',
    );
    const next = Object.fromEntries(counters.rows.map((row) => [row.family, row.next_index]));
    assert.deepEqual(keys, [
      {
        family: 'evm',
        variable: 'CRYPTO_XPUB_EVM',
        networks: ['ethereum', 'polygon'],
        configured: true,
        extended_key: SANDBOX_ACCOUNT_KEYS.evm,
        account_path: "m/44'/60'/0'",
        next_index: next.evm,
        first_addresses: [
          {
            index: 0,
            derivation_path: "m/44'/60'/0'/0/0",
            address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94',
          },
          {
            index: 1,
            derivation_path: "m/44'/60'/0'/0/1",
            address: '0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0',
          },
        ],
      },
      {
        family: 'tron',
        variable: 'CRYPTO_XPUB_TRON',
        networks: ['tron'],
        configured: true,
        extended_key: SANDBOX_ACCOUNT_KEYS.tron,
        account_path: "m/44'/195'/0'",
        next_index: next.tron,
        first_addresses: [
          { index: 0, derivation_path: "m/44'/195'/0'/0/0", address: 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH' },
          { index: 1, derivation_path: "m/44'/195'/0'/0/1", address: 'TSeJkUh4Qv67VNFwY8LaAxERygNdy6NQZK' },
        ],
      },
      {
        family: 'bitcoin',
        variable: 'CRYPTO_ZPUB_BTC',
        networks: ['bitcoin'],
        configured: true,
        extended_key: SANDBOX_ACCOUNT_KEYS.bitcoin,
        account_path: "m/84'/1'/0'",
        next_index: next.bitcoin,
        first_addresses: [
          {
            index: 0,
            derivation_path: "m/84'/1'/0'/0/0",
            address: 'tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl',
          },
          {
            index: 1,
            derivation_path: "m/84'/1'/0'/0/1",
            address: walletAddress('bitcoin', "m/84'/1'/0'/0/1"),
          },
        ],
      },
    ]);
    const after = await t.db.pool.query('SELECT family, next_index FROM crypto_account_keys');
    assert.deepEqual(after.rows, counters.rows, 'the preview takes no index');
    assert.equal((await get('/admin/v1/crypto/account-keys')).json()[0].first_addresses.length, 5);
    expectError(await get('/admin/v1/crypto/account-keys?count=101'), 422, 'VALIDATION_FAILED', 'count');
    expectError(await get('/admin/v1/crypto/account-keys', 'wrong-key-wrong-key-wrong'), 401, 'UNAUTHORIZED');
  });

  it('the operator CLI command crypto-keys asks the operator API for the keys', async () => {
    const command = cryptoArea.cliCommands!.find((candidate) => candidate.name === 'crypto-keys')!;
    assert.deepEqual(await command.requests([], {}), [
      { method: 'GET', path: '/admin/v1/crypto/account-keys' },
    ]);
    assert.deepEqual(await command.requests([], { count: '12' }), [
      { method: 'GET', path: '/admin/v1/crypto/account-keys?count=12' },
    ]);
    await assert.rejects(command.requests([], { count: 'all' }), /--count must be a whole number/);
  });
});

describe('deposit addresses: 50 concurrent creates across two app instances', () => {
  let t: TestApp;
  let second: TestApp;
  let secondPool: ReturnType<typeof createPool>;
  before(async () => {
    t = await startTestApp();
    // Another process's view: its own app and its own connection pool on the same database.
    secondPool = createPool(t.db.url, 10, 'payment-service:test-second');
    second = await startTestApp({ db: { url: t.db.url, pool: secondPool, drop: async () => {} } });
  });
  after(async () => {
    await second.close();
    await secondPool.end();
    await t.close();
  });

  it('gives 50 distinct, consecutive indexes and 50 distinct addresses, each the wallet’s at its path', async () => {
    const tenants: Tenant[] = [await t.tenant(), await t.tenant()];
    const apis = [apiClient(t, tenants[0]!), apiClient(second, tenants[1]!), apiClient(second, tenants[0]!)];
    const created = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        create(apis[i % apis.length]!, { network: i % 2 === 0 ? 'ethereum' : 'polygon', asset: 'USDC' }),
      ),
    );
    const indexes = created.map(indexOf).sort((a, b) => a - b);
    assert.deepEqual(
      indexes,
      Array.from({ length: 50 }, (_, i) => i),
    );
    assert.equal(new Set(created.map((address) => address.address)).size, 50);
    for (const address of created) {
      assert.equal(address.derivation_path, `m/44'/60'/0'/0/${indexOf(address)}`);
      assert.equal(address.address, walletAddress(address.network, address.derivation_path));
    }
    const counter = await t.db.pool.query<{ next_index: number }>(
      "SELECT next_index FROM crypto_account_keys WHERE family = 'evm'",
    );
    assert.deepEqual(counter.rows, [{ next_index: 50 }]);
  });
});

describe('deposit addresses in production', () => {
  let t: TestApp;
  let api: ApiClient;
  // Stands for the operator's own wallet: production refuses every account of the sandbox's mnemonic.
  const own = HDKey.fromMasterSeed(
    mnemonicToSeedSync('legal winner thank year wave sausage worth useful legal winner thank yellow'),
  );
  before(async () => {
    t = await startTestApp({
      env: {
        APP_ENV: 'production',
        AUTH_REALM: 'production',
        CRYPTO_XPUB_EVM: own.derive("m/44'/60'/1'").publicExtendedKey,
        CRYPTO_ZPUB_BTC: own.derive("m/84'/0'/0'").publicExtendedKey,
      },
    });
    const organisation = await createOrganisation(t.deps, 'Production org');
    const credentials = await createClient(t.deps, { organisation_id: organisation.id });
    const token = await requestToken(t.app, credentials.client_id, credentials.client_secret!, 'production');
    api = apiClient(t, {
      organisationId: organisation.id,
      clientId: credentials.client_id,
      clientSecret: credentials.client_secret!,
      token,
      auth: { authorization: `Bearer ${token}` },
    });
  });
  after(() => t.close());

  it('does not offer a network family without a key: absent from the list, 400 CORRIDOR_UNAVAILABLE on create', async () => {
    const networks = (await api.get(NETWORKS_URL)).json() as { code: string }[];
    assert.deepEqual(
      networks.map((network) => network.code),
      ['bitcoin', 'ethereum', 'polygon'],
    );
    const refused = expectError(
      await api.post(ADDRESSES, { network: 'tron', asset: 'USDT' }),
      400,
      'CORRIDOR_UNAVAILABLE',
    );
    assert.equal(refused.error, 'Deposit addresses on tron are not offered: see GET /api/v1/crypto/networks');
    // Validation still comes first.
    expectError(
      await api.post(ADDRESSES, { network: 'tron', asset: 'BTC' }),
      422,
      'VALIDATION_FAILED',
      'asset',
    );
  });

  it("derives mainnet addresses (bc1q...) at the key's account path", async () => {
    for (const index of [0, 1]) {
      const btc = await create(api, { network: 'bitcoin', asset: 'BTC' });
      assert.equal(
        btc.address,
        encodeAddress('bitcoin', own.derive(`m/84'/0'/0'/0/${index}`).publicKey!, false),
      );
      assert.match(btc.address, /^bc1q/);
      assert.equal(btc.derivation_path, `m/84'/0'/0'/0/${index}`);
    }
    const eth = await create(api, { network: 'ethereum', asset: 'USDT' });
    assert.equal(eth.address, encodeAddress('evm', own.derive("m/44'/60'/1'/0/0").publicKey!, false));
    assert.equal(eth.derivation_path, "m/44'/60'/1'/0/0");
  });

  it('shows the operator the family without a key as not configured', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/admin/v1/crypto/account-keys?count=1',
      headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` },
    });
    const tron = (response.json() as { family: string }[]).find((key) => key.family === 'tron');
    assert.deepEqual(tron, {
      family: 'tron',
      variable: 'CRYPTO_XPUB_TRON',
      networks: ['tron'],
      configured: false,
      extended_key: null,
      account_path: null,
      next_index: null,
      first_addresses: [],
    });
  });

  it('opens a deposit without a network on the first offered network of D22 that carries its asset', async () => {
    const opened = await api.post('/api/v1/payments/deposits', { currency: 'USDT', method: 'crypto' });
    assert.equal(opened.statusCode, 201, opened.body);
    assert.equal(opened.json().instructions.network, 'ethereum');
    // Configurations this process does not have: a network whose key is missing is passed over.
    const networkFor = (keys: Record<string, string>, asset: string) =>
      depositNetwork(
        {
          config: loadConfig({ APP_ENV: 'production', SECRETS_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY, ...keys }),
        } as AppDeps,
        undefined,
        asset,
      );
    const tronOnly = { CRYPTO_XPUB_TRON: own.derive("m/44'/195'/1'").publicExtendedKey };
    assert.equal(networkFor(tronOnly, 'USDT'), 'tron');
    assert.equal(networkFor(tronOnly, 'USDC'), 'tron');
    assert.throws(
      () => networkFor(tronOnly, 'BTC'),
      (error: unknown) =>
        error instanceof AppError &&
        error.code === 'CORRIDOR_UNAVAILABLE' &&
        error.message === 'Deposits of BTC are not offered on any network: see GET /api/v1/crypto/networks',
    );
  });
});
