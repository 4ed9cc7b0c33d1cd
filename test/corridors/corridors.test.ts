// Corridors (D16, D23, D24) over HTTP: the sandbox's seeded corridors, read and search, operator create
// and change with every 422 and the 409, suspension refusing quotes (quotableCorridor), the currencies in
// use following active corridors, and the operator action log.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { seedSandbox } from '../../src/admin/service.ts';
import { quotableCorridor, SANDBOX_CORRIDORS } from '../../src/corridors/service.ts';
import { errorBody, startTestApp, TEST_ADMIN_KEY, type Tenant, type TestApp } from '../helpers/app.ts';

const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const COR_ID = /^cor_[0-9A-HJKMNP-TV-Z]{26}$/;

interface CorridorJson {
  id: string;
  source_currency: string;
  destination_country: string;
  destination_currency: string;
  payout_method: string;
  min_amount: string;
  max_amount: string;
  fee_fixed: string;
  fee_percent: string;
  fx_markup_percent: string;
  estimated_delivery_seconds: number;
  status: string;
  created_at: string;
  updated_at: string;
}

interface PageJson {
  items: CorridorJson[];
  total: number;
  page: number;
  page_size: number;
}

const expectError = (
  response: { statusCode: number; body: string },
  status: number,
  code: string,
  field?: string,
) => {
  assert.equal(response.statusCode, status, response.body);
  const body = errorBody(response.body);
  assert.equal(body.code, code);
  assert.equal(body.field, field, response.body);
  return body;
};

