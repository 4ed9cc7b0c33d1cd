// Scenario 5, slow-endpoint: ten subscriptions of one organisation and a steady BENCH_SLOW_RATE events per
// second for BENCH_SECONDS, each matching all ten, one worker with the default caps. Two phases on the same
// worker: first all ten answer at once (the baseline), then one of them takes BENCH_SLOW_MS (5 s) per
// request. Throughput and publish-to-receipt latency of the nine fast subscriptions in both phases: the
// fairness rules (per-subscription cap, claims that skip saturated subscriptions) should keep the second
// close to the first while the slow one builds a backlog.
import type { Pool } from '../../src/db/pool.ts';
import { deliveryProblems, deliverySummary, waitForNoPending } from '../lib/checks.ts';
import { publishSteadily } from '../lib/publisher.ts';
import { arrivalKey, type Receiver, startReceiver } from '../lib/receiver.ts';
import {
  rssMetric,
  type Scenario,
  type ScenarioContext,
  type ScenarioResult,
  workerEnv,
} from '../lib/scenario.ts';
import { createOrganisation, createSubscription } from '../lib/seed.ts';
import { type Distribution, distribution } from '../lib/stats.ts';
import { perSecond, round, waitUntil } from '../lib/util.ts';
import { latencies } from './delivery-latency.ts';

const FAST = 9;
const SLOW_PATH = '/slow';
const fastPath = (index: number) => `/fast/${index}`;
const FAST_PATHS = Array.from({ length: FAST }, (_, index) => fastPath(index + 1));

interface Phase {
  slow: boolean;
  events: number;
  offered: number;
  delivered: number;
  latency: Distribution;
  late: number;
  problems: string[];
}

async function runPhase(
  context: ScenarioContext,
  input: { pool: Pool; organisationId: string; receiver: Receiver; slow: boolean; firstIndex: number },
): Promise<Phase> {
  const { settings, signal } = context;
  const { receiver } = input;
  const fastReceived = () =>
    FAST_PATHS.reduce((sum, path) => sum + (receiver.byPath.get(path)?.unique ?? 0), 0);
  const before = fastReceived();
  context.log(
    `${input.slow ? `with ${SLOW_PATH} taking ${settings.slowMs} ms` : 'baseline: all ten answer at once'}: ` +
      `${settings.slowRate} events/s × 10 subscriptions for ${settings.seconds} s`,
  );
  const steady = await publishSteadily(input.pool, context.encryptionKey, input.organisationId, {
    rate: settings.slowRate,
    seconds: settings.seconds,
    firstIndex: input.firstIndex,
    signal,
  });
  const expectedFast = steady.published.length * FAST;
  await waitUntil('every fast delivery at the receiver', () => fastReceived() - before >= expectedFast, {
    timeoutMs: 60_000,
    signal,
    progress: () => `${fastReceived() - before} of ${expectedFast}`,
  });
  const values: number[] = [];
  let missing = 0;
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const path of FAST_PATHS) {
    const measured = latencies(steady.published, receiver.arrivals, path);
    values.push(...measured.values);
    missing += measured.missing;
    for (const event of steady.published) {
      const arrived = receiver.arrivals.get(arrivalKey(path, event.publicId));
      if (arrived !== undefined) {
        first = Math.min(first, arrived);
        last = Math.max(last, arrived);
      }
    }
  }
  const problems: string[] = [];
  if (steady.errors > 0) problems.push(`${steady.errors} publishes failed; first: ${steady.firstError}`);
  if (missing > 0) problems.push(`${missing} fast deliveries never reached the receiver`);
  return {
    slow: input.slow,
    events: steady.published.length,
    offered: round((expectedFast * 1000) / steady.elapsedMs),
    delivered: perSecond(values.length, last - first),
    latency: distribution(values),
    late: steady.late,
    problems,
  };
}

