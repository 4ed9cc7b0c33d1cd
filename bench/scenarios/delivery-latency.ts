// Scenario 3, delivery-latency: with one worker running, a steady BENCH_RATE events per second for
// BENCH_SECONDS, each published in a transaction of its own through publishEvent; publish-to-receipt
// latency (start of the publishing transaction to the request's arrival at the receiver).
import { deliveryProblems, deliverySummary, waitForNoPending } from '../lib/checks.ts';
import { publishSteadily, type SteadyResult } from '../lib/publisher.ts';
import { arrivalKey, startReceiver } from '../lib/receiver.ts';
import { atMost, rssMetric, type Scenario, type ScenarioResult, workerEnv } from '../lib/scenario.ts';
import { createOrganisation, createSubscription } from '../lib/seed.ts';
import { distribution } from '../lib/stats.ts';
import { round, waitUntil } from '../lib/util.ts';

const PATH = '/latency';

/** Latencies (ms) of `published` events at `path`, and how many never arrived. */
export function latencies(
  published: SteadyResult['published'],
  arrivals: ReadonlyMap<string, number>,
  path: string,
): { values: number[]; missing: number } {
  const values: number[] = [];
  let missing = 0;
  for (const event of published) {
    const arrived = arrivals.get(arrivalKey(path, event.publicId));
    if (arrived === undefined) missing++;
    else values.push(arrived - event.startedAt);
  }
  return { values, missing };
}

export const deliveryLatency: Scenario = {
  name: 'delivery-latency',
  title:
    'Steady stream (200 events/s for 60 s by default), each published on its own, one worker: publish-to-receipt latency',
  measures:
    'Latency from the start of the publishing transaction (publishEvent + COMMIT, whose NOTIFY wakes the ' +
    'worker) to the arrival of the signed request at the receiver, for every event of a steady stream; p50, p95, ' +
    'p99, max. A 2 s warm-up (not counted) opens the connections first. Leaves out the recording of the ' +
    'outcome (after receipt), retries, and network distance (loopback).',
  timeoutMs: (settings) => 300_000 + settings.seconds * 5_000,
  async run(context): Promise<ScenarioResult> {
    const { settings, signal } = context;
    const server = await context.server();
    const db = await server.createDatabase('latency', 32);
    context.defer(() => db.drop());
    const organisationId = await createOrganisation(db.pool, 'Bench latency');
    let secret = '';
    const receiver = await startReceiver({ certificate: context.certificate(), secretFor: () => secret });
    context.defer(() => receiver.close());
    const subscription = await createSubscription(db.pool, context.encryptionKey, {
      organisationId,
      endpointUrl: `${receiver.origin}${PATH}`,
    });
    secret = subscription.secret;
    const worker = await context.startService(
      'worker',
      workerEnv(context, db.url, { WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION: String(settings.perSubscription) }),
      'worker-latency',
    );

    context.log('warm-up: 2 s at the same rate (not counted)');
    const warmup = await publishSteadily(db.pool, context.encryptionKey, organisationId, {
      rate: settings.rate,
      seconds: 2,
      signal,
    });
    await waitUntil('the warm-up deliveries', () => receiver.unique >= warmup.published.length, {
      timeoutMs: 30_000,
      signal,
    });

    context.log(`publishing ${settings.rate} events/s for ${settings.seconds} s`);
    const steady = await publishSteadily(db.pool, context.encryptionKey, organisationId, {
      rate: settings.rate,
      seconds: settings.seconds,
      firstIndex: 1_000_000,
      signal,
    });
    const expected = warmup.published.length + steady.published.length;
    // An overloaded worker drains its backlog after the stream ends: that is still part of the latency.
    await waitUntil('every delivery at the receiver', () => receiver.unique >= expected, {
      timeoutMs: 60_000 + expected * 10,
      signal,
      progress: () => `${receiver.unique} of ${expected}`,
    });
    await waitForNoPending(db.pool, { timeoutMs: 60_000, signal });
    const peakRss = worker.peakRssMb();
    await worker.stop();
    await receiver.close();

    const measured = latencies(steady.published, receiver.arrivals, PATH);
    const latency = distribution(measured.values);
    const commit = distribution(steady.published.map((event) => event.committedAt - event.startedAt));
    const summary = await deliverySummary(db.pool);
    const problems = deliveryProblems(summary, expected);
    if (steady.errors > 0) problems.push(`${steady.errors} publishes failed; first: ${steady.firstError}`);
    if (measured.missing > 0) problems.push(`${measured.missing} events never reached the receiver`);
    if (receiver.badSignatures > 0) problems.push(`${receiver.badSignatures} signatures did not verify`);
    const notes: string[] = [];
    if (steady.late > steady.published.length * 0.01) {
      notes.push(`${steady.late} events were started over 10 ms behind schedule: the publisher lagged`);
    }
    const achievedRate = round((steady.published.length * 1000) / steady.elapsedMs);
    return {
      metrics: [
        {
          name: 'latency p50',
          value: latency.p50,
          unit: 'ms',
          target: '≤ 25 ms',
          pass: atMost(latency.p50, 25),
        },
        { name: 'latency p95', value: latency.p95, unit: 'ms' },
        {
          name: 'latency p99',
          value: latency.p99,
          unit: 'ms',
          target: '≤ 100 ms',
          pass: atMost(latency.p99, 100),
        },
        { name: 'latency max', value: latency.max, unit: 'ms' },
        { name: 'events measured', value: latency.count, unit: '' },
        { name: 'publish rate achieved', value: achievedRate, unit: '/s' },
        { name: 'publish (transaction) p99', value: commit.p99, unit: 'ms' },
        rssMetric('peak RSS worker', peakRss),
      ],
      details: {
        rate: settings.rate,
        seconds: settings.seconds,
        latency,
        publishTransaction: commit,
        warmupEvents: warmup.published.length,
        late: steady.late,
        duplicates: receiver.requests - receiver.unique,
        summary,
      },
      notes,
      problems,
    };
  },
};