describe('corridors in the sandbox (D16, D24)', () => {
  let t: TestApp;
  let tenant: Tenant;
  before(async () => {
    t = await startTestApp();
    tenant = await t.tenant();
  });
  after(() => t.close());

  const search = async (body: unknown): Promise<PageJson> => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v1/corridors/search',
      headers: tenant.auth,
      payload: body as object,
    });
    assert.equal(response.statusCode, 200, response.body);
    return response.json() as PageJson;
  };
  const route = (corridor: CorridorJson) =>
    `${corridor.source_currency}>${corridor.destination_currency} ${corridor.destination_country} ${corridor.payout_method}`;

  it('seeds the 13 corridors of D24 with fixed ids, fees, markups and limits', async () => {
    const page = await search({ page_size: 100, sort_by: 'id', sort_direction: 'asc' });
    assert.equal(page.total, 13);
    assert.deepEqual(page.items.map(route), [
      'USD>EUR DE bank_account',
      'USD>EUR FR bank_account',
      'USD>EUR ES bank_account',
      'USD>GBP GB bank_account',
      'USD>INR IN bank_account',
      'USD>MXN MX bank_account',
      'USD>NGN NG bank_account',
      'USD>PHP PH bank_account',
      'USD>KES KE mobile_wallet',
      'EUR>USD US bank_account',
      'GBP>EUR DE bank_account',
      'USDC>MXN MX bank_account',
      'USDT>PHP PH bank_account',
    ]);
    const first = page.items[0]!;
    assert.deepEqual(
      { ...first, created_at: undefined, updated_at: undefined },
      {
        id: 'cor_0000SANDBX0000000000000001',
        source_currency: 'USD',
        destination_country: 'DE',
        destination_currency: 'EUR',
        payout_method: 'bank_account',
        min_amount: '1.00',
        max_amount: '50000.00',
        fee_fixed: '1.00',
        fee_percent: '0.50',
        fx_markup_percent: '0.35',
        estimated_delivery_seconds: 86400,
        status: 'active',
        created_at: undefined,
        updated_at: undefined,
      },
    );
    assert.match(first.created_at, ISO);
    const kenya = page.items.find((corridor) => corridor.destination_country === 'KE')!;
    assert.deepEqual(
      [kenya.fee_fixed, kenya.fee_percent, kenya.fx_markup_percent, kenya.estimated_delivery_seconds],
      ['1.50', '0.50', '0.75', 900],
    );
    const usdc = page.items.find((corridor) => corridor.source_currency === 'USDC')!;
    assert.deepEqual(
      [usdc.min_amount, usdc.max_amount, usdc.fee_fixed],
      ['1.000000', '50000.000000', '1.000000'],
    );
    assert.deepEqual(
      page.items.map((corridor) => corridor.id),
      SANDBOX_CORRIDORS.map((corridor) => corridor.id),
    );
  });

  it('seeding again changes nothing', async () => {
    const before = await search({ page_size: 100 });
    await seedSandbox(t.deps);
    const after = await search({ page_size: 100 });
    assert.deepEqual(after, before);
  });

  it('reads one corridor; a malformed or unknown id is 404', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/api/v1/corridors/cor_0000SANDBX0000000000000009',
      headers: tenant.auth,
    });
    assert.equal(response.statusCode, 200);
    assert.equal(route(response.json() as CorridorJson), 'USD>KES KE mobile_wallet');
    for (const id of ['cor_0000SANDBX0000000000000099', 'cor_123', 'bnk_0000SANDBX0000000000000001', 'x']) {
      expectError(
        await t.app.inject({ method: 'GET', url: `/api/v1/corridors/${id}`, headers: tenant.auth }),
        404,
        'NOT_FOUND',
      );
    }
  });

  it('filters by each field, every value a list', async () => {
    const bySource = await search({ filters: { source_currency: ['EUR', 'GBP'] } });
    assert.deepEqual(bySource.items.map(route).sort(), [
      'EUR>USD US bank_account',
      'GBP>EUR DE bank_account',
    ]);
    const byCountry = await search({ filters: { destination_country: ['PH'] } });
    assert.equal(byCountry.total, 2);
    const byCurrency = await search({ filters: { destination_currency: ['EUR'], source_currency: ['USD'] } });
    assert.equal(byCurrency.total, 3);
    const wallets = await search({ filters: { payout_method: ['mobile_wallet'] } });
    assert.deepEqual(wallets.items.map(route), ['USD>KES KE mobile_wallet']);
    const active = await search({ filters: { status: ['active'] } });
    assert.equal(active.total, 13);
    assert.equal((await search({ filters: { status: ['suspended'] } })).total, 0);
  });

  it('matches the codes with `search`: every word equals a currency or the country', async () => {
    assert.deepEqual((await search({ search: 'usd de' })).items.map(route), ['USD>EUR DE bank_account']);
    assert.deepEqual((await search({ search: 'USD-KES' })).items.map(route), ['USD>KES KE mobile_wallet']);
    assert.equal((await search({ search: 'EUR' })).total, 5);
    assert.equal((await search({ search: 'ph' })).total, 2);
    assert.equal((await search({ search: 'US' })).total, 1);
    assert.equal((await search({ search: 'EU' })).total, 0);
    assert.equal((await search({ search: 'USD XYZ' })).total, 0);
  });

  it('pages and sorts (D4)', async () => {
    const page = await search({ page: 2, page_size: 5, sort_by: 'id', sort_direction: 'asc' });
    assert.equal(page.total, 13);
    assert.equal(page.page, 2);
    assert.equal(page.page_size, 5);
    assert.deepEqual(
      page.items.map((corridor) => corridor.id),
      SANDBOX_CORRIDORS.slice(5, 10).map((corridor) => corridor.id),
    );
    const past = await search({ page: 9, page_size: 5 });
    assert.deepEqual(past.items, []);
    assert.equal(past.total, 13);
    const empty = await t.app.inject({
      method: 'POST',
      url: '/api/v1/corridors/search',
      headers: tenant.auth,
    });
    assert.equal(empty.statusCode, 200);
    assert.equal((empty.json() as PageJson).items[0]?.id, 'cor_0000SANDBX0000000000000013');
  });

  it('rejects a malformed search with 422 naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ filters: { source_currency: 'USD' } }, 'filters.source_currency'],
      [{ filters: { source_currency: [] } }, 'filters.source_currency'],
      [{ filters: { country: ['DE'] } }, 'filters.country'],
      // Codes are upper-case, as everywhere in the API: a lower-case one is refused, not an empty page.
      [{ filters: { source_currency: ['usd'] } }, 'filters.source_currency[0]'],
      [{ filters: { destination_country: ['de'] } }, 'filters.destination_country[0]'],
      [{ filters: { destination_currency: ['eur'] } }, 'filters.destination_currency[0]'],
      [{ filters: { payout_method: ['cash'] } }, 'filters.payout_method[0]'],
      [{ filters: { status: ['deleted'] } }, 'filters.status[0]'],
      [{ sort_by: 'fee_fixed' }, 'sort_by'],
      [{ query: 'usd' }, 'query'],
    ];
    for (const [body, field] of cases) {
      expectError(
        await t.app.inject({
          method: 'POST',
          url: '/api/v1/corridors/search',
          headers: tenant.auth,
          payload: body as object,
        }),
        422,
        'VALIDATION_FAILED',
        field,
      );
    }
  });

  it('requires reference:read', async () => {
    const other = await t.tenant(['webhooks:read']);
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/corridors/search',
        headers: other.auth,
        payload: {},
      }),
      403,
      'AUTHORIZATION_FAILED',
    );
    expectError(
      await t.app.inject({
        method: 'GET',
        url: '/api/v1/corridors/cor_0000SANDBX0000000000000001',
        headers: other.auth,
      }),
      403,
      'AUTHORIZATION_FAILED',
    );
  });

  it('gives quotes the terms of an active corridor as decimals', async () => {
    const terms = await quotableCorridor(t.deps.pool, 'cor_0000SANDBX0000000000000012');
    assert.equal(terms.source_currency, 'USDC');
    assert.equal(terms.destination_currency, 'MXN');
    assert.equal(terms.fee_fixed.toString(), '1');
    assert.equal(terms.fee_percent.toString(), '0.5');
    assert.equal(terms.fx_markup_percent.toString(), '0.5');
    assert.equal(terms.min_amount.toString(), '1');
    assert.equal(terms.max_amount.toString(), '50000');
    assert.equal(terms.view.fee_fixed, '1.000000');
    await assert.rejects(quotableCorridor(t.deps.pool, 'cor_0000SANDBX0000000000000099'), {
      code: 'NOT_FOUND',
      statusCode: 404,
    });
    await assert.rejects(quotableCorridor(t.deps.pool, 'not-an-id'), { code: 'NOT_FOUND' });
  });
});

