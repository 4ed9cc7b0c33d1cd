// Scenario 1, delivery-throughput: a backlog of N events (each matching one active subscription) published
// with no worker running, then 1 (and in a second run 2) worker processes drain it to a local HTTPS
// receiver that answers 200 at once. Sustained deliveries per second from the first receipt to the last
// acknowledgement; the database must then show every delivery succeeded, with one attempt each.
import {
  commitCount,
  deliveryProblems,
  deliverySummary,
  sampleWaits,
  type WaitProfile,
  waitForNoPending,
} from '../lib/checks.ts';
import { cpuPerItem, cpuSnapshot, sampleMachineCpu } from '../lib/cpu.ts';
import { startReceiver } from '../lib/receiver.ts';
import {
  atLeast,
  type Metric,
  rssMetric,
  type Scenario,
  type ScenarioContext,
  type ScenarioResult,
  workerEnv,
} from '../lib/scenario.ts';
import { createOrganisation, createSubscription, publishBacklog } from '../lib/seed.ts';
import { now, perSecond, round, waitUntil } from '../lib/util.ts';
import { type LimitMeasurement, measureLimit } from './delivery-limit.ts';

export interface ThroughputRun {
  workers: number;
  events: number;
  publishMs: number;
  publishRate: number;
  /** Unique deliveries per second at the receiver: first receipt to last acknowledgement. */
  rate: number;
  receiverMs: number;
  /** First receipt to the moment the database showed no pending delivery (polled every 100 ms). */
  recordedMs: number;
  recordedRate: number;
  duplicates: number;
  badSignatures: number;
  /** PostgreSQL commits in the run's database from worker start to stop, per delivery (bench polling included). */
  commitsPerDelivery: number;
  /** What the service's PostgreSQL backends waited on while draining (pg_stat_activity samples). */
  waits: WaitProfile;
  /**
   * CPU milliseconds per delivery from the workers being ready to every outcome recorded: the workers
   * (summed), the PostgreSQL backends of the run's database, and the bench process (mostly the receiver).
   */
  cpuPerDelivery: { workersMs?: number; postgresMs?: number; benchMs: number };
  /** Busy CPU of the whole machine per delivery over the receiver's window, and the share of cores busy. */
  machineCpu: { ms: number; busyPercent: number; cores: number } | undefined;
  peakRssMb: Array<number | undefined>;
  problems: string[];
}

const DELIVERY_FLOOR_PER_SECOND = 50;

