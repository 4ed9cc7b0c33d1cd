// Scenario 7, fx-rates: requests per second and latency of the reference endpoints (D15, D16) over a long
// history of rate imports: ten years of daily ECB-style sets (30 currencies against EUR) and BENCH_FX_HOURS
// hourly sets of a provider quoting 150 currencies against USD, beside the sandbox's rates and corridors.
// Reads look only at each provider's latest set per base, so the history should not show in the figures.

import currencyCodes from 'currency-codes';
import type { LoadInput, LoadOutput } from '../lib/load-child.ts';
import { runScript } from '../lib/processes.ts';
import { atMost, type Metric, rssMetric, type Scenario, type ScenarioResult } from '../lib/scenario.ts';
import { fetchToken } from '../lib/seed.ts';
import { now, round } from '../lib/util.ts';

interface Endpoint {
  name: string;
  load: Omit<LoadInput, 'connections' | 'durationSeconds'>;
  check: (body: unknown) => string | undefined;
}

/** Own target (none is given for these endpoints): the API's search target of p99 ≤ 50 ms. */
const P99_TARGET_MS = 50;
const ECB_DAYS = 3_650;
const ECB_CURRENCIES = 30;
const DESK_CURRENCIES = 150;

function endpoints(apiUrl: string, token: string): Endpoint[] {
  const auth = { authorization: `Bearer ${token}` };
  return [
    {
      name: 'GET rates from USD (every currency)',
      load: { url: `${apiUrl}/api/v1/fx/rates?source_currency=USD`, method: 'GET', headers: auth },
      check: (body) =>
        Array.isArray(body) && body.length >= DESK_CURRENCIES
          ? undefined
          : `rates from USD: ${Array.isArray(body) ? body.length : 'no'} entries, expected at least ${DESK_CURRENCIES}`,
    },
    {
      name: 'GET rate GBP->INR (cross)',
      load: {
        url: `${apiUrl}/api/v1/fx/rates?source_currency=GBP&destination_currency=INR`,
        method: 'GET',
        headers: auth,
      },
      check: (body) =>
        (body as Array<{ provider?: string }>)[0]?.provider === 'desk'
          ? undefined
          : `GBP->INR came from ${JSON.stringify(body)}, expected the desk's latest set`,
    },
    {
      name: 'GET currencies',
      load: { url: `${apiUrl}/api/v1/fx/currencies`, method: 'GET', headers: auth },
      check: (body) =>
        Array.isArray(body) && body.length === 10 ? undefined : `currencies: ${JSON.stringify(body)}`,
    },
    {
      name: 'corridors search (source USD)',
      load: {
        url: `${apiUrl}/api/v1/corridors/search`,
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        bodies: [JSON.stringify({ filters: { source_currency: ['USD'] }, page_size: 20 })],
      },
      check: (body) =>
        (body as { total?: number }).total === 9 ? undefined : `corridors search: ${JSON.stringify(body)}`,
    },
  ];
}

