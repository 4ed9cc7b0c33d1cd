// Currencies and FX rates over HTTP in the sandbox (D15, D24): the seeded rates per USD, cross rates
// rounded half-even to 10 significant digits, stablecoin pegs, and every 404 and 422 of the rates query.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { findRate, findRatesFrom, listCurrencies, quotableRate } from '../../src/fx/service.ts';
import type { Area } from '../../src/platform/area.ts';
import { errorBody, startTestApp, TEST_ADMIN_KEY, type Tenant, type TestApp } from '../helpers/app.ts';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SANDBOX_AS_OF = '2026-01-01T00:00:00.000Z';
const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };

interface RateJson {
  source_currency: string;
  destination_currency: string;
  rate: string;
  provider: string;
  as_of: string;
}

describe('FX rates in the sandbox (D15, D24)', () => {
  let t: TestApp;
  let tenant: Tenant;
  before(async () => {
    t = await startTestApp();
    tenant = await t.tenant();
  });
  after(() => t.close());

  const get = (url: string, auth = tenant.auth) => t.app.inject({ method: 'GET', url, headers: auth });
  const rates = async (query: string): Promise<RateJson[]> => {
    const response = await get(`/api/v1/fx/rates?${query}`);
    assert.equal(response.statusCode, 200, response.body);
    return response.json() as RateJson[];
  };
  const pair = async (source: string, destination: string): Promise<RateJson> => {
    const found = await rates(`source_currency=${source}&destination_currency=${destination}`);
    assert.equal(found.length, 1);
    return found[0]!;
  };
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

  it('lists every currency with a rate from USD: the seeded mid rates, the pegged stablecoins at par', async () => {
    const list = await rates('source_currency=USD');
    const sandbox = (destination: string, rate: string) => ({
      source_currency: 'USD',
      destination_currency: destination,
      rate,
      provider: 'sandbox',
      as_of: SANDBOX_AS_OF,
    });
    assert.deepEqual(
      list.filter((rate) => rate.provider !== 'par'),
      [
        sandbox('BTC', '0.00001'),
        sandbox('EUR', '0.92'),
        sandbox('GBP', '0.79'),
        sandbox('INR', '84'),
        sandbox('JPY', '150'),
        sandbox('KES', '129'),
        sandbox('MXN', '18.5'),
        sandbox('NGN', '1550'),
        sandbox('PHP', '58'),
      ],
    );
    const par = list.filter((rate) => rate.provider === 'par');
    assert.deepEqual(
      par.map((rate) => [rate.destination_currency, rate.rate]),
      [
        ['USDC', '1'],
        ['USDT', '1'],
      ],
    );
    for (const rate of par) assert.match(rate.as_of, ISO);
    assert.deepEqual(
      list.map((rate) => rate.destination_currency),
      ['BTC', 'EUR', 'GBP', 'INR', 'JPY', 'KES', 'MXN', 'NGN', 'PHP', 'USDC', 'USDT'],
    );
  });

  it('computes cross rates as rate(USD->Y) / rate(USD->X), half-even to 10 significant digits', async () => {
    // 84.00 / 0.79 = 106.32911392405...: the 11th digit is 2, kept down.
    assert.equal((await pair('GBP', 'INR')).rate, '106.3291139');
    // 0.79 / 84.00 = 0.0094047619047619...: 10 digits 9404761904|76, rounded up.
    assert.equal((await pair('INR', 'GBP')).rate, '0.009404761905');
    // 1 / 0.92 = 1.08695652173913...
    assert.equal((await pair('EUR', 'USD')).rate, '1.086956522');
    // 0.79 / 0.92 = 0.85869565217391...
    assert.equal((await pair('EUR', 'GBP')).rate, '0.8586956522');
    // 0.00001 / 1550.00 = 0.0000000064516129032258...: written without an exponent.
    assert.equal((await pair('NGN', 'BTC')).rate, '0.000000006451612903');
    // 1 / 0.00001 = 100000 exactly; 129 / 150 = 0.86 exactly.
    assert.equal((await pair('BTC', 'USD')).rate, '100000');
    assert.equal((await pair('JPY', 'KES')).rate, '0.86');
    const cross = await pair('GBP', 'INR');
    assert.deepEqual(
      { ...cross, rate: undefined },
      {
        source_currency: 'GBP',
        destination_currency: 'INR',
        rate: undefined,
        provider: 'sandbox',
        as_of: SANDBOX_AS_OF,
      },
    );
  });

  it('rounds a cross rate that falls exactly halfway to the even digit', async () => {
    // A set of its own against CHF: SEK 2, NOK 2.000000001, DKK 2.000000003. SEK->NOK is exactly
    // 1.0000000005 (halfway: half-even keeps 1.000000000, half-up would give 1.000000001) and SEK->DKK
    // exactly 1.0000000015 (halfway: rounds to the even 1.000000002).
    const posted = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/fx-rates',
      headers: admin,
      payload: {
        base: 'CHF',
        provider: 'test-halfway',
        as_of: '2026-01-02T00:00:00Z',
        rates: { SEK: '2', NOK: '2.000000001', DKK: '2.000000003' },
      },
    });
    assert.equal(posted.statusCode, 201, posted.body);
    assert.equal((await pair('SEK', 'NOK')).rate, '1');
    assert.equal((await pair('SEK', 'DKK')).rate, '1.000000002');
    assert.equal((await pair('SEK', 'DKK')).provider, 'test-halfway');
  });

  it('gives a pegged stablecoin its anchor rates, and par between it and its anchor', async () => {
    const usdcEur = await pair('USDC', 'EUR');
    assert.deepEqual(usdcEur, {
      source_currency: 'USDC',
      destination_currency: 'EUR',
      rate: '0.92',
      provider: 'sandbox',
      as_of: SANDBOX_AS_OF,
    });
    assert.equal((await pair('PHP', 'USDT')).rate, '0.01724137931'); // 1 / 58 = 0.0172413793103...
    for (const [source, destination] of [
      ['USDC', 'USD'],
      ['USD', 'USDT'],
      ['USDT', 'USDC'],
      ['USD', 'USD'],
    ] as const) {
      const rate = await pair(source, destination);
      assert.equal(rate.rate, '1');
      assert.equal(rate.provider, 'par');
      assert.match(rate.as_of, ISO);
    }
    const fromUsdc = await rates('source_currency=USDC');
    assert.deepEqual(
      fromUsdc.map((rate) => `${rate.destination_currency} ${rate.rate} ${rate.provider}`),
      [
        'BTC 0.00001 sandbox',
        'EUR 0.92 sandbox',
        'GBP 0.79 sandbox',
        'INR 84 sandbox',
        'JPY 150 sandbox',
        'KES 129 sandbox',
        'MXN 18.5 sandbox',
        'NGN 1550 sandbox',
        'PHP 58 sandbox',
        'USD 1 par',
        'USDT 1 par',
      ],
    );
  });

  it('uses a stablecoin stored rate when FX_PEGS is none', async () => {
    const pegless = { ...t.deps.config, fxPegs: {} };
    const stored = await findRate(t.deps.pool, pegless.fxPegs, 'USDC', 'USD', new Date());
    assert.equal(stored?.rate.toString(), '1');
    assert.equal(stored?.provider, 'sandbox');
    const list = await findRatesFrom(t.deps.pool, pegless.fxPegs, 'USD', new Date());
    assert.equal(list.find((rate) => rate.destination_currency === 'USDC')?.provider, 'sandbox');
    // Pegged to EUR instead, USDC takes the euro's rates.
    const euroPeg = await findRate(t.deps.pool, { USDC: 'EUR' }, 'USDC', 'GBP', new Date());
    assert.equal(euroPeg?.rate.toString(), '0.8586956522');
  });

  it('answers 404 NOT_FOUND for a pair with no rate', async () => {
    expectError(await get('/api/v1/fx/rates?source_currency=USD&destination_currency=ARS'), 404, 'NOT_FOUND');
    expectError(
      await get('/api/v1/fx/rates?source_currency=ARS&destination_currency=USDC'),
      404,
      'NOT_FOUND',
    );
  });

  it('lists nothing from a currency without rates', async () => {
    assert.deepEqual(await rates('source_currency=ARS'), []);
  });

  it('answers 422 naming source_currency when it is missing or unknown', async () => {
    expectError(await get('/api/v1/fx/rates'), 422, 'VALIDATION_FAILED', 'source_currency');
    expectError(
      await get('/api/v1/fx/rates?destination_currency=EUR'),
      422,
      'VALIDATION_FAILED',
      'source_currency',
    );
    // Object.prototype's member names are no currencies either.
    for (const value of ['XYZ', 'usd', '', 'US%20D', 'EURO', 'XAU', 'constructor', '__proto__', 'toString']) {
      expectError(
        await get(`/api/v1/fx/rates?source_currency=${value}`),
        422,
        'VALIDATION_FAILED',
        'source_currency',
      );
    }
    expectError(
      await get('/api/v1/fx/rates?source_currency=USD&source_currency=EUR'),
      422,
      'VALIDATION_FAILED',
      'source_currency',
    );
  });

  it('answers 422 naming destination_currency when it is unknown', async () => {
    for (const value of ['XYZ', 'eur', '', 'toString', 'valueOf']) {
      expectError(
        await get(`/api/v1/fx/rates?source_currency=USD&destination_currency=${value}`),
        422,
        'VALIDATION_FAILED',
        'destination_currency',
      );
    }
  });

  it('answers 422 naming an unknown query parameter', async () => {
    const body = expectError(
      await get('/api/v1/fx/rates?source_currency=USD&amount=100'),
      422,
      'VALIDATION_FAILED',
      'amount',
    );
    assert.equal(body.error, 'amount is not a recognised field');
  });

  it('lists the currencies of active corridors with their decimals, sorted by code', async () => {
    const response = await get('/api/v1/fx/currencies');
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), [
      { code: 'EUR', name: 'Euro', decimals: 2, type: 'fiat' },
      { code: 'GBP', name: 'Pound Sterling', decimals: 2, type: 'fiat' },
      { code: 'INR', name: 'Indian Rupee', decimals: 2, type: 'fiat' },
      { code: 'KES', name: 'Kenyan Shilling', decimals: 2, type: 'fiat' },
      { code: 'MXN', name: 'Mexican Peso', decimals: 2, type: 'fiat' },
      { code: 'NGN', name: 'Naira', decimals: 2, type: 'fiat' },
      { code: 'PHP', name: 'Philippine Peso', decimals: 2, type: 'fiat' },
      { code: 'USD', name: 'US Dollar', decimals: 2, type: 'fiat' },
      { code: 'USDC', name: 'USD Coin', decimals: 6, type: 'crypto' },
      { code: 'USDT', name: 'Tether USD', decimals: 6, type: 'crypto' },
    ]);
  });

  it("adds the currencies other areas report for the organisation (balances' hook)", async () => {
    const asked: string[] = [];
    const balances: Area = {
      name: 'balances-stub',
      currenciesInUse: async (_db, organisationId) => {
        asked.push(organisationId);
        return organisationId === tenant.organisationId ? ['JPY', 'BTC', 'EUR'] : [];
      },
    };
    const deps = { ...t.deps, areas: [...t.deps.areas, balances] };
    const codes = (await listCurrencies(deps, tenant.organisationId)).map((currency) => currency.code);
    assert.deepEqual(codes, [
      'BTC',
      'EUR',
      'GBP',
      'INR',
      'JPY',
      'KES',
      'MXN',
      'NGN',
      'PHP',
      'USD',
      'USDC',
      'USDT',
    ]);
    const jpy = (await listCurrencies(deps, tenant.organisationId)).find(
      (currency) => currency.code === 'JPY',
    );
    assert.deepEqual(jpy, { code: 'JPY', name: 'Yen', decimals: 0, type: 'fiat' });
    assert.deepEqual(asked, [tenant.organisationId, tenant.organisationId]);
  });

  it('quotes sandbox rates however old they are (staleness never applies in sandbox)', async () => {
    const muchLater = new Date('2030-01-01T00:00:00.000Z');
    const rate = await quotableRate(t.deps.pool, t.deps, 'USD', 'EUR', muchLater);
    assert.equal(rate.rate.toString(), '0.92');
    assert.equal(rate.provider, 'sandbox');
    assert.equal(rate.as_of.toISOString(), SANDBOX_AS_OF);
  });

  it('refuses a quote for a pair without a rate with 400 RATE_UNAVAILABLE', async () => {
    await assert.rejects(quotableRate(t.deps.pool, t.deps, 'USD', 'ARS', new Date()), (error: unknown) => {
      const appError = error as { code: string; statusCode: number; message: string };
      assert.equal(appError.code, 'RATE_UNAVAILABLE');
      assert.equal(appError.statusCode, 400);
      assert.equal(appError.message, 'No FX rate from USD to ARS is available');
      return true;
    });
  });

  it('requires a token with reference:read', async () => {
    assert.equal(
      (await t.app.inject({ method: 'GET', url: '/api/v1/fx/rates?source_currency=USD' })).statusCode,
      401,
    );
    const other = await t.tenant(['webhooks:read']);
    for (const url of ['/api/v1/fx/rates?source_currency=USD', '/api/v1/fx/currencies']) {
      expectError(await get(url, other.auth), 403, 'AUTHORIZATION_FAILED');
    }
  });
});