async function throughputRun(context: ScenarioContext, workers: number): Promise<ThroughputRun> {
  const { settings, signal } = context;
  const events = settings.events;
  const server = await context.server();
  const db = await server.createDatabase(`throughput_${workers}w`, 8);
  context.defer(() => db.drop());
  const organisationId = await createOrganisation(db.pool, 'Bench throughput');
  let secret = '';
  const receiver = await startReceiver({ certificate: context.certificate(), secretFor: () => secret });
  context.defer(() => receiver.close());
  const subscription = await createSubscription(db.pool, context.encryptionKey, {
    organisationId,
    endpointUrl: `${receiver.origin}/throughput`,
  });
  secret = subscription.secret;

  context.log(`  publishing ${events} events (no worker running)`);
  const publishStart = now();
  let reported = 0;
  await publishBacklog(db.pool, context.encryptionKey, organisationId, events, {
    signal,
    progress: (done) => {
      if (done - reported >= 5_000) {
        reported = done;
        context.log(`    ${done} published`);
      }
    },
  });
  const publishMs = now() - publishStart;

  await db.pool.query('SELECT pg_stat_force_next_flush()').catch(() => {});
  const commitsBefore = await commitCount(db.pool);
  context.log(`  starting ${workers} worker process(es)`);
  const env = workerEnv(context, db.url, {
    WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION: String(settings.perSubscription),
  });
  const started = await Promise.all(
    Array.from({ length: workers }, (_, index) =>
      context.startService('worker', env, `worker-${workers}w-${index + 1}`),
    ),
  );
  const workerPids = started.map((worker) => worker.pid);
  const cpuBefore = await cpuSnapshot(workerPids, db.pool);
  const machine = sampleMachineCpu();
  context.defer(() => machine.stop());
  const waitSampler = sampleWaits(db.pool);
  await waitUntil(`${events} deliveries at the receiver`, () => receiver.unique >= events, {
    timeoutMs: 60_000 + (events / DELIVERY_FLOOR_PER_SECOND) * 1000,
    signal,
    intervalMs: 20,
    progress: () => `${receiver.unique} received`,
  });
  const receiverMs = receiver.lastAck - receiver.firstArrival;
  machine.stop();
  const machineCpu = machine.perItem(receiver.firstArrival, receiver.lastAck, events);
  const recordedAt = await waitForNoPending(db.pool, { timeoutMs: 60_000, signal });
  const waits = await waitSampler.stop();
  const cpuPerDelivery = cpuPerItem(cpuBefore, await cpuSnapshot(workerPids, db.pool), events);
  const peakRssMb = started.map((worker) => worker.peakRssMb());
  await Promise.all(started.map((worker) => worker.stop()));
  await receiver.close();
  await db.pool.query('SELECT pg_stat_force_next_flush()').catch(() => {});
  await db.pool.query('SELECT pg_stat_clear_snapshot()');
  const commits = (await commitCount(db.pool)) - commitsBefore;
  const summary = await deliverySummary(db.pool);
  const problems = deliveryProblems(summary, events);
  if (receiver.badSignatures > 0) problems.push(`${receiver.badSignatures} signatures did not verify`);
  await db.drop();
  const recordedMs = recordedAt - receiver.firstArrival;
  return {
    workers,
    events,
    publishMs: round(publishMs),
    publishRate: perSecond(events, publishMs),
    rate: perSecond(events, receiverMs),
    receiverMs: round(receiverMs),
    recordedMs: round(recordedMs),
    recordedRate: perSecond(events, recordedMs),
    duplicates: receiver.requests - receiver.unique,
    badSignatures: receiver.badSignatures,
    commitsPerDelivery: round(commits / events, 2),
    waits,
    cpuPerDelivery,
    machineCpu,
    peakRssMb,
    problems,
  };
}

