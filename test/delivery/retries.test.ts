// Retries, rounds and the event summary (D10): the full retry sequence to dead_letter, partial delivery,
// replays, rotation between attempts, pause and delete with a retry pending.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DeliveryWorker } from '../../src/webhooks/delivery/worker.ts';
import { type HttpsReceiver, type ReceivedRequest, startHttpsReceiver } from '../helpers/https-receiver.ts';
import {
  type AttemptRow,
  attemptsOf,
  createOrganisation,
  createSubscription,
  type DeliveryTestContext,
  deliveriesOf,
  deliveryContext,
  eventStatus,
  failsVerification,
  publish,
  replay,
  rotateSecret,
  setSubscriptionStatus,
  startTestWorker,
  subscriptionRow,
  verifyDelivery,
  waitForEventStatus,
  waitUntil,
} from './fixtures.ts';

describe('retries and rounds', () => {
  let ctx: DeliveryTestContext;
  let receiver: HttpsReceiver;
  let worker: DeliveryWorker;
  /** Per path: what the endpoint answers. */
  const answers = new Map<string, number>();

  before(async () => {
    ctx = await deliveryContext({
      WEBHOOK_RETRY_SCHEDULE: '100ms,200ms',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_LEASE_MS: '5000',
    });
    receiver = await startHttpsReceiver((request, response) => {
      response.writeHead(answers.get(request.path) ?? 200);
      response.end();
    });
    worker = startTestWorker(ctx.deps);
  });

  after(async () => {
    await worker.stop();
    await receiver.close();
    await ctx.close();
  });

  const requestsTo = (path: string) => receiver.requests.filter((request) => request.path === path);

  async function subscribe(organisationId: string, path: string, maxRetries: number, status = 200) {
    answers.set(path, status);
    return createSubscription(ctx.deps, {
      organisationId,
      endpointUrl: `${receiver.origin}${path}`,
      maxRetries,
    });
  }

  it('should retry on the schedule, settle each older attempt, and dead-letter after the last', async () => {
    const organisationId = await createOrganisation(ctx.deps.pool);
    const subscription = await subscribe(organisationId, '/always-500', 3, 500);
    // When retry k arrives, the endpoint first takes a snapshot of the attempts so far: the attempt that
    // waited for this retry must still be pending_retry, every earlier one settled.
    const snapshots: AttemptRow[][] = [];
    let eventId = 0;
    receiver.setHandler(async (request, response) => {
      if (request.path === '/always-500') snapshots.push(await attemptsOf(ctx.deps.pool, eventId));
      response.writeHead(answers.get(request.path) ?? 200);
      response.end();
    });
    const event = await publish(ctx.deps, organisationId);
    eventId = event.id;
    await waitForEventStatus(ctx.deps.pool, event.id, ['dead_letter']);

    const requests = requestsTo('/always-500');
    assert.equal(requests.length, 4, 'the first attempt and max_retries (3) retries');
    const expectedDelays = [100, 200, 200]; // the last entry of the schedule repeats
    for (let k = 1; k < 4; k++) {
      const before = snapshots[k]!;
      assert.equal(before.length, k);
      for (const settled of before.slice(0, k - 1)) {
        assert.equal(settled.status, 'failed');
        assert.equal(settled.next_retry_at, null);
      }
      const waiting = before[k - 1]!;
      assert.equal(waiting.status, 'pending_retry');
      assert.equal(waiting.attempt_number, k);
      assert.equal(waiting.next_retry_at!.getTime() - waiting.created_at.getTime(), expectedDelays[k - 1]);
      assert.ok(
        requests[k]!.receivedAt >= waiting.next_retry_at!.getTime() - 5,
        `retry ${k} was not sent before its next_retry_at`,
      );
    }

    const attempts = await attemptsOf(ctx.deps.pool, event.id);
    assert.deepEqual(
      attempts.map((attempt) => [
        attempt.attempt_number,
        attempt.status,
        attempt.http_status_code,
        attempt.next_retry_at,
      ]),
      [
        [1, 'failed', 500, null],
        [2, 'failed', 500, null],
        [3, 'failed', 500, null],
        [4, 'failed', 500, null],
      ],
    );
    const headerIds = new Set(attempts.map((attempt) => attempt.request_headers['X-Webhook-Delivery-Id']));
    assert.equal(headerIds.size, 4, 'X-Webhook-Delivery-Id is new for every attempt');
    for (const request of requests) {
      assert.equal(request.headers['webhook-id'], event.public_id, 'webhook-id stays the evt_ id');
      verifyDelivery(subscription.secret, request);
    }
    const [delivery] = await deliveriesOf(ctx.deps.pool, event.id);
    assert.equal(delivery?.state, 'exhausted');
    assert.equal((await subscriptionRow(ctx.deps.pool, subscription.id)).consecutive_failures, 4);
  });

  it('should settle a timed-out attempt to timeout when its retry is sent', async () => {
    const organisationId = await createOrganisation(ctx.deps.pool);
    await subscribe(organisationId, '/slow-then-ok', 1);
    let calls = 0;
    receiver.setHandler((request, response) => {
      if (request.path === '/slow-then-ok' && ++calls === 1)
        return void setTimeout(() => response.end(), 1_500);
      response.writeHead(answers.get(request.path) ?? 200);
      response.end();
    });
    const event = await publish(ctx.deps, organisationId);
    await waitForEventStatus(ctx.deps.pool, event.id, ['delivered']);
    const attempts = await attemptsOf(ctx.deps.pool, event.id);
    assert.deepEqual(
      attempts.map((attempt) => [
        attempt.attempt_number,
        attempt.status,
        attempt.http_status_code,
        attempt.latency_ms,
      ]),
      [
        [1, 'timeout', null, 1000],
        [2, 'success', 200, attempts[1]!.latency_ms],
      ],
    );
    assert.equal(attempts[0]!.next_retry_at, null);
  });

  it('should summarise as partially_delivered, then delivered once the retry succeeds', async () => {
    receiver.setHandler((request, response) => {
      response.writeHead(answers.get(request.path) ?? 200);
      response.end();
    });
    const organisationId = await createOrganisation(ctx.deps.pool);
    const good = await subscribe(organisationId, '/partial-good', 2, 200);
    const flaky = await subscribe(organisationId, '/partial-flaky', 2, 500);
    const event = await publish(ctx.deps, organisationId);
    await waitUntil(
      async () => (await attemptsOf(ctx.deps.pool, event.id, flaky.id)).length >= 1 || undefined,
      'first flaky attempt',
    );
    await waitUntil(
      async () => (await attemptsOf(ctx.deps.pool, event.id, good.id)).length >= 1 || undefined,
      'good attempt',
    );
    assert.equal(await eventStatus(ctx.deps.pool, event.id), 'partially_delivered');
    answers.set('/partial-flaky', 200);
    await waitForEventStatus(ctx.deps.pool, event.id, ['delivered']);
    const flakyAttempts = await attemptsOf(ctx.deps.pool, event.id, flaky.id);
    assert.deepEqual(
      flakyAttempts.map((attempt) => attempt.status).slice(-1),
      ['success'],
      'the retry succeeded',
    );
    assert.ok(flakyAttempts.slice(0, -1).every((attempt) => attempt.status === 'failed'));
  });

  it('should dead-letter when one subscription exhausts while another succeeded', async () => {
    const organisationId = await createOrganisation(ctx.deps.pool);
    await subscribe(organisationId, '/dl-good', 0, 200);
    await subscribe(organisationId, '/dl-bad', 0, 500);
    const event = await publish(ctx.deps, organisationId);
    await waitUntil(
      async () =>
        (await deliveriesOf(ctx.deps.pool, event.id)).every((d) => d.state !== 'pending') || undefined,
      'both deliveries concluded',
    );
    assert.equal(await eventStatus(ctx.deps.pool, event.id), 'dead_letter');
  });

  it('should replay twice, to every matching subscription, counting attempts across rounds', async () => {
    const organisationId = await createOrganisation(ctx.deps.pool);
    const good = await subscribe(organisationId, '/replay-good', 1, 200);
    const bad = await subscribe(organisationId, '/replay-bad', 1, 500);
    const event = await publish(ctx.deps, organisationId);
    await waitForEventStatus(ctx.deps.pool, event.id, ['dead_letter']);
    await waitUntil(
      async () =>
        (await deliveriesOf(ctx.deps.pool, event.id)).every((d) => d.state !== 'pending') || undefined,
      'round 1 concluded',
    );

    // Round 2: the subscription that already succeeded receives the event again; the other fails again.
    assert.equal(await replay(ctx.deps, event.id), 2);
    assert.equal(
      await eventStatus(ctx.deps.pool, event.id),
      'failed',
      'failed until the new attempts conclude',
    );
    await waitForEventStatus(ctx.deps.pool, event.id, ['dead_letter']);
    await waitUntil(
      async () =>
        (await deliveriesOf(ctx.deps.pool, event.id)).every((d) => d.state !== 'pending') || undefined,
      'round 2 concluded',
    );

    // Round 3: both succeed.
    answers.set('/replay-bad', 200);
    assert.equal(await replay(ctx.deps, event.id), 2);
    await waitForEventStatus(ctx.deps.pool, event.id, ['delivered']);

    const goodAttempts = await attemptsOf(ctx.deps.pool, event.id, good.id);
    assert.deepEqual(
      goodAttempts.map((attempt) => [attempt.attempt_number, attempt.status]),
      [
        [1, 'success'],
        [2, 'success'],
        [3, 'success'],
      ],
    );
    const badAttempts = await attemptsOf(ctx.deps.pool, event.id, bad.id);
    // max_retries 1: two attempts per round, the budget restarting with each round.
    assert.deepEqual(
      badAttempts.map((attempt) => [attempt.attempt_number, attempt.status]),
      [
        [1, 'failed'],
        [2, 'failed'],
        [3, 'failed'],
        [4, 'failed'],
        [5, 'success'],
      ],
    );
    const rounds = (await deliveriesOf(ctx.deps.pool, event.id)).map((d) => [d.round, d.state]);
    assert.deepEqual(rounds, [
      [1, 'succeeded'],
      [1, 'exhausted'],
      [2, 'succeeded'],
      [2, 'exhausted'],
      [3, 'succeeded'],
      [3, 'succeeded'],
    ]);
    for (const request of requestsTo('/replay-good')) verifyDelivery(good.secret, request);
    assert.ok(requestsTo('/replay-good').every((request) => request.body === event.payload));
  });

  it('should sign the retry with the rotated secret only', async () => {
    const organisationId = await createOrganisation(ctx.deps.pool);
    const subscription = await subscribe(organisationId, '/rotate', 2, 500);
    let rotated: string | undefined;
    let secondArrived: (request: ReceivedRequest) => void = () => {};
    const second = new Promise<ReceivedRequest>((resolve) => {
      secondArrived = resolve;
    });
    let calls = 0;
    receiver.setHandler(async (request, response) => {
      if (request.path === '/rotate') {
        calls++;
        // Rotate while the first attempt is in flight: the retry (of this older event) uses the new secret.
        if (calls === 1) rotated = await rotateSecret(ctx.deps, subscription.id);
        if (calls === 2) secondArrived(request);
        response.writeHead(calls === 1 ? 500 : 200);
        response.end();
        return;
      }
      response.end();
    });
    const event = await publish(ctx.deps, organisationId);
    const retry = await second;
    await waitForEventStatus(ctx.deps.pool, event.id, ['delivered']);
    const [first] = requestsTo('/rotate');
    verifyDelivery(subscription.secret, first!);
    verifyDelivery(rotated!, retry);
    assert.ok(failsVerification(subscription.secret, retry), 'the old secret no longer verifies');
  });

  for (const status of ['paused', 'deleted', 'auto_disabled']) {
    it(`should give up a pending retry when the subscription is ${status}, sending nothing more`, async () => {
      receiver.setHandler((request, response) => {
        response.writeHead(answers.get(request.path) ?? 200);
        response.end();
      });
      const organisationId = await createOrganisation(ctx.deps.pool);
      const path = `/stop-${status}`;
      const subscription = await subscribe(organisationId, path, 5, 500);
      const seen = receiver.requests.length;
      const event = await publish(ctx.deps, organisationId);
      // Change the status between the first attempt and its retry (100 ms later).
      await receiver.waitForRequests(seen + 1);
      await setSubscriptionStatus(ctx.deps.pool, subscription.id, status);
      await waitForEventStatus(ctx.deps.pool, event.id, ['dead_letter']);
      const attempts = await attemptsOf(ctx.deps.pool, event.id);
      assert.equal(requestsTo(path).length, attempts.length, 'one request per attempt');
      const last = attempts.at(-1)!;
      assert.equal(last.status, 'failed');
      assert.equal(last.next_retry_at, null);
      assert.match(last.failure_reason ?? '', new RegExp(`not sent: subscription is ${status}`));
      assert.match(last.failure_reason ?? '', /HTTP 500/, 'the reason keeps what the attempt itself got');
      const [delivery] = await deliveriesOf(ctx.deps.pool, event.id);
      assert.equal(delivery?.state, 'exhausted');
      const sent = requestsTo(path).length;
      await new Promise((resolve) => setTimeout(resolve, 400));
      assert.equal(requestsTo(path).length, sent, 'nothing more is sent');
    });
  }

  it('should record a failed attempt without a request when the subscription stopped before the first one', async () => {
    await worker.stop();
    {
      const organisationId = await createOrganisation(ctx.deps.pool);
      const subscription = await subscribe(organisationId, '/paused-before', 3, 200);
      const event = await publish(ctx.deps, organisationId);
      await setSubscriptionStatus(ctx.deps.pool, subscription.id, 'paused');
      worker = startTestWorker(ctx.deps);
      await waitForEventStatus(ctx.deps.pool, event.id, ['dead_letter']);
      const attempts = await attemptsOf(ctx.deps.pool, event.id);
      assert.equal(attempts.length, 1);
      assert.equal(attempts[0]!.attempt_number, 1);
      assert.equal(attempts[0]!.status, 'failed');
      assert.equal(attempts[0]!.http_status_code, null);
      assert.deepEqual(attempts[0]!.request_headers, {}, 'no request was sent');
      assert.equal(attempts[0]!.failure_reason, 'not sent: subscription is paused, delivery given up');
      assert.equal(requestsTo('/paused-before').length, 0);
      const row = await subscriptionRow(ctx.deps.pool, subscription.id);
      assert.equal(row.consecutive_failures, 0, 'not a failure of the endpoint');
      assert.equal(row.last_delivery_at, null);
    }
  });
});
