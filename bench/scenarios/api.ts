// Scenario 6, api: requests per second and latency of the webhook API over a large history
// (BENCH_API_EVENTS events, 3 attempts each), with autocannon in a process of its own against an `api`
// process, and against an `auth` process for the token endpoint (the `api` role does not serve it).
import { type ApiSeed, seedApiHistory } from '../lib/api-seed.ts';
import type { LoadInput, LoadOutput } from '../lib/load-child.ts';
import { runScript } from '../lib/processes.ts';
import {
  atLeast,
  atMost,
  type Metric,
  rssMetric,
  type Scenario,
  type ScenarioResult,
} from '../lib/scenario.ts';
import { createApiClient, fetchToken } from '../lib/seed.ts';
import { now, round } from '../lib/util.ts';

interface Endpoint {
  name: string;
  load: Omit<LoadInput, 'connections' | 'durationSeconds'>;
  /** Checks the answer of one probe request; returns a problem, or undefined. */
  check?: (body: unknown) => string | undefined;
  targets: { minRps?: number; maxP99Ms?: number };
}

interface EndpointResult {
  name: string;
  available: boolean;
  probeStatus: number;
  probeBody?: string;
  load?: LoadOutput;
}

const ATTEMPT_FILTER_IDS = 5;

function endpoints(
  apiUrl: string,
  authUrl: string,
  token: string,
  seed: ApiSeed,
  client: { id: string; secret: string },
): Endpoint[] {
  const json = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const attemptBodies = Array.from({ length: 200 }, (_, index) =>
    JSON.stringify({
      filters: {
        webhook_event_ids: seed.sampleEventIds
          .slice((index * ATTEMPT_FILTER_IDS) % seed.sampleEventIds.length)
          .slice(0, ATTEMPT_FILTER_IDS),
      },
    }),
  );
  return [
    {
      name: 'GET subscription',
      load: {
        url: `${apiUrl}/api/v1/webhooks/subscriptions/${seed.subscriptionId}`,
        method: 'GET',
        headers: { authorization: `Bearer ${token}` },
      },
      check: (body) =>
        (body as { id?: string }).id === seed.subscriptionId
          ? undefined
          : 'GET subscription returned another id',
      targets: { minRps: 5_000 },
    },
    {
      name: 'events search (status dead_letter)',
      load: {
        url: `${apiUrl}/api/v1/webhooks/events/search`,
        method: 'POST',
        headers: json,
        bodies: [JSON.stringify({ filters: { status: ['dead_letter'] } })],
      },
      check: (body) => {
        const total = (body as { total?: number }).total;
        return total === seed.counts.deadLetterMain
          ? undefined
          : `events search total ${total}, expected ${seed.counts.deadLetterMain} dead_letter events`;
      },
      targets: { maxP99Ms: 50 },
    },
    {
      name: `attempts search (${ATTEMPT_FILTER_IDS} webhook_event_ids)`,
      load: {
        url: `${apiUrl}/api/v1/webhooks/delivery-attempts/search`,
        method: 'POST',
        headers: json,
        bodies: attemptBodies,
      },
      check: (body) => {
        const total = (body as { total?: number }).total;
        return total === ATTEMPT_FILTER_IDS * 3
          ? undefined
          : `attempts search total ${total}, expected ${ATTEMPT_FILTER_IDS * 3} (3 attempts per event)`;
      },
      targets: { maxP99Ms: 50 },
    },
    {
      name: 'token (client_credentials)',
      load: {
        url: `${authUrl}/realms/sandbox/protocol/openid-connect/token`,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        bodies: [
          new URLSearchParams({
            grant_type: 'client_credentials',
            client_id: client.id,
            client_secret: client.secret,
          }).toString(),
        ],
      },
      check: (body) =>
        typeof (body as { access_token?: unknown }).access_token === 'string'
          ? undefined
          : 'the token endpoint returned no access_token',
      targets: { minRps: 1_000, maxP99Ms: 20 },
    },
  ];
}

async function probe(endpoint: Endpoint): Promise<{ status: number; text: string }> {
  const response = await fetch(endpoint.load.url, {
    method: endpoint.load.method,
    headers: endpoint.load.headers,
    body: endpoint.load.bodies?.[0],
    signal: AbortSignal.timeout(30_000),
  });
  return { status: response.status, text: await response.text() };
}

