// Scenario banks: the bank directory with BENCH_BANK_BRANCHES branches (200,000 by default) imported through
// the operator route, then latency of POST /api/v1/banks/validate (a mix of code types, most of them found in
// the directory) and of POST /api/v1/bank-branches/search by free text and by code, with autocannon in a
// process of its own against an `api` process (tokens from an `auth` process, as in the api scenario).
import { syntheticDirectory } from '../lib/bank-directory.ts';
import type { LoadInput, LoadOutput } from '../lib/load-child.ts';
import type { PacedInput } from '../lib/paced-child.ts';
import { runScript } from '../lib/processes.ts';
import { atMost, type Metric, rssMetric, type Scenario, type ScenarioResult } from '../lib/scenario.ts';
import { createApiClient, createOrganisation, fetchToken } from '../lib/seed.ts';
import { now, round } from '../lib/util.ts';

const ADMIN_KEY = 'bench-admin-key-0123456789abcdef';

interface Endpoint {
  name: string;
  path: string;
  bodies: string[];
  /** Checks one probe answer per body kind; returns a problem, or undefined. */
  check: (body: unknown) => string | undefined;
  maxP99Ms?: number;
  /** Requests per second of the paced run, when not BENCH_BANKS_RATE. */
  rate?: number;
}

interface EndpointResult {
  name: string;
  bodies: number;
  /** As fast as answers come, BENCH_API_CONNECTIONS at a time: the capacity, and latency with queueing. */
  saturated?: LoadOutput;
  /** At BENCH_BANKS_RATE requests per second: the latency the targets are about. */
  paced?: LoadOutput;
}

/** The first 9 characters of an IFSC: its bank and the start of its branch number (about 100 branches). */
const codePrefix = (ifsc: string) => ifsc.slice(0, 9);

function endpoints(samples: ReturnType<typeof syntheticDirectory>['samples']): Endpoint[] {
  const validateBodies = [
    ...samples.ifsc.slice(0, 60).map((code) => ({ code_type: 'ifsc', code })),
    ...samples.aba.slice(0, 40).map((code) => ({ code_type: 'aba', code })),
    ...samples.sortCodes.slice(0, 30).map((code) => ({ code_type: 'sort_code', code })),
    ...samples.bics.slice(0, 40).map((code) => ({ code_type: 'bic', code })),
    { code_type: 'iban', code: 'DE89370400440532013000' },
    { code_type: 'iban', code: 'GB29NWBK60161331926819' },
    { code_type: 'iban', code: 'FR1420041010050500013M02606' },
    { code_type: 'iban', code: 'NL91ABNA0417164300' },
    { code_type: 'clabe', code: '032180000118359719' },
    { code_type: 'nuban', code: '0000014579', bank_code: '011' },
    // Invalid codes answer without a look-up: a few, as clients send them.
    { code_type: 'iban', code: 'DE89370400440532013001' },
    { code_type: 'aba', code: '021000022' },
  ].map((body) => JSON.stringify(body));
  const textBodies = [
    ...samples.cities.map((city) => ({ search: city })),
    ...samples.localities.slice(0, 100).map((locality) => ({ search: locality })),
    ...samples.ifsc.slice(0, 50).map((ifsc) => ({ search: codePrefix(ifsc) })),
  ].map((body) => JSON.stringify(body));
  const codeBodies = [
    ...samples.ifsc.slice(0, 100).map((code) => ({ filters: { code: [code] } })),
    ...samples.aba.slice(0, 50).map((code) => ({ filters: { code: [code] } })),
    ...samples.sortCodes.slice(0, 50).map((code) => ({ filters: { code: [code] } })),
  ].map((body) => JSON.stringify(body));
  const page = (body: unknown) => body as { total?: number; items?: unknown[] };
  return [
    {
      name: 'validate',
      path: '/api/v1/banks/validate',
      bodies: validateBodies,
      check: (body) =>
        (body as { valid?: boolean }).valid === true ? undefined : 'validate: first code not valid',
      maxP99Ms: 5,
    },
    {
      name: 'branch search, free text',
      path: '/api/v1/bank-branches/search',
      bodies: textBodies,
      check: (body) => ((page(body).total ?? 0) > 0 ? undefined : 'free-text search found nothing'),
      maxP99Ms: 25,
    },
    {
      name: 'branch search, by code',
      path: '/api/v1/bank-branches/search',
      bodies: codeBodies,
      check: (body) =>
        page(body).total === 1 ? undefined : `search by code: total ${page(body).total}, expected 1`,
      maxP99Ms: 25,
    },
    {
      // Informational: a word in a tenth of the names. Its exact total counts 20,000 rows, about 20 ms of
      // PostgreSQL each: paced at a rate the two cores can serve.
      name: 'branch search, broad text (10 % of branches)',
      path: '/api/v1/bank-branches/search',
      bodies: [JSON.stringify({ search: 'market' })],
      check: (body) => ((page(body).total ?? 0) > 0 ? undefined : 'broad search found nothing'),
      rate: 20,
    },
  ];
}