export const slowEndpoint: Scenario = {
  name: 'slow-endpoint',
  title: 'One subscription answering in 5 s beside nine fast ones: the fast ones keep their pace',
  measures:
    'Under a steady stream of events matching ten subscriptions, deliveries per second and publish-to-receipt ' +
    'latency (p50, p95, p99, max) of nine fast subscriptions, first with all ten answering at once (baseline), ' +
    'then with one holding every request for 5 s; and how many requests the slow one got. Leaves out timeouts ' +
    '(5 s is below WEBHOOK_TIMEOUT_MS) and failing endpoints; the slow backlog is not waited for.',
  timeoutMs: (settings) => 300_000 + settings.seconds * 6_000,
  async run(context): Promise<ScenarioResult> {
    const { settings, signal } = context;
    const server = await context.server();
    const db = await server.createDatabase('slow', 32);
    context.defer(() => db.drop());
    const organisationId = await createOrganisation(db.pool, 'Bench slow endpoint');
    const secrets = new Map<string, string>();
    let slowOn = false;
    const receiver = await startReceiver({
      certificate: context.certificate(),
      delayFor: (path) => (slowOn && path === SLOW_PATH ? settings.slowMs : 0),
      secretFor: (path) => secrets.get(path),
      verifyPerPath: 5,
    });
    context.defer(() => receiver.close());
    const fastIds: string[] = [];
    for (const path of [SLOW_PATH, ...FAST_PATHS]) {
      const subscription = await createSubscription(db.pool, context.encryptionKey, {
        organisationId,
        endpointUrl: `${receiver.origin}${path}`,
      });
      secrets.set(path, subscription.secret);
      if (path !== SLOW_PATH) fastIds.push(subscription.id);
    }
    const worker = await context.startService('worker', workerEnv(context, db.url), 'worker-slow');

    context.log('warm-up: 2 s at the same rate, all ten fast (not counted)');
    const warmup = (
      await publishSteadily(db.pool, context.encryptionKey, organisationId, {
        rate: settings.slowRate,
        seconds: 2,
        firstIndex: 2_000_000,
        signal,
      })
    ).published.length;
    await waitForNoPending(db.pool, { timeoutMs: 60_000, signal });
    const baseline = await runPhase(context, {
      pool: db.pool,
      organisationId,
      receiver,
      slow: false,
      firstIndex: 0,
    });
    // The baseline's deliveries to the (then fast) slow path finish too, so the second phase starts clean.
    await waitForNoPending(db.pool, { timeoutMs: 60_000, signal });
    const slowBefore = receiver.byPath.get(SLOW_PATH)?.requests ?? 0;
    slowOn = true;
    const withSlow = await runPhase(context, {
      pool: db.pool,
      organisationId,
      receiver,
      slow: true,
      firstIndex: 1_000_000,
    });
    await waitForNoPending(db.pool, { timeoutMs: 60_000, signal, subscriptionIds: fastIds });
    const slowRequests = (receiver.byPath.get(SLOW_PATH)?.requests ?? 0) - slowBefore;
    const peakRss = worker.peakRssMb();
    const summary = await deliverySummary(db.pool, fastIds);
    const slowPending = await db.pool.query<{ pending: number }>(
      `SELECT count(*)::int AS pending FROM webhook_deliveries
       WHERE state = 'pending' AND NOT (subscription_id = ANY($1::uuid[]))`,
      [fastIds],
    );
    await worker.stop();
    await receiver.close();

    const problems = [
      ...baseline.problems.map((problem) => `baseline: ${problem}`),
      ...withSlow.problems.map((problem) => `with the slow endpoint: ${problem}`),
      ...deliveryProblems(summary, (warmup + baseline.events + withSlow.events) * FAST).map(
        (problem) => `fast subscriptions: ${problem}`,
      ),
    ];
    if (receiver.badSignatures > 0) problems.push(`${receiver.badSignatures} signatures did not verify`);
    const notes: string[] = [];
    if (baseline.latency.p99 > 1_000) {
      notes.push(
        'The baseline itself is far from idle (p99 over 1 s): the worker does not keep up with the offered ' +
          'load on this machine, so the comparison shows overload rather than fairness; lower BENCH_SLOW_RATE.',
      );
    }
    return {
      metrics: [
        { name: 'fast deliveries/s offered', value: withSlow.offered, unit: '/s' },
        { name: 'fast deliveries/s, baseline', value: baseline.delivered, unit: '/s' },
        { name: 'fast deliveries/s, with slow endpoint', value: withSlow.delivered, unit: '/s' },
        { name: 'fast latency p50, baseline', value: baseline.latency.p50, unit: 'ms' },
        { name: 'fast latency p50, with slow endpoint', value: withSlow.latency.p50, unit: 'ms' },
        { name: 'fast latency p95, with slow endpoint', value: withSlow.latency.p95, unit: 'ms' },
        { name: 'fast latency p99, baseline', value: baseline.latency.p99, unit: 'ms' },
        { name: 'fast latency p99, with slow endpoint', value: withSlow.latency.p99, unit: 'ms' },
        { name: 'fast latency max, with slow endpoint', value: withSlow.latency.max, unit: 'ms' },
        { name: 'slow endpoint requests received', value: slowRequests, unit: '' },
        { name: 'slow deliveries still pending', value: slowPending.rows[0]!.pending, unit: '' },
        rssMetric('peak RSS worker', peakRss),
      ],
      details: {
        rate: settings.slowRate,
        seconds: settings.seconds,
        slowMs: settings.slowMs,
        baseline,
        withSlow,
        fastSummary: summary,
        perSubscriptionCap: 'service default (WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION unset)',
      },
      notes,
      problems,
    };
  },
};
