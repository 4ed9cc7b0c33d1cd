// Scenario 5, slow-endpoint: ten subscriptions of one organisation, nine answering at once and one taking
// BENCH_SLOW_MS (5 s) per request; a steady BENCH_SLOW_RATE events per second for BENCH_SECONDS, each
// matching all ten, one worker with the default caps. Throughput and publish-to-receipt latency of the
// fast nine: the fairness rules (per-subscription cap, claims that skip saturated subscriptions) should keep
// them close to an unloaded worker while the slow one builds a backlog.
import { deliveryProblems, deliverySummary, waitForNoPending } from '../lib/checks.ts';
import { publishSteadily } from '../lib/publisher.ts';
import { startReceiver } from '../lib/receiver.ts';
import { rssMetric, type Scenario, type ScenarioResult, workerEnv } from '../lib/scenario.ts';
import { createOrganisation, createSubscription } from '../lib/seed.ts';
import { distribution } from '../lib/stats.ts';
import { perSecond, round, waitUntil } from '../lib/util.ts';
import { latencies } from './delivery-latency.ts';

const FAST = 9;
const SLOW_PATH = '/slow';
const fastPath = (index: number) => `/fast/${index}`;

export const slowEndpoint: Scenario = {
  name: 'slow-endpoint',
  title: 'One subscription answering in 5 s beside nine fast ones: the fast ones keep their pace',
  measures:
    'With one endpoint holding every request for 5 s and nine answering at once, under a steady stream of ' +
    'events matching all ten: deliveries per second and publish-to-receipt latency (p50, p95, p99, max) of the ' +
    'nine fast subscriptions, and how many requests the slow one got. Leaves out timeouts (5 s is below ' +
    'WEBHOOK_TIMEOUT_MS) and failing endpoints; the slow backlog is not waited for.',
  timeoutMs: (settings) => 240_000 + settings.seconds * 3_000,
  async run(context): Promise<ScenarioResult> {
    const { settings, signal } = context;
    const server = await context.server();
    const db = await server.createDatabase('slow', 32);
    context.defer(() => db.drop());
    const organisationId = await createOrganisation(db.pool, 'Bench slow endpoint');
    const secrets = new Map<string, string>();
    const receiver = await startReceiver({
      certificate: context.certificate(),
      delayFor: (path) => (path === SLOW_PATH ? settings.slowMs : 0),
      secretFor: (path) => secrets.get(path),
      verifyPerPath: 5,
    });
    context.defer(() => receiver.close());
    const fastIds: string[] = [];
    for (const path of [SLOW_PATH, ...Array.from({ length: FAST }, (_, index) => fastPath(index + 1))]) {
      const subscription = await createSubscription(db.pool, context.encryptionKey, {
        organisationId,
        endpointUrl: `${receiver.origin}${path}`,
      });
      secrets.set(path, subscription.secret);
      if (path !== SLOW_PATH) fastIds.push(subscription.id);
    }
    const worker = await context.startService('worker', workerEnv(context, db.url), 'worker-slow');

    const fastReceived = () =>
      Array.from(
        { length: FAST },
        (_, index) => receiver.byPath.get(fastPath(index + 1))?.unique ?? 0,
      ).reduce((sum, count) => sum + count, 0);
    context.log(`publishing ${settings.slowRate} events/s × 10 subscriptions for ${settings.seconds} s`);
    const steady = await publishSteadily(db.pool, organisationId, {
      rate: settings.slowRate,
      seconds: settings.seconds,
      signal,
    });
    const expectedFast = steady.published.length * FAST;
    await waitUntil('every fast delivery at the receiver', () => fastReceived() >= expectedFast, {
      timeoutMs: 60_000,
      signal,
      progress: () => `${fastReceived()} of ${expectedFast}`,
    });
    await waitForNoPending(db.pool, { timeoutMs: 60_000, signal, subscriptionIds: fastIds });
    const slowStats = receiver.byPath.get(SLOW_PATH);
    const peakRss = worker.peakRssMb();
    const summary = await deliverySummary(db.pool, fastIds);
    const slowPending = await db.pool.query<{ pending: number }>(
      `SELECT count(*)::int AS pending FROM webhook_deliveries
       WHERE state = 'pending' AND NOT (subscription_id = ANY($1::uuid[]))`,
      [fastIds],
    );
    await worker.stop();
    await receiver.close();

    const fastValues: number[] = [];
    let missing = 0;
    let firstFast = Number.POSITIVE_INFINITY;
    let lastFast = 0;
    for (let index = 1; index <= FAST; index++) {
      const measured = latencies(steady.published, receiver.arrivals, fastPath(index));
      fastValues.push(...measured.values);
      missing += measured.missing;
      const stats = receiver.byPath.get(fastPath(index));
      if (stats) {
        firstFast = Math.min(firstFast, stats.firstArrival);
        lastFast = Math.max(lastFast, stats.lastAck);
      }
    }
    const latency = distribution(fastValues);
    const problems: string[] = [];
    if (steady.errors > 0) problems.push(`${steady.errors} publishes failed; first: ${steady.firstError}`);
    if (missing > 0) problems.push(`${missing} fast deliveries never reached the receiver`);
    if (receiver.badSignatures > 0) problems.push(`${receiver.badSignatures} signatures did not verify`);
    problems.push(
      ...deliveryProblems(summary, expectedFast).map((problem) => `fast subscriptions: ${problem}`),
    );
    const offered = round((expectedFast * 1000) / steady.elapsedMs);
    return {
      metrics: [
        { name: 'fast deliveries/s offered', value: offered, unit: '/s' },
        {
          name: 'fast deliveries/s delivered',
          value: perSecond(fastReceived(), lastFast - firstFast),
          unit: '/s',
        },
        { name: 'fast latency p50', value: latency.p50, unit: 'ms' },
        { name: 'fast latency p95', value: latency.p95, unit: 'ms' },
        { name: 'fast latency p99', value: latency.p99, unit: 'ms' },
        { name: 'fast latency max', value: latency.max, unit: 'ms' },
        { name: 'slow endpoint requests received', value: slowStats?.requests ?? 0, unit: '' },
        { name: 'slow deliveries still pending', value: slowPending.rows[0]!.pending, unit: '' },
        rssMetric('peak RSS worker', peakRss),
      ],
      details: {
        rate: settings.slowRate,
        seconds: settings.seconds,
        slowMs: settings.slowMs,
        fastLatency: latency,
        fastSummary: summary,
        late: steady.late,
        perSubscriptionCap: 'service default (WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION unset)',
      },
      notes: [
        'No target in the issue: compare the fast latency with delivery-latency (same worker, no slow endpoint).',
      ],
      problems,
    };
  },
};