export const banks: Scenario = {
  name: 'banks',
  title: 'Bank directory of 200,000 branches: import, validate p99, branch search p99 (free text, by code)',
  measures:
    'Imports a synthetic directory of BENCH_BANK_BRANCHES branches (IFSC 75 %, ABA 15 %, sort codes 10 %; ' +
    'realistic names and cities) through POST /admin/v1/banks/import and times it; then requests/s and latency ' +
    '(p50, p99; autocannon from a process of its own, BENCH_API_CONNECTIONS connections, after a warm-up: ' +
    'BENCH_API_DURATION s as fast as answers come, then BENCH_API_DURATION s open-loop at BENCH_BANKS_RATE ' +
    'requests/s, which the targets are judged on) of validate (IFSC, ABA, sort code, BIC, IBAN, CLABE, NUBAN, some invalid), branch ' +
    'search by free text (cities, localities, IFSC prefixes) and by code, against an `api` process; rate limit ' +
    'lifted. Leaves out bank search (a few hundred banks), deep pages, several API processes, TLS.',
  timeoutMs: (settings) => 600_000 + settings.bankBranches + 4 * (2 * settings.apiDuration + 30) * 1000,
  async run(context): Promise<ScenarioResult> {
    const { settings, signal } = context;
    const server = await context.server();
    const db = await server.createDatabase('banks', 4);
    context.defer(() => db.drop());
    const directory = syntheticDirectory(settings.bankBranches);
    const organisationId = await createOrganisation(db.pool, 'bench banks');
    const client = await createApiClient(db.pool, context.encryptionKey, organisationId);

    const env = {
      DATABASE_URL: db.url,
      RATE_LIMIT_MAX: '10000000',
      TOKEN_TTL_SECONDS: '3600',
      ADMIN_API_KEY: ADMIN_KEY,
    };
    const [auth, api] = await Promise.all([
      context.startService('auth', env, 'auth'),
      context.startService('api', env, 'api'),
    ]);
    const problems: string[] = [];

    context.log(
      `importing ${settings.bankBranches.toLocaleString('en-US')} branches (${round(directory.csv.length / 1_048_576)} MiB of CSV)`,
    );
    const importStart = now();
    const imported = await fetch(`${api.url}/admin/v1/banks/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'text/csv' },
      body: directory.csv,
      signal: AbortSignal.any([signal, AbortSignal.timeout(600_000)]),
    });
    const importSeconds = round((now() - importStart) / 1000);
    const importBody = (await imported.json()) as { branches?: { created?: number }; error?: string };
    if (!imported.ok || importBody.branches?.created !== settings.bankBranches) {
      throw new Error(`import: HTTP ${imported.status} ${JSON.stringify(importBody).slice(0, 300)}`);
    }
    context.log(`imported in ${importSeconds} s; vacuum and analyse`);
    const reimportStart = now();
    const reimported = await fetch(`${api.url}/admin/v1/banks/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'text/csv' },
      body: directory.csv,
      signal: AbortSignal.any([signal, AbortSignal.timeout(600_000)]),
    });
    const reimportSeconds = round((now() - reimportStart) / 1000);
    const reimportBody = (await reimported.json()) as { branches?: { unchanged?: number } };
    if (reimportBody.branches?.unchanged !== settings.bankBranches) {
      problems.push(
        `re-import: ${JSON.stringify(reimportBody).slice(0, 300)}, expected every branch unchanged`,
      );
    }
    await db.pool.query('VACUUM (ANALYZE) banks, bank_branches');
    await db.pool.end();

    const token = await fetchToken(auth.url, client);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

    const specs = endpoints(directory.samples);
    const rateOf = (endpoint: Endpoint) => endpoint.rate ?? settings.banksRate;
    const results: EndpointResult[] = [];
    for (const endpoint of specs) {
      signal.throwIfAborted();
      const url = `${api.url}${endpoint.path}`;
      const probe = await fetch(url, { method: 'POST', headers, body: endpoint.bodies[0] });
      const text = await probe.text();
      if (probe.status !== 200) {
        problems.push(`${endpoint.name}: HTTP ${probe.status} ${text.slice(0, 200)}`);
        results.push({ name: endpoint.name, bodies: endpoint.bodies.length });
        continue;
      }
      const problem = endpoint.check(JSON.parse(text));
      if (problem) problems.push(problem);
      const load: Omit<LoadInput, 'connections' | 'durationSeconds'> = {
        url,
        method: 'POST',
        headers,
        bodies: endpoint.bodies,
      };
      const run = (durationSeconds: number) =>
        runScript<LoadOutput>(
          'load-child.ts',
          [JSON.stringify({ ...load, connections: settings.apiConnections, durationSeconds })],
          { timeoutMs: (durationSeconds + 60) * 1000, signal },
        );
      const runPaced = (durationSeconds: number) =>
        runScript<LoadOutput>(
          'paced-child.ts',
          [JSON.stringify({ ...load, rate: rateOf(endpoint), durationSeconds } satisfies PacedInput)],
          { timeoutMs: (durationSeconds + 60) * 1000, signal },
        );
      context.log(
        `${endpoint.name}: warm-up, ${settings.apiDuration} s as fast as it answers, ${settings.apiDuration} s at ${rateOf(endpoint)}/s`,
      );
      await run(Math.min(3, settings.apiDuration));
      const saturated = await run(settings.apiDuration);
      const paced = await runPaced(settings.apiDuration);
      context.log(
        `  ${saturated.requestsPerSecond} requests/s (p99 ${saturated.latencyMs.p99} ms); at ${rateOf(endpoint)}/s p99 ${paced.latencyMs.p99} ms`,
      );
      for (const [label, measured] of [
        ['saturated', saturated],
        ['paced', paced],
      ] as const) {
        if (measured.non2xx > 0 || measured.errors > 0) {
          problems.push(
            `${endpoint.name} (${label}): ${measured.non2xx} non-2xx answers ${JSON.stringify(measured.statusCodes)}, ${measured.errors} errors`,
          );
        }
      }
      results.push({ name: endpoint.name, bodies: endpoint.bodies.length, saturated, paced });
    }
    const peakApi = api.peakRssMb();

    const metrics: Metric[] = [
      {
        name: `import of ${settings.bankBranches.toLocaleString('en-US')} branches`,
        value: importSeconds,
        unit: 's',
      },
      { name: 're-import of the same file (all unchanged)', value: reimportSeconds, unit: 's' },
    ];
    for (const result of results) {
      const spec = specs.find((candidate) => candidate.name === result.name)!;
      const target = spec.maxP99Ms;
      const rate = rateOf(spec);
      const p99 = result.paced?.latencyMs.p99 ?? null;
      metrics.push(
        {
          name: `${result.name} requests/s (as fast as it answers)`,
          value: result.saturated?.requestsPerSecond ?? null,
          unit: '/s',
        },
        {
          name: `${result.name} p99 (as fast as it answers)`,
          value: result.saturated?.latencyMs.p99 ?? null,
          unit: 'ms',
        },
        {
          name: `${result.name} p50 at ${rate}/s`,
          value: result.paced?.latencyMs.p50 ?? null,
          unit: 'ms',
        },
        {
          name: `${result.name} p99 at ${rate}/s`,
          value: p99,
          unit: 'ms',
          ...(target ? { target: `≤ ${target} ms`, pass: atMost(p99, target) } : {}),
        },
      );
    }
    metrics.push(rssMetric('peak RSS api process (import included)', peakApi));
    return {
      metrics,
      details: {
        branches: settings.bankBranches,
        banks: directory.banks,
        csvBytes: directory.csv.length,
        importSeconds,
        reimportSeconds,
        connections: settings.apiConnections,
        durationSeconds: settings.apiDuration,
        rate: settings.banksRate,
        endpoints: results,
      },
      notes: [
        `The targets are judged on the paced runs: ${settings.banksRate} requests/s sent open-loop at even ` +
          'intervals (bench/lib/paced-child.ts), each latency from when the request was due. The runs as fast as it answers keep ' +
          `${settings.apiConnections} requests in flight: their p99 is mostly queueing on the two cores that the ` +
          'API, PostgreSQL and the load generator share.',
        'The broad free-text search has no target: its exact total counts a tenth of the directory; it is ' +
          'paced at 20 requests/s, within what the two cores serve of it.',
      ],
      problems,
    };
  },
};