export const deliveryThroughput: Scenario = {
  name: 'delivery-throughput',
  title: 'Backlog of N events drained by 1, then 2, worker processes to an HTTPS receiver answering 200',
  measures:
    'Sustained deliveries per second (receiver: first receipt to last 200, unique webhook-id) of worker ' +
    'processes draining a published backlog, each delivery claimed, signed, sent and recorded in PostgreSQL; ' +
    'the database is checked afterwards (every delivery succeeded, one attempt each). Compared with ' +
    'delivery-limit. Leaves out publishing (done before the workers start), retries, slow or failing endpoints, ' +
    'network latency (loopback), and the per-subscription cap (set to WEBHOOK_CONCURRENCY: one subscription).',
  timeoutMs: (settings) =>
    (settings.workers.length + 1) * (180_000 + (settings.events / DELIVERY_FLOOR_PER_SECOND) * 1000),
  async run(context): Promise<ScenarioResult> {
    const { settings } = context;
    const runs: ThroughputRun[] = [];
    for (const workers of settings.workers) {
      context.log(`run with ${workers} worker(s)`);
      const run = await throughputRun(context, workers);
      context.log(`  ${run.rate} deliveries/s`);
      runs.push(run);
    }
    const limitResult = context.previous.get('delivery-limit');
    let limit: Pick<LimitMeasurement, 'rate' | 'requests'> & { machineMs?: number | undefined };
    const limitMetric = (name: string) => limitResult?.metrics.find((metric) => metric.name === name)?.value;
    const limitRate = limitMetric('requests/s (limit)');
    if (typeof limitRate === 'number') {
      const machineMs = limitMetric('CPU ms per request: machine');
      limit = {
        rate: limitRate,
        requests: settings.events,
        machineMs: typeof machineMs === 'number' ? machineMs : undefined,
      };
    } else {
      context.log('measuring delivery-limit for the ratio');
      const measured = await measureLimit(context, settings.events);
      limit = { ...measured, machineMs: measured.cpuPerRequest.machineMs };
    }

    const metrics: Metric[] = [];
    const notes: string[] = [];
    const problems: string[] = [];
    for (const run of runs) {
      const label = `${run.workers} worker${run.workers === 1 ? '' : 's'}`;
      metrics.push({
        name: `deliveries/s, ${label}`,
        value: run.rate,
        unit: '/s',
        ...(run.workers === 1 ? { target: '≥ 2,000/s', pass: atLeast(run.rate, 2_000) } : {}),
      });
      metrics.push({
        name: `ratio to delivery-limit, ${label}`,
        value: round(run.rate / limit.rate, 2),
        unit: '×',
        ...(run.workers === 1 ? { target: '≥ 0.5', pass: atLeast(run.rate / limit.rate, 0.5) } : {}),
      });
      metrics.push({ name: `recorded in PostgreSQL/s, ${label}`, value: run.recordedRate, unit: '/s' });
      metrics.push({
        name: `PostgreSQL commits per delivery, ${label}`,
        value: run.commitsPerDelivery,
        unit: '',
      });
      const cpu = run.cpuPerDelivery;
      metrics.push({
        name: `CPU ms per delivery: workers, ${label}`,
        value: cpu.workersMs ?? null,
        unit: 'ms',
      });
      metrics.push({
        name: `CPU ms per delivery: PostgreSQL, ${label}`,
        value: cpu.postgresMs ?? null,
        unit: 'ms',
      });
      metrics.push({ name: `CPU ms per delivery: receiver, ${label}`, value: cpu.benchMs, unit: 'ms' });
      metrics.push({
        name: `CPU ms per delivery: machine, ${label}`,
        value: run.machineCpu?.ms ?? null,
        unit: 'ms',
      });
      metrics.push({ name: `cores busy, ${label}`, value: run.machineCpu?.busyPercent ?? null, unit: '%' });
      // What this much CPU per delivery allows at most: every core busy with nothing else.
      metrics.push({
        name: `deliveries/s with every core busy (ceiling), ${label}`,
        value: run.machineCpu ? round((run.machineCpu.cores * 1000) / run.machineCpu.ms, 0) : null,
        unit: '/s',
      });
      // Both runs are bound by the same cores once these are all busy: their rates then stand as the
      // inverse of their machine CPU per request, whatever the engine does with the rest of its time.
      if (run.machineCpu && limit.machineMs !== undefined) {
        metrics.push({
          name: `ratio of machine CPU per request (limit / delivery), ${label}`,
          value: round(limit.machineMs / run.machineCpu.ms, 2),
          unit: '×',
        });
      }
      run.peakRssMb.forEach((peak, index) => {
        metrics.push(rssMetric(`peak RSS worker ${index + 1} of ${run.workers}`, peak));
      });
      for (const problem of run.problems) problems.push(`${label}: ${problem}`);
      if (run.waits.top) notes.push(`${label}: busiest PostgreSQL wait while draining: ${run.waits.top}`);
      if (run.duplicates > 0) notes.push(`${label}: ${run.duplicates} duplicate requests at the receiver`);
    }
    metrics.push({ name: 'delivery-limit', value: limit.rate, unit: '/s' });
    return {
      metrics,
      details: {
        runs,
        limit,
        concurrency: settings.concurrency,
        perSubscription: settings.perSubscription,
        events: settings.events,
      },
      notes,
      problems,
    };
  },
};
