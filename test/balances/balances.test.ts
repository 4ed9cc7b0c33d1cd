// Balances and balance transactions over HTTP (D21), sandbox opening balances and top-ups (D24).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SANDBOX_ORGANISATION_ID, seedSandbox } from '../../src/admin/service.ts';
import { errorBody, startTestApp, type TestApp } from '../helpers/app.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';

const BALANCES = '/api/v1/balances';
const SEARCH = '/api/v1/balances/transactions/search';
const TOP_UP = '/api/v1/sandbox/balances/top-up';

interface BalanceJson {
  currency: string;
  available: string;
  held: string;
  updated_at: string;
}
interface TransactionJson {
  id: string;
  currency: string;
  amount: string;
  balance_after: string;
  type: string;
  resource_type: string | null;
  resource_id: string | null;
  created_at: string;
}

describe('balances (D21, D24)', () => {
  let t: TestApp;
  let api: ApiClient;
  before(async () => {
    t = await startTestApp();
    api = apiClient(t, await t.tenant());
  });
  after(() => t.close());

  it('gives every new sandbox organisation 1,000,000 in USD, EUR, GBP and USDC, with each currency’s decimals', async () => {
    const response = await api.get(BALANCES);
    assert.equal(response.statusCode, 200);
    const balances = response.json() as BalanceJson[];
    assert.deepEqual(
      balances.map(({ currency, available, held }) => ({ currency, available, held })),
      [
        { currency: 'EUR', available: '1000000.00', held: '0.00' },
        { currency: 'GBP', available: '1000000.00', held: '0.00' },
        { currency: 'USD', available: '1000000.00', held: '0.00' },
        { currency: 'USDC', available: '1000000.000000', held: '0.000000' },
      ],
    );
    for (const balance of balances)
      assert.match(balance.updated_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('seeds the opening balances once, however often the sandbox starts', async () => {
    await seedSandbox(t.deps);
    await seedSandbox(t.deps);
    const rows = await t.db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM ledger_transactions WHERE resource_id = $1 AND type = 'top_up'",
      [SANDBOX_ORGANISATION_ID],
    );
    assert.equal(rows.rows[0]!.n, 4);
  });

  it('tops up a balance and answers the balance; the movement is a balance transaction', async () => {
    const fresh = apiClient(t, await t.tenant());
    const response = await fresh.post(TOP_UP, { currency: 'JPY', amount: '1500' });
    assert.equal(response.statusCode, 200, response.body);
    const balance = response.json() as BalanceJson;
    assert.deepEqual(
      { ...balance, updated_at: 'x' },
      { currency: 'JPY', available: '1500', held: '0', updated_at: 'x' },
    );
    const again = await fresh.post(TOP_UP, { currency: 'JPY', amount: '25' });
    assert.equal(again.json().available, '1525');

    const search = await fresh.post(SEARCH, { filters: { currency: ['JPY'] } });
    assert.equal(search.statusCode, 200);
    const page = search.json() as {
      items: TransactionJson[];
      total: number;
      page: number;
      page_size: number;
    };
    assert.equal(page.total, 2);
    assert.deepEqual(
      page.items.map(({ currency, amount, balance_after, type, resource_type }) => ({
        currency,
        amount,
        balance_after,
        type,
        resource_type,
      })),
      [
        { currency: 'JPY', amount: '25', balance_after: '1525', type: 'top_up', resource_type: null },
        { currency: 'JPY', amount: '1500', balance_after: '1500', type: 'top_up', resource_type: null },
      ],
    );
    for (const item of page.items) assert.match(item.id, /^btx_[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  it('searches with filters, sorting and paging past the end (D4)', async () => {
    const fresh = apiClient(t, await t.tenant());
    for (const amount of ['1.00', '2.00', '3.00']) await fresh.post(TOP_UP, { currency: 'GBP', amount });
    const all = (await fresh.post(SEARCH, {})).json() as { total: number; items: TransactionJson[] };
    assert.equal(all.total, 7, 'four opening balances and three top-ups');
    const ascending = (
      await fresh.post(SEARCH, {
        filters: { currency: ['GBP'], type: ['top_up'] },
        sort_by: 'created_at',
        sort_direction: 'asc',
        page_size: 2,
      })
    ).json() as { total: number; items: TransactionJson[] };
    assert.equal(ascending.total, 4);
    assert.deepEqual(
      ascending.items.map((item) => item.amount),
      ['1000000.00', '1.00'],
    );
    const opening = (
      await fresh.post(SEARCH, { filters: { resource_id: [fresh.tenant.organisationId] } })
    ).json() as {
      total: number;
      items: TransactionJson[];
    };
    assert.equal(opening.total, 4);
    assert.ok(opening.items.every((item) => item.resource_type === 'organisation'));
    const past = await fresh.post(SEARCH, { page: 9, page_size: 100 });
    assert.deepEqual(past.json(), { items: [], total: 7, page: 9, page_size: 100 });
    // However far past the end (D4): the offset stays an exact integer up to the largest page.
    for (const page of [1_000_001, Math.floor(Number.MAX_SAFE_INTEGER / 100)]) {
      const far = await fresh.post(SEARCH, { page, page_size: 100 });
      assert.equal(far.statusCode, 200, far.body);
      assert.deepEqual(far.json(), { items: [], total: 7, page, page_size: 100 });
    }
    const beyond = await fresh.post(SEARCH, { page: Math.floor(Number.MAX_SAFE_INTEGER / 100) + 1 });
    assert.equal(beyond.statusCode, 422, beyond.body);
  });

  it('shows an organisation only its own balance transactions', async () => {
    const mine = apiClient(t, await t.tenant());
    const theirs = apiClient(t, await t.tenant());
    await theirs.post(TOP_UP, { currency: 'EUR', amount: '9.99' });
    const page = (await mine.post(SEARCH, { filters: { currency: ['EUR'] } })).json() as { total: number };
    assert.equal(page.total, 1);
  });

  it('refuses bad top-ups and searches with 422 naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ currency: 'USD', amount: '1.001' }, 'amount'],
      [{ currency: 'USD', amount: '-1.00' }, 'amount'],
      [{ currency: 'USD', amount: '1e3' }, 'amount'],
      [{ currency: 'USD', amount: '0' }, 'amount'],
      [{ currency: 'USD', amount: 5 }, 'amount'],
      [{ currency: 'ZZZ', amount: '1.00' }, 'currency'],
      [{ currency: 'usd', amount: '1.00' }, 'currency'],
      [{ currency: 'USD' }, 'amount'],
      [{ currency: 'USD', amount: '1.00', extra: true }, 'extra'],
    ];
    for (const [body, field] of cases) {
      const response = await api.post(TOP_UP, body);
      assert.equal(response.statusCode, 422, JSON.stringify(body));
      assert.equal(errorBody(response.body).field, field, JSON.stringify(body));
    }
    const search = await api.post(SEARCH, { filters: { currency: 'USD' } });
    assert.equal(search.statusCode, 422);
    assert.equal(errorBody(search.body).field, 'filters.currency');
    const type = await api.post(SEARCH, { filters: { type: ['gift'] } });
    assert.equal(errorBody(type.body).field, 'filters.type[0]');
  });

  it('requires payments:read to read and payments:write to top up', async () => {
    const reader = apiClient(t, await t.tenant(['payments:read']));
    assert.equal((await reader.get(BALANCES)).statusCode, 200);
    const refused = await reader.post(TOP_UP, { currency: 'USD', amount: '1.00' });
    assert.equal(refused.statusCode, 403);
    assert.equal(errorBody(refused.body).code, 'AUTHORIZATION_FAILED');
    const writer = apiClient(t, await t.tenant(['webhooks:read']));
    assert.equal((await writer.get(BALANCES)).statusCode, 403);
  });
});

describe('balances in production (D24)', () => {
  let t: TestApp;
  before(async () => {
    // AUTH_REALM sandbox keeps the test helper's token requests working; APP_ENV decides the rest.
    t = await startTestApp({ env: { APP_ENV: 'production', AUTH_REALM: 'sandbox' } });
  });
  after(() => t.close());

  it('has no top-up route (404) and gives new organisations no opening balances', async () => {
    const api = apiClient(t, await t.tenant());
    const topUp = await api.post(TOP_UP, { currency: 'USD', amount: '1.00' });
    assert.equal(topUp.statusCode, 404);
    assert.equal(errorBody(topUp.body).code, 'NOT_FOUND');
    const balances = await api.get(BALANCES);
    assert.equal(balances.statusCode, 200);
    assert.deepEqual(balances.json(), []);
  });
});
