// The operator's FX rates (D15, D23) in production: the ECB file imported through the CLI's parser and
// the operator route, cross rates from the EUR base, which set a pair's rate comes from, staleness
// (RATE_UNAVAILABLE past FX_RATE_MAX_AGE_HOURS), every 422 of POST /admin/v1/fx-rates, the operator
// action log, and the real CLI against a listening app.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runAdminCli } from '../../src/admin/cli.ts';
import { importFxRatesCommand } from '../../src/fx/cli.ts';
import { quotableRate } from '../../src/fx/service.ts';
import { errorBody, startTestApp, TEST_ADMIN_KEY, type Tenant, type TestApp } from '../helpers/app.ts';

const FIXTURE = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'fixtures',
  'eurofxref-daily.xml',
);
const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };
/** 2024-06-28 at 14:15 in Frankfurt (CEST, UTC+2): the ECB's snapshot of that day. */
const ECB_AS_OF = '2024-06-28T12:15:00.000Z';
const HOUR = 3_600_000;

interface RateJson {
  source_currency: string;
  destination_currency: string;
  rate: string;
  provider: string;
  as_of: string;
}

describe('FX rate imports in production (D15, D23)', () => {
  let t: TestApp;
  let tenant: Tenant;
  before(async () => {
    // AUTH_REALM sandbox only so that the test helper's token requests work; no sandbox data is seeded.
    t = await startTestApp({ env: { APP_ENV: 'production', AUTH_REALM: 'sandbox' } });
    tenant = await t.tenant();
  });
  after(() => t.close());

  const postRates = (payload: unknown, headers: Record<string, string> = admin) =>
    t.app.inject({ method: 'POST', url: '/admin/v1/fx-rates', headers, payload: payload as object });
  const pair = async (source: string, destination: string): Promise<RateJson> => {
    const response = await t.app.inject({
      method: 'GET',
      url: `/api/v1/fx/rates?source_currency=${source}&destination_currency=${destination}`,
      headers: tenant.auth,
    });
    assert.equal(response.statusCode, 200, response.body);
    return (response.json() as RateJson[])[0]!;
  };
  const expect422 = (response: { statusCode: number; body: string }, field: string) => {
    assert.equal(response.statusCode, 422, response.body);
    const body = errorBody(response.body);
    assert.equal(body.code, 'VALIDATION_FAILED');
    assert.equal(body.field, field, response.body);
    return body;
  };
  const valid = { base: 'EUR', provider: 'test', as_of: '2024-06-01T00:00:00Z', rates: { USD: '1.08' } };

  it('imports the ECB daily file: the CLI parses it, the operator route stores it (201)', async () => {
    const [request] = await importFxRatesCommand.requests([FIXTURE], {});
    assert.equal(request?.method, 'POST');
    assert.equal(request?.path, '/admin/v1/fx-rates');
    const response = await postRates(request!.body);
    assert.equal(response.statusCode, 201, response.body);
    const stored = response.json() as {
      base: string;
      provider: string;
      as_of: string;
      rates: Record<string, string>;
      replaced: boolean;
      current: boolean;
    };
    assert.equal(stored.base, 'EUR');
    assert.equal(stored.provider, 'ecb');
    assert.equal(stored.as_of, ECB_AS_OF);
    assert.equal(stored.replaced, false);
    assert.equal(stored.current, true);
    assert.equal(Object.keys(stored.rates).length, 30);
    // Stored exactly as the file writes them, trailing zeros included.
    assert.equal(stored.rates.USD, '1.0705');
    assert.equal(stored.rates.HUF, '395.10');
    assert.equal(stored.rates.IDR, '17487.21');
  });

  it('importing the same file again replaces that set (200, replaced)', async () => {
    const [request] = await importFxRatesCommand.requests([FIXTURE], {});
    const response = await postRates(request!.body);
    assert.equal(response.statusCode, 200, response.body);
    assert.equal((response.json() as { replaced: boolean }).replaced, true);
    const count = await t.deps.pool.query(
      "SELECT count(*)::int AS n FROM fx_rate_sets WHERE provider = 'ecb'",
    );
    assert.equal(count.rows[0].n, 1);
  });

  it('gives ECB cross rates from the EUR base, half-even to 10 significant digits', async () => {
    // EUR is the base: the file's rate as it is.
    assert.deepEqual(await pair('EUR', 'JPY'), {
      source_currency: 'EUR',
      destination_currency: 'JPY',
      rate: '171.94',
      provider: 'ecb',
      as_of: ECB_AS_OF,
    });
    // 171.94 / 1.0705 = 160.61653432975245...
    assert.equal((await pair('USD', 'JPY')).rate, '160.6165343');
    // 89.2495 / 0.84638 = 105.44849831045157...
    assert.equal((await pair('GBP', 'INR')).rate, '105.4484983');
    // 1 / 1.0705 = 0.93414292386735...
    assert.equal((await pair('USD', 'EUR')).rate, '0.9341429239');
    // 1.0705 / 171.94 = 0.0062260090729324...
    assert.equal((await pair('JPY', 'USD')).rate, '0.006226009073');
    // A pegged stablecoin takes the dollar's rates.
    assert.equal((await pair('USDC', 'JPY')).rate, '160.6165343');
  });

  it("takes a pair's rate from the freshest set holding both currencies", async () => {
    // A later USD-based set with EUR and GBP but no JPY.
    const later = await postRates({
      base: 'USD',
      provider: 'desk',
      as_of: '2024-07-01T09:00:00Z',
      rates: { EUR: '0.93', GBP: '0.79' },
    });
    assert.equal(later.statusCode, 201, later.body);
    // EUR->GBP: both in the later set. 0.79 / 0.93 = 0.84946236559139...
    const eurGbp = await pair('EUR', 'GBP');
    assert.equal(eurGbp.rate, '0.8494623656');
    assert.equal(eurGbp.provider, 'desk');
    assert.equal(eurGbp.as_of, '2024-07-01T09:00:00.000Z');
    // EUR->JPY: only the ECB set holds JPY.
    assert.equal((await pair('EUR', 'JPY')).provider, 'ecb');
    // Two sets of one moment: the later import wins.
    const sameMoment = await postRates({
      base: 'GBP',
      provider: 'other-desk',
      as_of: '2024-07-01T09:00:00Z',
      rates: { EUR: '1.25' },
    });
    assert.equal(sameMoment.statusCode, 201, sameMoment.body);
    const again = await pair('EUR', 'GBP');
    assert.equal(again.rate, '0.8');
    assert.equal(again.provider, 'other-desk');
    // The list chooses per currency as the pair look-up does.
    const list = await t.app.inject({
      method: 'GET',
      url: '/api/v1/fx/rates?source_currency=EUR',
      headers: tenant.auth,
    });
    const byCode = new Map((list.json() as RateJson[]).map((rate) => [rate.destination_currency, rate]));
    assert.equal(byCode.get('GBP')?.provider, 'other-desk');
    assert.equal(byCode.get('USD')?.provider, 'desk');
    assert.equal(byCode.get('JPY')?.provider, 'ecb');
    assert.equal(byCode.get('USDC')?.rate, byCode.get('USD')?.rate);
  });

  it("reads only each provider's latest set per base: a newer import supersedes the older one", async () => {
    // desk's USD set of 2024-07-01 holds EUR and GBP; its set of 2024-07-02 holds EUR only.
    assert.equal((await pair('USD', 'GBP')).provider, 'desk');
    const newer = await postRates({
      base: 'USD',
      provider: 'desk',
      as_of: '2024-07-02T09:00:00Z',
      rates: { EUR: '0.94' },
    });
    assert.equal(newer.statusCode, 201, newer.body);
    assert.equal((newer.json() as { current: boolean }).current, true);
    // 1 / 0.94 = 1.0638297872...
    assert.deepEqual(await pair('EUR', 'USD'), {
      source_currency: 'EUR',
      destination_currency: 'USD',
      rate: '1.063829787',
      provider: 'desk',
      as_of: '2024-07-02T09:00:00.000Z',
    });
    // GBP is no longer read from desk: the ECB set holds USD and GBP. 0.84638 / 1.0705 = 0.79063988...
    const usdGbp = await pair('USD', 'GBP');
    assert.equal(usdGbp.provider, 'ecb');
    assert.equal(usdGbp.rate, '0.7906398879');
    // A back-filled older day is stored but not current, and changes no rate.
    const older = await postRates({
      base: 'USD',
      provider: 'desk',
      as_of: '2024-06-30T09:00:00Z',
      rates: { EUR: '0.5', GBP: '0.5' },
    });
    assert.equal(older.statusCode, 201, older.body);
    assert.equal((older.json() as { current: boolean }).current, false);
    assert.equal((await pair('EUR', 'USD')).rate, '1.063829787');
    assert.equal((await pair('USD', 'GBP')).provider, 'ecb');
    const current = await t.deps.pool.query(
      "SELECT as_of FROM fx_rate_sets WHERE provider = 'desk' AND base_currency = 'USD' AND is_current",
    );
    assert.deepEqual(
      current.rows.map((row: { as_of: Date }) => row.as_of.toISOString()),
      ['2024-07-02T09:00:00.000Z'],
    );
  });

  it('keeps exactly one current set per provider and base under concurrent imports', async () => {
    const days = ['2024-05-01', '2024-05-02', '2024-05-03', '2024-05-04', '2024-05-05', '2024-05-06'];
    const responses = await Promise.all(
      days.map((day) =>
        postRates({ base: 'EUR', provider: 'racing', as_of: `${day}T10:00:00Z`, rates: { USD: '1.08' } }),
      ),
    );
    assert.deepEqual(
      responses.map((response) => response.statusCode),
      days.map(() => 201),
    );
    const current = await t.deps.pool.query(
      "SELECT as_of FROM fx_rate_sets WHERE provider = 'racing' AND is_current",
    );
    assert.deepEqual(
      current.rows.map((row: { as_of: Date }) => row.as_of.toISOString()),
      ['2024-05-06T10:00:00.000Z'],
    );
  });

  it('refuses to quote a rate older than FX_RATE_MAX_AGE_HOURS with 400 RATE_UNAVAILABLE', async () => {
    const asOf = new Date(ECB_AS_OF).getTime();
    const atLimit = await quotableRate(t.deps.pool, t.deps, 'USD', 'JPY', new Date(asOf + 72 * HOUR));
    assert.equal(atLimit.rate.toString(), '160.6165343');
    assert.equal(atLimit.provider, 'ecb');
    assert.equal(atLimit.as_of.toISOString(), ECB_AS_OF);
    await assert.rejects(
      quotableRate(t.deps.pool, t.deps, 'USD', 'JPY', new Date(asOf + 72 * HOUR + 1)),
      (error: unknown) => {
        const appError = error as { code: string; statusCode: number; message: string };
        assert.equal(appError.code, 'RATE_UNAVAILABLE');
        assert.equal(appError.statusCode, 400);
        assert.match(appError.message, /as of 2024-06-28T12:15:00\.000Z, older than 72 hours/);
        return true;
      },
    );
    // A longer FX_RATE_MAX_AGE_HOURS admits it.
    const patient = { config: { ...t.deps.config, fxRateMaxAgeHours: 96 } };
    const later = await quotableRate(t.deps.pool, patient, 'USD', 'JPY', new Date(asOf + 80 * HOUR));
    assert.equal(later.rate.toString(), '160.6165343');
    // A pegged pair is never stale.
    const par = await quotableRate(t.deps.pool, t.deps, 'USDC', 'USD', new Date('2030-01-01T00:00:00Z'));
    assert.equal(par.rate.toString(), '1');
    assert.equal(par.provider, 'par');
    // Stale rates are still shown as indicative rates, with their as_of.
    assert.equal((await pair('USD', 'JPY')).as_of, ECB_AS_OF);
  });

  it('rejects an unknown or pegged base with 422 on base', async () => {
    expect422(await postRates({ ...valid, base: 'XYZ' }), 'base');
    expect422(await postRates({ ...valid, base: 'eur' }), 'base');
    expect422(await postRates({ ...valid, base: 'constructor' }), 'base');
    const pegged = expect422(await postRates({ ...valid, base: 'USDC', rates: { EUR: '0.92' } }), 'base');
    assert.match(pegged.error, /USDC is pegged to USD/);
  });

  it('rejects a rate for a pegged currency with 422 naming it: it would be stored and never used', async () => {
    const refused = expect422(
      await postRates({ ...valid, base: 'EUR', rates: { USD: '1.08', USDC: '5' } }),
      'rates.USDC',
    );
    assert.equal(
      refused.error,
      'rates.USDC: USDC is pegged to USD (FX_PEGS) and takes its rates; leave it out',
    );
  });

  it('rejects an as_of that is not a strict ISO-8601 date-time, or in the future, with 422 on as_of', async () => {
    for (const asOf of [
      '2024-06-28',
      '2024-06-28T12:15Z',
      '2024-06-28T12:15:00',
      '2024-02-30T00:00:00Z',
      '2024-06-28T24:00:00Z',
      '28/06/2024',
      'yesterday',
    ]) {
      expect422(await postRates({ ...valid, as_of: asOf }), 'as_of');
    }
    const future = new Date(Date.now() + 60 * 60_000).toISOString();
    expect422(await postRates({ ...valid, as_of: future }), 'as_of');
    expect422(await postRates({ ...valid, as_of: 20240628 }), 'as_of');
  });

  it('accepts an as_of with an offset and stores it in UTC', async () => {
    const response = await postRates({
      ...valid,
      provider: 'offset',
      as_of: '2024-06-02T01:30:00.250+02:00',
    });
    assert.equal(response.statusCode, 201, response.body);
    assert.equal((response.json() as { as_of: string }).as_of, '2024-06-01T23:30:00.250Z');
  });

  it('rejects each bad rate with 422 naming rates.<code>', async () => {
    expect422(await postRates({ ...valid, rates: {} }), 'rates');
    expect422(await postRates({ ...valid, rates: 'USD=1.08' }), 'rates');
    expect422(await postRates({ ...valid, rates: { USD: '1.08', XYZ: '2' } }), 'rates.XYZ');
    expect422(await postRates({ ...valid, rates: { usd: '1.08' } }), 'rates.usd');
    expect422(await postRates({ ...valid, rates: { USD: '1.08', toString: '1.1' } }), 'rates.toString');
    const base = expect422(await postRates({ ...valid, rates: { USD: '1.08', EUR: '1' } }), 'rates.EUR');
    assert.match(base.error, /base currency is 1 by definition/);
    for (const rate of [
      '0',
      '0.000',
      '-1.08',
      '+1.08',
      '1e3',
      '1.08 ',
      '',
      '.5',
      '01.08',
      '1,08',
      1.08,
      null,
    ]) {
      expect422(await postRates({ ...valid, rates: { USD: rate } }), 'rates.USD');
    }
    // 11 significant digits are refused; 10 are taken, leading and trailing zeros do not count.
    const eleven = expect422(await postRates({ ...valid, rates: { USD: '1.0823456789' } }), 'rates.USD');
    assert.match(eleven.error, /more than 10 significant digits/);
    const ten = await postRates({
      ...valid,
      provider: 'ten-digits',
      rates: { USD: '1.082345678', BTC: '0.00001234567890', JPY: '171.9400000' },
    });
    assert.equal(ten.statusCode, 201, ten.body);
  });

  it('rejects a bad provider, a missing field and an unknown key with 422 naming it', async () => {
    for (const provider of ['ECB', '', 'ecb feed', 'x'.repeat(65)]) {
      expect422(await postRates({ ...valid, provider }), 'provider');
    }
    for (const field of ['base', 'as_of', 'provider', 'rates']) {
      const { [field as keyof typeof valid]: _left, ...rest } = valid;
      expect422(await postRates(rest), field);
    }
    expect422(await postRates({ ...valid, source: 'manual' }), 'source');
  });

  it('refuses the operator route without the operator key (401)', async () => {
    const response = await postRates(valid, { authorization: 'Bearer wrong-key-0123456789abcdef' });
    assert.equal(response.statusCode, 401);
    assert.equal(errorBody(response.body).code, 'UNAUTHORIZED');
    const withToken = await postRates(valid, tenant.auth);
    assert.equal(withToken.statusCode, 401);
  });

  it('logs each operator action with its actor and outcome', async () => {
    const before = t.logs.lines.length;
    await postRates({ ...valid, provider: 'logged', as_of: '2024-06-03T00:00:00Z' });
    await postRates({ ...valid, provider: 'logged', rates: { XYZ: '1' } });
    await postRates(valid, { authorization: 'Bearer wrong-key-0123456789abcdef' });
    const actions = t.logs.lines
      .slice(before)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.operator_action !== undefined);
    assert.equal(actions.length, 3);
    const [created, refused, unauthorised] = actions as Array<Record<string, unknown>>;
    assert.equal(created?.operator_action, 'fx_rates.post');
    assert.equal(created?.outcome, 'succeeded');
    assert.equal(created?.status, 201);
    assert.deepEqual(created?.actor, { credential: 'ADMIN_API_KEY', address: '127.0.0.1' });
    assert.equal(created?.provider, 'logged');
    assert.equal(created?.base, 'EUR');
    assert.equal(created?.rates, 1);
    assert.equal(created?.replaced, false);
    assert.equal(typeof created?.request_id, 'string');
    assert.equal(refused?.outcome, 'refused');
    assert.equal(refused?.status, 422);
    assert.equal(refused?.error_code, 'VALIDATION_FAILED');
    assert.equal(unauthorised?.outcome, 'refused');
    assert.equal(unauthorised?.error_code, 'UNAUTHORIZED');
    assert.deepEqual(unauthorised?.actor, { credential: 'none', address: '127.0.0.1' });
    // The key never reaches the log.
    assert.equal(t.logs.text.includes(TEST_ADMIN_KEY), false);
  });

  it('runs `payment-service admin import-fx-rates FILE` against a listening app', async () => {
    await t.deps.pool.query("DELETE FROM fx_rate_sets WHERE provider = 'ecb'");
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const env = { ADMIN_API_KEY: TEST_ADMIN_KEY, ADMIN_URL: address };
    const output: string[] = [];
    const write = process.stdout.write;
    process.stdout.write = ((chunk: string) => {
      output.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    let code: number;
    try {
      code = await runAdminCli(['import-fx-rates', FIXTURE], env);
    } finally {
      process.stdout.write = write;
    }
    assert.equal(code, 0);
    const printed = JSON.parse(output.join('')) as { provider: string; as_of: string; replaced: boolean };
    assert.equal(printed.provider, 'ecb');
    assert.equal(printed.as_of, ECB_AS_OF);
    assert.equal(printed.replaced, false);
    assert.equal((await pair('EUR', 'JPY')).provider, 'ecb');
  });

  it('exits 2 with a message when the file is missing or not an ECB file', async () => {
    const env = { ADMIN_API_KEY: TEST_ADMIN_KEY, ADMIN_URL: 'http://127.0.0.1:9' };
    const errors: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string) => {
      errors.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      assert.equal(await runAdminCli(['import-fx-rates'], env), 2);
      assert.equal(await runAdminCli(['import-fx-rates', '/nonexistent/eurofxref.xml'], env), 2);
      assert.equal(
        await runAdminCli(
          ['import-fx-rates', path.join(path.dirname(FIXTURE), '..', '..', 'package.json')],
          env,
        ),
        2,
      );
    } finally {
      process.stderr.write = write;
    }
    const text = errors.join('');
    assert.match(text, /import-fx-rates: the ECB XML file to import is missing/);
    assert.match(text, /ENOENT/);
    assert.match(text, /import-fx-rates: not well-formed XML/);
  });
});