describe('operators manage corridors (D16, D23)', () => {
  let t: TestApp;
  let tenant: Tenant;
  before(async () => {
    // No sandbox data: every corridor here is the operator's.
    t = await startTestApp({ env: { APP_ENV: 'production', AUTH_REALM: 'sandbox' } });
    tenant = await t.tenant();
  });
  after(() => t.close());

  const create = (payload: unknown, headers: Record<string, string> = admin) =>
    t.app.inject({ method: 'POST', url: '/admin/v1/corridors', headers, payload: payload as object });
  const patch = (id: string, payload: unknown) =>
    t.app.inject({
      method: 'PATCH',
      url: `/admin/v1/corridors/${id}`,
      headers: admin,
      payload: payload as object,
    });
  const valid = {
    source_currency: 'USD',
    destination_country: 'JP',
    destination_currency: 'JPY',
    payout_method: 'bank_account',
    min_amount: '10',
    max_amount: '25000.5',
    fee_fixed: '0',
    fee_percent: '0.5',
    fx_markup_percent: '1',
    estimated_delivery_seconds: 7200,
  };
  let created: CorridorJson;

  it('creates a corridor (201): amounts with the source decimals, percents with at least 2', async () => {
    const response = await create(valid);
    assert.equal(response.statusCode, 201, response.body);
    created = response.json() as CorridorJson;
    assert.match(created.id, COR_ID);
    assert.deepEqual(
      { ...created, id: undefined, created_at: undefined, updated_at: undefined },
      {
        id: undefined,
        source_currency: 'USD',
        destination_country: 'JP',
        destination_currency: 'JPY',
        payout_method: 'bank_account',
        min_amount: '10.00',
        max_amount: '25000.50',
        fee_fixed: '0.00',
        fee_percent: '0.50',
        fx_markup_percent: '1.00',
        estimated_delivery_seconds: 7200,
        status: 'active',
        created_at: undefined,
        updated_at: undefined,
      },
    );
    assert.equal(created.created_at, created.updated_at);
    const read = await t.app.inject({
      method: 'GET',
      url: `/api/v1/corridors/${created.id}`,
      headers: tenant.auth,
    });
    assert.deepEqual(read.json(), created);
  });

  it('formats amounts in the source currency: JPY without decimals, BTC with 8, percents as given', async () => {
    const jpy = await create({
      ...valid,
      source_currency: 'JPY',
      destination_country: 'PH',
      destination_currency: 'PHP',
      min_amount: '1000',
      max_amount: '5000000',
      fee_fixed: '300',
      fee_percent: '0.355',
    });
    assert.equal(jpy.statusCode, 201, jpy.body);
    const body = jpy.json() as CorridorJson;
    assert.deepEqual(
      [body.min_amount, body.max_amount, body.fee_fixed, body.fee_percent],
      ['1000', '5000000', '300', '0.355'],
    );
    const btc = await create({
      ...valid,
      source_currency: 'BTC',
      destination_country: 'NG',
      destination_currency: 'NGN',
      min_amount: '0.0001',
      max_amount: '2.5',
      fee_fixed: '0.00001',
      status: 'suspended',
    });
    assert.equal(btc.statusCode, 201, btc.body);
    const btcBody = btc.json() as CorridorJson;
    assert.deepEqual(
      [btcBody.min_amount, btcBody.max_amount, btcBody.fee_fixed, btcBody.status],
      ['0.00010000', '2.50000000', '0.00001000', 'suspended'],
    );
  });

  it('answers 409 with no field for a second corridor on the same route', async () => {
    const body = expectError(await create({ ...valid, fee_fixed: '5.00' }), 409, 'CONFLICT');
    assert.match(body.error, /source_currency, destination_country, destination_currency and payout_method/);
    // Concurrent creates of one route: one wins, the database refuses the others.
    const racing = await Promise.all(
      Array.from({ length: 5 }, () =>
        create({ ...valid, destination_country: 'CH', destination_currency: 'CHF' }),
      ),
    );
    assert.deepEqual(racing.map((response) => response.statusCode).sort(), [201, 409, 409, 409, 409]);
    // Another method on the same currencies and country is another corridor.
    const wallet = await create({ ...valid, payout_method: 'mobile_wallet' });
    assert.equal(wallet.statusCode, 201, wallet.body);
  });

  it('rejects unknown currencies and countries with 422 naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ source_currency: 'XYZ' }, 'source_currency'],
      [{ source_currency: 'usd' }, 'source_currency'],
      [{ source_currency: 'XAU' }, 'source_currency'],
      [{ source_currency: 'valueOf' }, 'source_currency'],
      [{ destination_currency: 'EURO' }, 'destination_currency'],
      [{ destination_country: 'UK' }, 'destination_country'],
      [{ destination_country: 'EU' }, 'destination_country'],
      [{ destination_country: 'XX' }, 'destination_country'],
      [{ destination_country: 'jp' }, 'destination_country'],
      [{ destination_country: 'JPN' }, 'destination_country'],
      [{ payout_method: 'cash_pickup' }, 'payout_method'],
    ];
    for (const [change, field] of cases) {
      expectError(await create({ ...valid, ...change }), 422, 'VALIDATION_FAILED', field);
    }
  });

  it("rejects amounts outside the source currency's rules and min above max with 422 naming the field", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ min_amount: '0' }, 'min_amount'],
      [{ min_amount: '1.005' }, 'min_amount'],
      [{ min_amount: '-1' }, 'min_amount'],
      [{ min_amount: 10 }, 'min_amount'],
      [{ max_amount: '1e6' }, 'max_amount'],
      [{ max_amount: '0.00' }, 'max_amount'],
      [{ fee_fixed: '-0.50' }, 'fee_fixed'],
      [{ fee_fixed: '0.505' }, 'fee_fixed'],
      [{ source_currency: 'JPY', destination_country: 'MX', min_amount: '10.5' }, 'min_amount'],
      [{ min_amount: '25000.51' }, 'min_amount'],
    ];
    for (const [change, field] of cases) {
      expectError(await create({ ...valid, ...change }), 422, 'VALIDATION_FAILED', field);
    }
    // min equal to max is allowed.
    const equal = await create({
      ...valid,
      destination_country: 'KR',
      destination_currency: 'KRW',
      min_amount: '100',
      max_amount: '100.00',
    });
    assert.equal(equal.statusCode, 201, equal.body);
  });

  it('rejects percents outside 0..<100 or not a decimal string with 422 naming the field', async () => {
    // 100 % would leave nothing to pay out (and a destination-mode quote could find no source amount).
    for (const value of [
      '100',
      '100.00',
      '100.01',
      '101',
      '-0.5',
      '0.12345',
      '1e1',
      '',
      ' 1',
      '.5',
      '00.5',
      0.5,
    ]) {
      expectError(await create({ ...valid, fee_percent: value }), 422, 'VALIDATION_FAILED', 'fee_percent');
      expectError(
        await create({ ...valid, fx_markup_percent: value }),
        422,
        'VALIDATION_FAILED',
        'fx_markup_percent',
      );
    }
    const bounds = await create({
      ...valid,
      destination_country: 'TH',
      destination_currency: 'THB',
      fee_percent: '0',
      fx_markup_percent: '99.9999',
    });
    assert.equal(bounds.statusCode, 201, bounds.body);
    const body = bounds.json() as CorridorJson;
    assert.deepEqual([body.fee_percent, body.fx_markup_percent], ['0.00', '99.9999']);
  });

  it('rejects a missing field, an unknown key and a bad delivery estimate with 422 naming it', async () => {
    for (const field of Object.keys(valid)) {
      const { [field as keyof typeof valid]: _left, ...rest } = valid;
      expectError(await create(rest), 422, 'VALIDATION_FAILED', field);
    }
    expectError(await create({ ...valid, id: 'cor_x' }), 422, 'VALIDATION_FAILED', 'id');
    for (const seconds of [-1, 1.5, '60', 2_592_001]) {
      expectError(
        await create({ ...valid, estimated_delivery_seconds: seconds }),
        422,
        'VALIDATION_FAILED',
        'estimated_delivery_seconds',
      );
    }
  });

  it('changes limits, fees, markup and the delivery estimate', async () => {
    const response = await patch(created.id, {
      min_amount: '5.5',
      max_amount: '30000',
      fee_fixed: '2.25',
      fee_percent: '0.75',
      fx_markup_percent: '0.4',
      estimated_delivery_seconds: 3600,
    });
    assert.equal(response.statusCode, 200, response.body);
    const updated = response.json() as CorridorJson;
    assert.deepEqual(
      [
        updated.min_amount,
        updated.max_amount,
        updated.fee_fixed,
        updated.fee_percent,
        updated.fx_markup_percent,
        updated.estimated_delivery_seconds,
      ],
      ['5.50', '30000.00', '2.25', '0.75', '0.40', 3600],
    );
    assert.ok(updated.updated_at > created.updated_at);
    assert.equal(updated.created_at, created.created_at);
    // Nothing to change: the corridor as it is.
    const same = await patch(created.id, {});
    assert.equal(same.statusCode, 200);
    assert.deepEqual(same.json(), updated);
  });

  it('checks min <= max against the values after the change, naming the limit changed', async () => {
    expectError(await patch(created.id, { min_amount: '30000.01' }), 422, 'VALIDATION_FAILED', 'min_amount');
    expectError(await patch(created.id, { max_amount: '5.49' }), 422, 'VALIDATION_FAILED', 'max_amount');
    expectError(
      await patch(created.id, { min_amount: '100', max_amount: '99' }),
      422,
      'VALIDATION_FAILED',
      'min_amount',
    );
    expectError(await patch(created.id, { fee_fixed: '1.001' }), 422, 'VALIDATION_FAILED', 'fee_fixed');
    expectError(await patch(created.id, { fee_percent: '150' }), 422, 'VALIDATION_FAILED', 'fee_percent');
    expectError(await patch(created.id, { status: 'deleted' }), 422, 'VALIDATION_FAILED', 'status');
    for (const key of ['source_currency', 'destination_country', 'payout_method', 'id']) {
      expectError(await patch(created.id, { [key]: 'x' }), 422, 'VALIDATION_FAILED', key);
    }
    const unchanged = await t.app.inject({
      method: 'GET',
      url: `/api/v1/corridors/${created.id}`,
      headers: tenant.auth,
    });
    assert.equal((unchanged.json() as CorridorJson).min_amount, '5.50');
  });

  it('answers 404 for a PATCH of an unknown or malformed id', async () => {
    expectError(await patch('cor_0000SANDBX0000000000000077', { status: 'suspended' }), 404, 'NOT_FOUND');
    expectError(await patch('nope', { status: 'suspended' }), 404, 'NOT_FOUND');
  });

  it('suspending refuses new quotes with 400 CORRIDOR_UNAVAILABLE; reactivating gives them again', async () => {
    const suspended = await patch(created.id, { status: 'suspended' });
    assert.equal(suspended.statusCode, 200, suspended.body);
    assert.equal((suspended.json() as CorridorJson).status, 'suspended');
    await assert.rejects(quotableCorridor(t.deps.pool, created.id), (error: unknown) => {
      const appError = error as { code: string; statusCode: number; message: string };
      assert.equal(appError.code, 'CORRIDOR_UNAVAILABLE');
      assert.equal(appError.statusCode, 400);
      assert.match(appError.message, /is suspended/);
      return true;
    });
    const read = await t.app.inject({
      method: 'GET',
      url: `/api/v1/corridors/${created.id}`,
      headers: tenant.auth,
    });
    assert.equal((read.json() as CorridorJson).status, 'suspended');
    const active = await patch(created.id, { status: 'active' });
    assert.equal((active.json() as CorridorJson).status, 'active');
    const terms = await quotableCorridor(t.deps.pool, created.id);
    assert.equal(terms.fee_fixed.toString(), '2.25');
  });

  it('lists the currencies of active corridors only in GET /fx/currencies', async () => {
    const currencies = async () => {
      const response = await t.app.inject({
        method: 'GET',
        url: '/api/v1/fx/currencies',
        headers: tenant.auth,
      });
      assert.equal(response.statusCode, 200);
      return (response.json() as Array<{ code: string }>).map((currency) => currency.code);
    };
    // The BTC corridor was created suspended: BTC and NGN are in no active corridor.
    assert.deepEqual(await currencies(), ['CHF', 'JPY', 'KRW', 'PHP', 'THB', 'USD']);
    const thb = await t.app.inject({
      method: 'POST',
      url: '/api/v1/corridors/search',
      headers: tenant.auth,
      payload: { filters: { destination_currency: ['THB'] } },
    });
    const thbId = (thb.json() as PageJson).items[0]!.id;
    assert.equal((await patch(thbId, { status: 'suspended' })).statusCode, 200);
    assert.deepEqual(await currencies(), ['CHF', 'JPY', 'KRW', 'PHP', 'USD']);
  });

  it('refuses the operator routes without the operator key (401)', async () => {
    const response = await create(valid, tenant.auth);
    assert.equal(response.statusCode, 401);
    assert.equal(errorBody(response.body).code, 'UNAUTHORIZED');
  });

  it('logs each operator action with its actor, target and outcome', async () => {
    const before = t.logs.lines.length;
    const made = await create({ ...valid, destination_country: 'SG', destination_currency: 'SGD' });
    const id = (made.json() as CorridorJson).id;
    await create({ ...valid, destination_country: 'SG', destination_currency: 'SGD' });
    await patch(id, { status: 'suspended' });
    const actions = t.logs.lines
      .slice(before)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.operator_action !== undefined);
    assert.deepEqual(
      actions.map((line) => [line.operator_action, line.outcome, line.status, line.error_code]),
      [
        ['corridor.create', 'succeeded', 201, undefined],
        ['corridor.create', 'refused', 409, 'CONFLICT'],
        ['corridor.update', 'succeeded', 200, undefined],
      ],
    );
    assert.equal(actions[0]?.corridor_id, id);
    assert.equal(actions[0]?.route, 'USD>SGD SG bank_account');
    assert.deepEqual(actions[0]?.actor, { credential: 'ADMIN_API_KEY', address: '127.0.0.1' });
    assert.equal(actions[2]?.corridor_id, id);
    assert.deepEqual(actions[2]?.changes, ['status']);
    assert.equal(actions[2]?.corridor_status, 'suspended');
    assert.equal(actions[2]?.status, 200);
  });
});
