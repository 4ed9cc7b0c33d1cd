// Scenario 4, fanout: BENCH_FANOUT_EVENTS events, each matching 10 active subscriptions of one
// organisation (10 distinct URLs on the same receiver), published as a backlog with no worker running, then
// drained by one worker with the default per-subscription cap.
import { deliveryProblems, deliverySummary, sampleWaits, waitForNoPending } from '../lib/checks.ts';
import { startReceiver } from '../lib/receiver.ts';
import { rssMetric, type Scenario, type ScenarioResult, workerEnv } from '../lib/scenario.ts';
import { createOrganisation, createSubscription, publishBacklog, type Subscription } from '../lib/seed.ts';
import { now, perSecond, round, waitUntil } from '../lib/util.ts';

export const FANOUT = 10;

export const fanout: Scenario = {
  name: 'fanout',
  title:
    'Events (1,000 by default) each matching 10 subscriptions (10 URLs on one receiver), drained by one worker',
  measures:
    'Publishing cost of a 10-way fan-out (one event, ten delivery rows, one transaction) and deliveries per ' +
    'second of one worker spreading a backlog over 10 subscriptions under the default ' +
    'WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION, plus how evenly the subscriptions finish. Leaves out failing or ' +
    'slow endpoints (see slow-endpoint) and separate receiver hosts (all 10 URLs share one HTTPS server).',
  timeoutMs: (settings) => 240_000 + settings.fanoutEvents * FANOUT * 20,
  async run(context): Promise<ScenarioResult> {
    const { settings, signal } = context;
    const events = settings.fanoutEvents;
    const expected = events * FANOUT;
    const server = await context.server();
    const db = await server.createDatabase('fanout', 8);
    context.defer(() => db.drop());
    const organisationId = await createOrganisation(db.pool, 'Bench fanout');
    const secrets = new Map<string, string>();
    const receiver = await startReceiver({
      certificate: context.certificate(),
      secretFor: (path) => secrets.get(path),
      verifyPerPath: 5,
    });
    context.defer(() => receiver.close());
    const subscriptions: Subscription[] = [];
    for (let index = 1; index <= FANOUT; index++) {
      const subscription = await createSubscription(db.pool, context.encryptionKey, {
        organisationId,
        endpointUrl: `${receiver.origin}/s/${index}`,
      });
      secrets.set(`/s/${index}`, subscription.secret);
      subscriptions.push(subscription);
    }

    context.log(`publishing ${events} events × ${FANOUT} subscriptions (no worker running)`);
    const publishStart = now();
    await publishBacklog(db.pool, context.encryptionKey, organisationId, events, { batchSize: 100, signal });
    const publishMs = now() - publishStart;

    const worker = await context.startService('worker', workerEnv(context, db.url), 'worker-fanout');
    const waitSampler = sampleWaits(db.pool);
    await waitUntil(`${expected} deliveries at the receiver`, () => receiver.unique >= expected, {
      timeoutMs: 60_000 + expected * 20,
      signal,
      intervalMs: 20,
      progress: () => `${receiver.unique} received`,
    });
    const receiverMs = receiver.lastAck - receiver.firstArrival;
    const recordedAt = await waitForNoPending(db.pool, { timeoutMs: 60_000, signal });
    const waits = await waitSampler.stop();
    const peakRss = worker.peakRssMb();
    await worker.stop();
    await receiver.close();

    const finishes = [...receiver.byPath.values()].map((stats) => stats.lastAck - receiver.firstArrival);
    const spreadMs = Math.max(...finishes) - Math.min(...finishes);
    const summary = await deliverySummary(db.pool);
    const problems = deliveryProblems(summary, expected);
    if (receiver.badSignatures > 0) problems.push(`${receiver.badSignatures} signatures did not verify`);
    for (const [path, stats] of receiver.byPath) {
      if (stats.unique !== events) problems.push(`${path} received ${stats.unique} of ${events} events`);
    }
    return {
      metrics: [
        { name: 'deliveries/s', value: perSecond(expected, receiverMs), unit: '/s' },
        { name: 'events fully delivered/s', value: perSecond(events, receiverMs), unit: '/s' },
        {
          name: 'recorded in PostgreSQL/s',
          value: perSecond(expected, recordedAt - receiver.firstArrival),
          unit: '/s',
        },
        { name: 'publish, events/s (10 deliveries each)', value: perSecond(events, publishMs), unit: '/s' },
        { name: 'spread of subscription finish times', value: round(spreadMs), unit: 'ms' },
        rssMetric('peak RSS worker', peakRss),
      ],
      details: {
        events,
        subscriptions: FANOUT,
        deliveries: expected,
        receiverMs: round(receiverMs),
        publishMs: round(publishMs),
        finishMsBySubscription: Object.fromEntries(
          [...receiver.byPath].map(([path, stats]) => [path, round(stats.lastAck - receiver.firstArrival)]),
        ),
        duplicates: receiver.requests - receiver.unique,
        perSubscriptionCap: 'service default (WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION unset)',
        waits,
        summary,
      },
      notes: waits.top ? [`busiest PostgreSQL wait while draining: ${waits.top}`] : [],
      problems,
    };
  },
};
