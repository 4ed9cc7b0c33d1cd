// The worker's machinery (D10): wake-ups by NOTIFY (and after the LISTEN connection is lost), bounded
// in-flight work per worker and per subscription, leases and fencing, graceful stop, metrics.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SecretBox } from '../../src/platform/secrets.ts';
import { UNREADABLE_PAYLOAD_REASON, UNSIGNABLE_REASON } from '../../src/webhooks/delivery/prepare.ts';
import * as repo from '../../src/webhooks/delivery/repository.ts';
import { recordAttempts } from '../../src/webhooks/delivery/service.ts';
import { HELD_PER_REQUEST_SLOT } from '../../src/webhooks/delivery/worker.ts';
import { answer, type HttpsReceiver, startHttpsReceiver } from '../helpers/https-receiver.ts';
import {
  attemptsOf,
  createOrganisation,
  createSubscription,
  type DeliveryTestContext,
  deliveriesOf,
  deliveryContext,
  publish,
  publishStoredAs,
  startTestWorker,
  waitForEventStatus,
  waitUntil,
} from './fixtures.ts';

describe('delivery worker', () => {
  let ctx: DeliveryTestContext;
  let receiver: HttpsReceiver;

  before(async () => {
    ctx = await deliveryContext({
      WEBHOOK_TIMEOUT_MS: '3000',
      WEBHOOK_LEASE_MS: '4000',
      WEBHOOK_CONCURRENCY: '4',
      WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION: '2',
    });
    receiver = await startHttpsReceiver();
  });

  after(async () => {
    await receiver.close();
    await ctx.close();
  });

  async function subscriber(path: string, maxRetries = 0) {
    const organisationId = await createOrganisation(ctx.deps.pool);
    const subscription = await createSubscription(ctx.deps, {
      organisationId,
      endpointUrl: `${receiver.origin}${path}`,
      maxRetries,
    });
    return { organisationId, subscription };
  }

  /** The worker's LISTEN connections, as the server sees them once LISTEN has run. */
  const listeners = async () =>
    (
      await ctx.deps.pool.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity
         WHERE datname = current_database() AND application_name LIKE '%:listen' AND query ILIKE 'LISTEN%'`,
      )
    ).rows;

  /**
   * The fallback timer of the workers below is a minute, and nothing else is pending: a delivery within
   * NOTIFIED_WITHIN_MS of publishing was woken by the NOTIFY, not by the timer. The bound is generous (a
   * loaded 2-core machine meets it) since it only has to be well below the timer.
   */
  const FALLBACK_MS = 60_000;
  const NOTIFIED_WITHIN_MS = 20_000;

  const nothingPending = async () =>
    assert.equal(
      (
        await ctx.deps.pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM webhook_deliveries WHERE state = 'pending'",
        )
      ).rows[0]!.n,
      0,
      'no other delivery could wake the worker',
    );

  it('should start on a new event at once when notified, with no polling', async () => {
    receiver.setHandler(answer(200));
    // An idle worker would otherwise sleep for a minute: only the NOTIFY of the publishing transaction wakes it.
    const worker = startTestWorker(ctx.deps, { maxIdleMs: FALLBACK_MS });
    try {
      const { organisationId } = await subscriber('/notify');
      await waitUntil(async () => (await listeners()).length === 1, 'the LISTEN connection');
      await nothingPending();
      const event = await publish(ctx.deps, organisationId);
      await waitForEventStatus(ctx.deps.pool, event.id, ['delivered'], NOTIFIED_WITHIN_MS);
    } finally {
      await worker.stop();
    }
  });

  it('should reconnect its LISTEN connection after it is killed, and still wake on NOTIFY', async () => {
    receiver.setHandler(answer(200));
    const worker = startTestWorker(ctx.deps, { maxIdleMs: FALLBACK_MS });
    try {
      const [first] = await waitUntil(async () => {
        const rows = await listeners();
        return rows.length === 1 ? rows : undefined;
      }, 'the LISTEN connection');
      await ctx.deps.pool.query('SELECT pg_terminate_backend($1)', [first!.pid]);
      await waitUntil(async () => {
        const rows = await listeners();
        return rows.length === 1 && rows[0]!.pid !== first!.pid ? rows : undefined;
      }, 'a new LISTEN connection');
      const { organisationId } = await subscriber('/after-reconnect');
      await nothingPending();
      const event = await publish(ctx.deps, organisationId);
      await waitForEventStatus(ctx.deps.pool, event.id, ['delivered'], NOTIFIED_WITHIN_MS);
    } finally {
      await worker.stop();
    }
  });

  it('should cap in-flight requests per subscription and per worker, so a slow endpoint starves no one', async () => {
    const inFlight = new Map<string, number>();
    const peak = new Map<string, number>();
    let total = 0;
    let peakTotal = 0;
    // The slow endpoint answers nothing until every fast event is delivered: the fast ones provably did not
    // wait behind its backlog, whatever the machine's speed.
    let openSlow: () => void = () => {};
    const slowGate = new Promise<void>((resolve) => {
      openSlow = resolve;
    });
    receiver.setHandler(async (request, response) => {
      const now = (inFlight.get(request.path) ?? 0) + 1;
      inFlight.set(request.path, now);
      peak.set(request.path, Math.max(peak.get(request.path) ?? 0, now));
      total++;
      peakTotal = Math.max(peakTotal, total);
      response.on('close', () => {
        inFlight.set(request.path, (inFlight.get(request.path) ?? 1) - 1);
        total--;
      });
      if (request.path === '/slow') await slowGate;
      if (!response.writableEnded) response.end();
    });
    // Retries (5 s apart) in case a held request times out on a very slow machine.
    const slow = await subscriber('/slow', 8);
    const fast = await subscriber('/fast');
    // The slow endpoint's backlog is published first and is older than every fast event.
    const slowEvents = [];
    for (let i = 0; i < 12; i++) slowEvents.push(await publish(ctx.deps, slow.organisationId));
    const fastEvents = [];
    for (let i = 0; i < 8; i++) fastEvents.push(await publish(ctx.deps, fast.organisationId));
    const worker = startTestWorker(ctx.deps);
    try {
      for (const event of fastEvents)
        await waitForEventStatus(ctx.deps.pool, event.id, ['delivered'], 20_000);
      const slowSeen = receiver.requests.filter((request) => request.path === '/slow').length;
      assert.ok(slowSeen <= 2, `${slowSeen} slow requests while the first two were held`);
      openSlow();
      for (const event of slowEvents)
        await waitForEventStatus(ctx.deps.pool, event.id, ['delivered'], 60_000);
      assert.equal(peak.get('/slow'), 2, 'WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION');
      assert.ok((peak.get('/fast') ?? 0) <= 2);
      assert.ok(peakTotal <= 4, `WEBHOOK_CONCURRENCY: peak ${peakTotal}`);
    } finally {
      openSlow();
      await worker.stop();
    }
  });

  it('should keep sending while outcomes wait for the database, holding at most HELD_PER_REQUEST_SLOT x WEBHOOK_CONCURRENCY deliveries', async () => {
    receiver.setHandler(answer(200));
    const { organisationId } = await subscriber('/recording-blocked');
    const bound = HELD_PER_REQUEST_SLOT * ctx.deps.config.webhookConcurrency; // 4 x 4
    const events: Awaited<ReturnType<typeof publish>>[] = [];
    for (let i = 0; i < bound + 4; i++) events.push(await publish(ctx.deps, organisationId));
    // Another transaction holds the first event's row: the outcome transaction that records it waits, and so
    // does every later batch (one commit at a time). Requests must go on regardless: each slot is freed when
    // the endpoint answers. Held deliveries (sending or recording) stop at the bound, 16.
    const blocker = await ctx.deps.pool.connect();
    await blocker.query('BEGIN');
    await blocker.query('SELECT id FROM webhook_events WHERE id = $1 FOR NO KEY UPDATE', [events[0]!.id]);
    const received = () =>
      receiver.requests.filter((request) => request.path === '/recording-blocked').length;
    const worker = startTestWorker(ctx.deps);
    try {
      // Outcomes that completed before the first event's and were committed in a batch of their own are
      // recorded and no longer held: held = sent - recorded.
      const recorded = async () =>
        (
          await ctx.deps.pool.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM webhook_delivery_attempts WHERE event_id = ANY($1::bigint[])',
            [events.map((event) => event.id)],
          )
        ).rows[0]!.n;
      await waitUntil(async () => received() - (await recorded()) >= bound, `${bound} deliveries held`);
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(received() - (await recorded()), bound, `no more than ${bound} deliveries held`);
      assert.ok(received() < events.length, 'the first event outcome and the ones after it wait');
      assert.deepEqual(
        (await attemptsOf(ctx.deps.pool, events[0]!.id)).length,
        0,
        'nothing recorded while the event row is held',
      );
      await blocker.query('COMMIT');
      for (const event of events) await waitForEventStatus(ctx.deps.pool, event.id, ['delivered']);
      assert.equal(received(), events.length, 'each delivery sent once');
    } finally {
      await blocker.query('ROLLBACK').catch(() => {});
      blocker.release();
      await worker.stop();
    }
  });

  it('should not claim a delivery it still holds, even once the lease has run out', async () => {
    const { organisationId } = await subscriber('/held-expired');
    const event = await publish(ctx.deps, organisationId);
    const claim = (workerId: string, held: number[]) =>
      repo.claimDeliveries(ctx.deps.pool, {
        workerId,
        leaseMs: 200,
        limit: 100,
        perSubscription: 100,
        inFlight: new Map(),
        held,
      });
    const ours = (rows: repo.ClaimedDelivery[]) => rows.filter((row) => row.event_id === event.id);
    const claimedIds: Array<[string, number[]]> = [];
    try {
      const first = await claim('worker-holding', []);
      claimedIds.push(['worker-holding', first.map((row) => row.id)]);
      const [delivery] = ours(first);
      assert.ok(delivery, 'claimed');
      await new Promise((resolve) => setTimeout(resolve, 300)); // the 200 ms lease runs out
      // Its outcome still on its way, the worker that holds it does not take it again...
      assert.deepEqual(ours(await claim('worker-holding', [delivery.id])), []);
      // ...while for any other worker (or for this one once it no longer holds it) it is due again.
      const other = await claim('worker-other', []);
      claimedIds.push(['worker-other', other.map((row) => row.id)]);
      assert.deepEqual(
        ours(other).map((row) => row.id),
        [delivery.id],
      );
    } finally {
      // Other tests' due deliveries taken by these claims go back as they were; this test's own delivery
      // is taken out of the queue, so that no later test claims it.
      await ctx.deps.pool.query(
        `UPDATE webhook_deliveries SET state = 'exhausted', locked_by = NULL, locked_until = NULL
         WHERE event_id = $1`,
        [event.id],
      );
      for (const [workerId, ids] of claimedIds) await repo.releaseLeases(ctx.deps.pool, workerId, ids);
    }
  });

  it('should not send a delivery leased by another worker until the lease expires, then send it', async () => {
    receiver.setHandler(answer(200));
    const { organisationId } = await subscriber('/leased');
    const event = await publish(ctx.deps, organisationId);
    // A worker that claims and then dies (it never records anything).
    const claimed = await repo.claimDeliveries(ctx.deps.pool, {
      workerId: 'dead-worker',
      leaseMs: 1_500,
      limit: 10,
      perSubscription: 10,
      inFlight: new Map(),
    });
    assert.equal(claimed.length, 1);
    const claimedAt = Date.now();
    const worker = startTestWorker(ctx.deps);
    try {
      await waitForEventStatus(ctx.deps.pool, event.id, ['delivered'], 10_000);
      const [request] = receiver.requests.filter((r) => r.path === '/leased');
      assert.ok(request!.receivedAt - claimedAt >= 1_400, 'sent only after the lease expired');
      // Fencing: the dead worker, coming back, cannot record over the delivery.
      const late = await recordAttempts(ctx.deps.pool, {
        workerId: 'dead-worker',
        attempts: [
          {
            delivery: claimed[0]!,
            result: { kind: 'response', statusCode: 500, bodySnippet: '', latencyMs: 1 },
            requestHeaders: {},
          },
        ],
        retryScheduleMs: [1000],
      });
      assert.deepEqual(late, [{ recorded: false }]);
      const attempts = await attemptsOf(ctx.deps.pool, event.id);
      assert.deepEqual(
        attempts.map((attempt) => attempt.status),
        ['success'],
      );
    } finally {
      await worker.stop();
    }
  });

  it('should stop gracefully: wait for in-flight requests up to a bound, then release their leases', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let requestClosedAt = 0;
    receiver.setHandler(async (request, response) => {
      response.on('close', () => {
        requestClosedAt = Date.now();
      });
      if (request.path === '/held') await held;
      response.end();
    });
    const { organisationId } = await subscriber('/held');
    const event = await publish(ctx.deps, organisationId);
    const seen = receiver.requests.length;
    const worker = startTestWorker(ctx.deps, { stopTimeoutMs: 300 });
    await receiver.waitForRequests(seen + 1);
    const stopping = Date.now();
    await worker.stop();
    const stopTook = Date.now() - stopping;
    // It waited for the bound; the upper limit only catches a stop that hangs (a loaded machine is slow).
    assert.ok(stopTook >= 280 && stopTook < 15_000, `stop took ${stopTook} ms`);
    const [delivery] = await deliveriesOf(ctx.deps.pool, event.id);
    assert.equal(delivery?.state, 'pending');
    assert.equal(delivery?.locked_by, null, 'the lease is released');
    // The held request was aborted by the stop (the worker aborts, waits, then releases the lease).
    assert.ok(requestClosedAt > 0, 'the held request was aborted, not left open');
    assert.deepEqual(
      await attemptsOf(ctx.deps.pool, event.id),
      [],
      'nothing recorded for the aborted request',
    );
    release();

    // Released means due now (not at the end of the lease): the next worker sends it at once.
    const due = await ctx.deps.pool.query<{ due: boolean }>(
      'SELECT next_attempt_at <= now() AS due FROM webhook_deliveries WHERE event_id = $1',
      [event.id],
    );
    assert.equal(due.rows[0]?.due, true, 'due now');
    const next = startTestWorker(ctx.deps);
    try {
      await waitForEventStatus(ctx.deps.pool, event.id, ['delivered'], 20_000);
    } finally {
      await next.stop();
    }
  });

  it('should abort its open requests before releasing their leases, so another worker never sends one while it is open', async () => {
    // Per webhook-id: the first request (the stopping worker's) is held open until the client closes it;
    // any later one (the second worker's) is answered at once.
    const first = new Map<string, { receivedAt: number; closedAt?: number }>();
    const later = new Map<string, number[]>();
    let releaseHeld: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      releaseHeld = resolve;
    });
    receiver.setHandler(async (request, response) => {
      const id = String(request.headers['webhook-id']);
      if (!request.path.startsWith('/stop-race-')) return void response.end();
      if (first.has(id)) {
        later.set(id, [...(later.get(id) ?? []), request.receivedAt]);
        return void response.end();
      }
      const entry: { receivedAt: number; closedAt?: number } = { receivedAt: request.receivedAt };
      first.set(id, entry);
      response.on('close', () => {
        entry.closedAt = Date.now();
      });
      await held;
      if (!response.writableEnded) response.end();
    });
    // The stopping worker's lease release returns 1.5 s after it committed: had the leases been released
    // before the requests were aborted, the second worker would claim and send while they are still open.
    const pool = ctx.deps.pool;
    const slowRelease = new Proxy(pool, {
      get(target, property) {
        if (property === 'query') {
          return async (...args: unknown[]) => {
            const result = await (target.query as (...a: unknown[]) => Promise<unknown>)(...args);
            if (typeof args[0] === 'string' && /SET locked_by = NULL/.test(args[0])) {
              await new Promise((resolve) => setTimeout(resolve, 1_500));
            }
            return result;
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const events = [];
    for (let i = 0; i < 3; i++) {
      const { organisationId } = await subscriber(`/stop-race-${i}`);
      events.push(await publish(ctx.deps, organisationId));
    }
    const stopping = startTestWorker(
      { ...ctx.deps, pool: slowRelease },
      { stopTimeoutMs: 200, listen: false },
    );
    await waitUntil(() => first.size === 3, 'the three requests of the stopping worker');
    const second = startTestWorker(ctx.deps, { listen: false, maxIdleMs: 60_000 });
    // The second worker claims as often as it can while the first stops.
    const poke = setInterval(() => second.wake(), 10);
    try {
      await stopping.stop();
      for (const event of events) await waitForEventStatus(ctx.deps.pool, event.id, ['delivered'], 15_000);
    } finally {
      clearInterval(poke);
      releaseHeld();
      await second.stop();
    }
    for (const event of events) {
      const open = first.get(event.public_id);
      assert.ok(open?.closedAt, 'the stopping worker aborted its request');
      const resent = later.get(event.public_id) ?? [];
      assert.equal(resent.length, 1, 'the aborted delivery is sent again, once, by the second worker');
      assert.ok(
        resent[0]! >= open.closedAt,
        `sent again ${open.closedAt - resent[0]!} ms before the first request was closed`,
      );
      const attempts = await attemptsOf(ctx.deps.pool, event.id);
      assert.deepEqual(
        attempts.map((attempt) => attempt.status),
        ['success'],
        'nothing recorded for the aborted request',
      );
    }
  });

  it('should stop at once when idle, and wait for a request that finishes within the bound', async () => {
    receiver.setHandler((_request, response) => {
      setTimeout(() => response.end(), 200);
    });
    const { organisationId } = await subscriber('/finishing');
    const worker = startTestWorker(ctx.deps, { stopTimeoutMs: 5_000 });
    const seen = receiver.requests.length;
    const event = await publish(ctx.deps, organisationId);
    await receiver.waitForRequests(seen + 1);
    await worker.stop();
    assert.equal((await deliveriesOf(ctx.deps.pool, event.id))[0]?.state, 'succeeded');
  });

  it('should expose attempts by outcome, latency, queue depth and lag', async () => {
    receiver.setHandler((request, response) => {
      response.writeHead(request.path === '/metrics-fail' ? 500 : 200);
      response.end();
    });
    const ok = await subscriber('/metrics-ok');
    const failing = await subscriber('/metrics-fail', 5);
    const worker = startTestWorker(ctx.deps);
    try {
      const delivered = await publish(ctx.deps, ok.organisationId);
      const failed = await publish(ctx.deps, failing.organisationId);
      await waitForEventStatus(ctx.deps.pool, delivered.id, ['delivered']);
      await waitUntil(
        async () => (await attemptsOf(ctx.deps.pool, failed.id)).length > 0 || undefined,
        'attempt',
      );
      // A backlog that is due but not yet sent: lag > 0.
      await ctx.deps.pool.query(
        `UPDATE webhook_deliveries SET next_attempt_at = now() - interval '30 seconds', locked_by = 'x',
           locked_until = now() + interval '1 hour' WHERE event_id = $1`,
        [failed.id],
      );
      const text = await ctx.deps.metrics.registry.metrics();
      assert.match(text, /webhook_delivery_attempts_total\{outcome="success"\} [1-9]/);
      assert.match(text, /webhook_delivery_attempts_total\{outcome="failed"\} [1-9]/);
      assert.match(text, /webhook_delivery_duration_seconds_count\{outcome="success"\} [1-9]/);
      assert.match(text, /webhook_delivery_queue_depth [1-9]/);
      const lag = Number(/webhook_delivery_lag_seconds ([\d.]+)/.exec(text)?.[1]);
      assert.ok(lag >= 29 && lag < 120, `lag ${lag}`);
      assert.match(text, /webhook_delivery_in_flight \d/);
    } finally {
      await worker.stop();
      await ctx.deps.pool.query(
        "UPDATE webhook_deliveries SET state = 'exhausted' WHERE event_id > 0 AND state = 'pending'",
      );
    }
  });

  /**
   * Runs a worker until the event dead-letters, and checks that its one delivery was unsendable: a failed
   * attempt with `reason` and no request headers, nothing sent to `path`, the delivery exhausted.
   */
  async function expectUnsendable(eventId: number, path: string, sentBefore: number, reason: string) {
    const worker = startTestWorker(ctx.deps);
    try {
      await waitForEventStatus(ctx.deps.pool, eventId, ['dead_letter'], 10_000);
    } finally {
      await worker.stop();
    }
    const attempts = await attemptsOf(ctx.deps.pool, eventId);
    assert.deepEqual(
      attempts.map((attempt) => [attempt.attempt_number, attempt.status, attempt.http_status_code]),
      [[1, 'failed', null]],
    );
    assert.equal(attempts[0]!.failure_reason, reason);
    assert.deepEqual(attempts[0]!.request_headers, {});
    assert.equal(
      receiver.requests.filter((request) => request.path === path).length,
      sentBefore,
      'nothing sent',
    );
    assert.equal((await deliveriesOf(ctx.deps.pool, eventId))[0]?.state, 'exhausted');
  }

  it('should record a delivery it cannot sign (unreadable secret) as failed, so it dead-letters instead of looping', async () => {
    receiver.setHandler(answer(200));
    const { organisationId, subscription } = await subscriber('/unreadable', 0);
    await ctx.deps.pool.query('UPDATE webhook_subscriptions SET signing_secret_sealed = $1 WHERE id = $2', [
      ctx.deps.secretBox.encrypt('x').replace(/^v1\.[^.]+/, 'v1.AAAAAAAAAAAAAAAA'),
      subscription.id,
    ]);
    const seen = receiver.requests.filter((request) => request.path === '/unreadable').length;
    const event = await publish(ctx.deps, organisationId);
    await expectUnsendable(event.id, '/unreadable', seen, UNSIGNABLE_REASON);
  });

  it('should record a delivery whose payload it cannot open as failed, so it dead-letters instead of looping', async () => {
    receiver.setHandler(answer(200));
    const { organisationId } = await subscriber('/unreadable-payload', 0);
    // Sealed under a key this worker does not hold: what a worker left on an old key meets.
    const otherKey = new SecretBox('b'.repeat(64));
    const event = await publishStoredAs(ctx.deps, organisationId, (envelope) => otherKey.encrypt(envelope));
    await expectUnsendable(event.id, '/unreadable-payload', 0, UNREADABLE_PAYLOAD_REASON);
  });
});

describe('delivery worker at rest', () => {
  let ctx: DeliveryTestContext;
  let receiver: HttpsReceiver;

  before(async () => {
    // A long lease: the worker's next timed look at the queue (the lease end) is far beyond this test.
    ctx = await deliveryContext({ WEBHOOK_LEASE_MS: '60000' });
    receiver = await startHttpsReceiver(answer(200));
  });
  after(async () => {
    await receiver.close();
    await ctx.close();
  });

  it('should run no claim for a completed request when nothing else is due', async () => {
    let claims = 0;
    let dueLookups = 0;
    const pool = ctx.deps.pool;
    const counting = new Proxy(pool, {
      get(target, property) {
        if (property === 'query') {
          return (...args: unknown[]) => {
            if ((args[0] as { name?: string } | undefined)?.name === 'delivery.claim') claims++;
            const result = (target.query as (...a: unknown[]) => Promise<unknown>)(...args);
            // The look-up of the next due time ends a round of the claim loop, which then sleeps.
            if (typeof args[0] === 'string' && args[0].includes('min(next_attempt_at)')) {
              return result.then((value) => {
                dueLookups++;
                return value;
              });
            }
            return result;
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const organisationId = await createOrganisation(pool);
    await createSubscription(ctx.deps, { organisationId, endpointUrl: `${receiver.origin}/at-rest` });
    const worker = startTestWorker({ ...ctx.deps, pool: counting }, { listen: false, maxIdleMs: 60_000 });
    try {
      // The first round (claim, then the next due time) ends before anything is published, so the only
      // reason left to claim is the wake-up below.
      await waitUntil(() => dueLookups === 1, 'the first round of the claim loop');
      assert.equal(await repo.nextDueInMs(pool, []), undefined, 'nothing pending: nothing falls due');
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(claims, 1, 'an idle worker with nothing pending sleeps instead of claiming again');
      const event = await publish(ctx.deps, organisationId);
      worker.wake(); // what the NOTIFY of the publishing transaction does
      await waitForEventStatus(pool, event.id, ['delivered']);
      // The answer freed a slot and the outcome was recorded: neither is a reason to claim again.
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(claims, 2, 'one claim at start, one for the notified event');
    } finally {
      await worker.stop();
    }
  });
});