export const fxRates: Scenario = {
  name: 'fx-rates',
  title: 'Rates, currencies and corridors over a long import history: requests/s and p99',
  measures:
    'Requests per second and latency (p50, p99; autocannon, BENCH_API_CONNECTIONS connections, BENCH_API_DURATION ' +
    's per endpoint after a warm-up, from a process of its own) of GET /fx/rates (every currency from USD, and one ' +
    'cross pair), GET /fx/currencies and corridors search against an `api` process, over 3,650 daily sets of 30 ' +
    'rates against EUR and BENCH_FX_HOURS hourly sets of 150 rates against USD; rate limit lifted. Leaves out ' +
    'rate imports under read load, several API processes and TLS.',
  timeoutMs: (settings) => 900_000 + 5 * (settings.apiDuration + 20) * 1000,
  async run(context): Promise<ScenarioResult> {
    const { settings, signal } = context;
    const hours = settings.fxHours;
    const server = await context.server();
    const db = await server.createDatabase('fx', 4);
    context.defer(() => db.drop());

    const codes = currencyCodes
      .codes()
      .filter((code) => !['USD', 'EUR', 'XAU', 'XAG', 'XPD', 'XPT', 'XTS', 'XXX'].includes(code));
    const ecbCodes = ['USD', ...codes.slice(0, ECB_CURRENCIES - 1)];
    const deskCodes = ['EUR', 'GBP', 'INR', ...codes.filter((code) => !['GBP', 'INR'].includes(code))].slice(
      0,
      DESK_CURRENCIES,
    );
    const seedStart = now();
    context.log(
      `seeding ${ECB_DAYS} daily sets of ${ECB_CURRENCIES} rates and ${hours} hourly sets of ${DESK_CURRENCIES}`,
    );
    // Rates are random but positive; only their shape matters here. The latest set of each provider is
    // marked current, as an import would leave it, and each set's rates are written together (one import
    // is one statement), so they share heap pages as real imports do.
    const seedHistory = async (
      provider: string,
      base: string,
      count: number,
      step: string,
      rates: string[],
    ) => {
      await db.pool.query(
        `WITH sets AS (
           INSERT INTO fx_rate_sets (provider, base_currency, as_of, is_current)
           SELECT $1, $2, now() - ($3::int - n) * $4::interval - interval '1 hour', n = $3
           FROM generate_series(1, $3::int) AS n
           RETURNING id
         )
         INSERT INTO fx_rates (rate_set_id, currency, rate)
         SELECT sets.id, code, round((0.5 + random() * 100)::numeric, 4)
         FROM sets CROSS JOIN unnest($5::text[]) AS code
         ORDER BY sets.id, code`,
        [provider, base, count, step, rates],
      );
    };
    await seedHistory('ecb', 'EUR', ECB_DAYS, '1 day', ecbCodes);
    await seedHistory('desk', 'USD', hours, '1 hour', deskCodes);
    await db.pool.query('VACUUM ANALYZE fx_rate_sets');
    await db.pool.query('VACUUM ANALYZE fx_rates');
    const counts = (
      await db.pool.query<{ sets: number; rates: number }>(
        'SELECT (SELECT count(*)::int FROM fx_rate_sets) AS sets, (SELECT count(*)::int FROM fx_rates) AS rates',
      )
    ).rows[0]!;
    const seedSeconds = round((now() - seedStart) / 1000);
    context.log(`seeded in ${seedSeconds} s: ${counts.sets} sets, ${counts.rates} rates`);
    await db.pool.end();

    // Sandbox: the processes seed the sandbox rates, corridors and shared client on start.
    const env = { DATABASE_URL: db.url, RATE_LIMIT_MAX: '10000000', TOKEN_TTL_SECONDS: '3600' };
    const [auth, apiProcess] = await Promise.all([
      context.startService('auth', env, 'auth'),
      context.startService('api', env, 'api'),
    ]);
    const token = await fetchToken(auth.url, { clientId: 'sandbox-client', clientSecret: 'sandbox-secret' });

    const metrics: Metric[] = [];
    const problems: string[] = [];
    const results: Array<{ name: string; load?: LoadOutput }> = [];
    for (const endpoint of endpoints(apiProcess.url, token)) {
      signal.throwIfAborted();
      const probe = await fetch(endpoint.load.url, {
        method: endpoint.load.method,
        headers: endpoint.load.headers,
        body: endpoint.load.bodies?.[0],
        signal: AbortSignal.timeout(30_000),
      });
      const text = await probe.text();
      if (probe.status !== 200) {
        problems.push(`${endpoint.name}: HTTP ${probe.status} ${text.slice(0, 200)}`);
        results.push({ name: endpoint.name });
        continue;
      }
      const problem = endpoint.check(JSON.parse(text));
      if (problem) problems.push(problem);
      const run = (durationSeconds: number) =>
        runScript<LoadOutput>(
          'load-child.ts',
          [JSON.stringify({ ...endpoint.load, connections: settings.apiConnections, durationSeconds })],
          { timeoutMs: (durationSeconds + 60) * 1000, signal },
        );
      context.log(`${endpoint.name}: warm-up, then ${settings.apiDuration} s of load`);
      await run(Math.min(3, settings.apiDuration));
      const load = await run(settings.apiDuration);
      context.log(`  ${load.requestsPerSecond} requests/s, p99 ${load.latencyMs.p99} ms`);
      if (load.non2xx > 0 || load.errors > 0) {
        problems.push(`${endpoint.name}: ${load.non2xx} non-2xx answers, ${load.errors} errors`);
      }
      results.push({ name: endpoint.name, load });
      metrics.push(
        { name: `${endpoint.name} requests/s`, value: load.requestsPerSecond, unit: '/s' },
        { name: `${endpoint.name} p50`, value: load.latencyMs.p50, unit: 'ms' },
        {
          name: `${endpoint.name} p99`,
          value: load.latencyMs.p99,
          unit: 'ms',
          target: `≤ ${P99_TARGET_MS} ms`,
          pass: atMost(load.latencyMs.p99, P99_TARGET_MS),
        },
      );
    }
    metrics.push(rssMetric('peak RSS api process', apiProcess.peakRssMb()));
    return {
      metrics,
      details: {
        history: { ecbDays: ECB_DAYS, deskHours: hours, ...counts },
        seedSeconds,
        connections: settings.apiConnections,
        durationSeconds: settings.apiDuration,
        endpoints: results,
      },
      notes: [
        `The p99 target of ${P99_TARGET_MS} ms is this scenario's own choice (the API's search target); D15 and D16 ` +
          'set none.',
      ],
      problems,
    };
  },
};