export const api: Scenario = {
  name: 'api',
  title:
    'Webhook API over a seeded history (1,000,000 events, 3,000,000 attempts by default): requests/s and p99',
  measures:
    'Requests per second and latency (p50, p99; autocannon, BENCH_API_CONNECTIONS connections, BENCH_API_DURATION ' +
    's per endpoint after a warm-up, from a process of its own) of GET subscription, events search by status, ' +
    'attempts search by event ids against an `api` process, and of the token endpoint against an `auth` process, ' +
    'with a seeded, vacuumed and analysed history; rate limit lifted (RATE_LIMIT_MAX). Leaves out writes, ' +
    'free-text search, deep pages, several API processes, Redis, and TLS in front of the service.',
  timeoutMs: (settings) => 600_000 + settings.apiEvents + 4 * (settings.apiDuration + 20) * 1000,
  async run(context): Promise<ScenarioResult> {
    const { settings, signal } = context;
    const server = await context.server();
    const db = await server.createDatabase('api', 4);
    context.defer(() => db.drop());
    const seedStart = now();
    context.log(
      `seeding ${settings.apiEvents.toLocaleString('en-US')} events and ${(settings.apiEvents * 3).toLocaleString('en-US')} attempts`,
    );
    const seed = await seedApiHistory(
      db.pool,
      context.encryptionKey,
      settings.apiEvents,
      context.log,
      signal,
    );
    const seedSeconds = round((now() - seedStart) / 1000);
    context.log(`seeded in ${seedSeconds} s: ${JSON.stringify(seed.counts)} ${JSON.stringify(seed.sizes)}`);
    const client = await createApiClient(db.pool, context.encryptionKey, seed.organisationId);
    await db.pool.end();

    const env = { DATABASE_URL: db.url, RATE_LIMIT_MAX: '10000000', TOKEN_TTL_SECONDS: '3600' };
    const [auth, apiProcess] = await Promise.all([
      context.startService('auth', env, 'auth'),
      context.startService('api', env, 'api'),
    ]);
    const token = await fetchToken(auth.url, client);

    const results: EndpointResult[] = [];
    const problems: string[] = [];
    for (const endpoint of endpoints(apiProcess.url, auth.url, token, seed, {
      id: client.clientId,
      secret: client.clientSecret,
    })) {
      signal.throwIfAborted();
      const answer = await probe(endpoint);
      if (answer.status !== 200) {
        context.log(`${endpoint.name}: not available (HTTP ${answer.status}); skipped`);
        problems.push(`${endpoint.name}: HTTP ${answer.status} ${answer.text.slice(0, 200)}`);
        results.push({
          name: endpoint.name,
          available: false,
          probeStatus: answer.status,
          probeBody: answer.text.slice(0, 500),
        });
        continue;
      }
      const problem = endpoint.check?.(JSON.parse(answer.text));
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
        problems.push(
          `${endpoint.name}: ${load.non2xx} non-2xx answers ${JSON.stringify(load.statusCodes)}, ${load.errors} errors`,
        );
      }
      results.push({ name: endpoint.name, available: true, probeStatus: answer.status, load });
    }
    const peakApi = apiProcess.peakRssMb();
    const peakAuth = auth.peakRssMb();

    const metrics: Metric[] = [];
    const specs = endpoints('', '', '', seed, { id: '', secret: '' });
    for (const result of results) {
      const targets = specs.find((spec) => spec.name === result.name)?.targets ?? {};
      const rps = result.load?.requestsPerSecond ?? null;
      const p99 = result.load?.latencyMs.p99 ?? null;
      metrics.push({
        name: `${result.name} requests/s`,
        value: rps,
        unit: '/s',
        ...(targets.minRps
          ? { target: `≥ ${targets.minRps.toLocaleString('en-US')}/s`, pass: atLeast(rps, targets.minRps) }
          : {}),
      });
      metrics.push({ name: `${result.name} p50`, value: result.load?.latencyMs.p50 ?? null, unit: 'ms' });
      metrics.push({
        name: `${result.name} p99`,
        value: p99,
        unit: 'ms',
        ...(targets.maxP99Ms
          ? { target: `≤ ${targets.maxP99Ms} ms`, pass: atMost(p99, targets.maxP99Ms) }
          : {}),
      });
    }
    metrics.push(rssMetric('peak RSS api process', peakApi), rssMetric('peak RSS auth process', peakAuth));
    return {
      metrics,
      details: {
        seed: { ...seed, sampleEventIds: seed.sampleEventIds.length },
        seedSeconds,
        connections: settings.apiConnections,
        durationSeconds: settings.apiDuration,
        endpoints: results,
      },
      notes: [
        'The token endpoint is served by the `auth` role (the `api` role does not serve /realms/...): per request ' +
          'a client lookup, an HMAC-SHA-256 check of the secret and an RS256 signature.',
      ],
      problems,
    };
  },
};
