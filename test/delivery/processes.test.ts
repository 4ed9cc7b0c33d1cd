// Whole worker processes (`node src/main.ts worker`) against one database (D10): a worker killed with
// requests in flight loses nothing (its leases expire and another worker sends them), and three workers
// deliver 5,000 deliveries exactly once between them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { withTransaction } from '../../src/db/pool.ts';
import { publishEvent } from '../../src/webhooks/publish.ts';
import { TEST_ENCRYPTION_KEY } from '../helpers/app.ts';
import {
  answer,
  type HttpsReceiver,
  startHttpsReceiver,
  testCertificate,
} from '../helpers/https-receiver.ts';
import { type ServiceProcess, startService } from '../helpers/process.ts';
import {
  attemptsOf,
  createOrganisation,
  createSubscription,
  type DeliveryTestContext,
  deliveryContext,
  EVENT_TYPE,
  publish,
  verifyDelivery,
  waitUntil,
} from './fixtures.ts';

function workerEnv(ctx: DeliveryTestContext, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: ctx.db.url,
    APP_ENV: 'sandbox',
    SECRETS_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    // The receivers' self-signed certificate, trusted the way an operator would add a private CA.
    NODE_EXTRA_CA_CERTS: testCertificate().certPath,
    DATABASE_POOL_SIZE: '6',
    PORT: '0',
    LOG_LEVEL: 'warn',
    ...extra,
  };
}

/** startService waits for the "listening on" line, logged at info: keep info for that line only. */
const startWorker = (ctx: DeliveryTestContext, extra: Record<string, string> = {}) =>
  startService('worker', workerEnv(ctx, { LOG_LEVEL: 'info', ...extra }));

describe('worker processes', () => {
  let ctx: DeliveryTestContext;
  let receiver: HttpsReceiver;
  const processes: ServiceProcess[] = [];

  before(async () => {
    ctx = await deliveryContext();
    receiver = await startHttpsReceiver();
  });

  after(async () => {
    for (const child of processes) await child.stop('SIGKILL');
    await receiver.close();
    await ctx.close();
  });

  it('should deliver everything after a worker is killed (SIGKILL) with requests in flight', async () => {
    const releases: (() => void)[] = [];
    let holding = true;
    receiver.setHandler(async (request, response) => {
      if (request.path === '/crash' && holding) {
        await new Promise<void>((resolve) => releases.push(resolve));
        if (!response.destroyed) response.end();
        return;
      }
      response.end();
    });
    const organisationId = await createOrganisation(ctx.deps.pool);
    const subscription = await createSubscription(ctx.deps, {
      organisationId,
      endpointUrl: `${receiver.origin}/crash`,
    });
    const leaseMs = 3_000;
    const env = { WEBHOOK_LEASE_MS: String(leaseMs), WEBHOOK_TIMEOUT_MS: '2000' };
    const doomed = await startWorker(ctx, env);
    processes.push(doomed);
    const events = [];
    for (let i = 0; i < 20; i++) events.push(await publish(ctx.deps, organisationId));
    // WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION (8) requests are held by the endpoint when the worker dies.
    await receiver.waitForRequests(8);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const inFlight = receiver.requests.slice();
    assert.equal(inFlight.length, 8);
    await doomed.stop('SIGKILL');
    holding = false;
    for (const release of releases) release();

    const survivor = await startWorker(ctx, env);
    processes.push(survivor);
    for (const event of events) {
      await waitUntil(
        async () =>
          (await attemptsOf(ctx.deps.pool, event.id)).some((a) => a.status === 'success') || undefined,
        `event ${event.public_id} delivered`,
        30_000,
      );
    }
    for (const event of events) {
      const attempts = await attemptsOf(ctx.deps.pool, event.id);
      assert.deepEqual(
        attempts.map((attempt) => [attempt.attempt_number, attempt.status]),
        [[1, 'success']],
        'the killed worker recorded nothing; the survivor recorded one attempt',
      );
    }
    // At-least-once: the requests that were in flight were sent again, but only after their lease expired.
    for (const first of inFlight) {
      const again = receiver.requests.filter(
        (request) => request.headers['webhook-id'] === first.headers['webhook-id'],
      );
      assert.equal(again.length, 2);
      assert.ok(again[1]!.receivedAt - first.receivedAt >= leaseMs - 1_000, 'not before the lease expired');
      for (const request of again) verifyDelivery(subscription.secret, request);
    }
    const ids = new Set(receiver.requests.map((request) => request.headers['webhook-id']));
    assert.equal(ids.size, 20);
    await survivor.stop('SIGTERM');
  });

  it('should deliver 5,000 deliveries exactly once with three worker processes', async () => {
    receiver.requests.length = 0;
    receiver.setHandler(answer(204));
    const organisationId = await createOrganisation(ctx.deps.pool);
    const subscriptions = [];
    for (let i = 0; i < 10; i++) {
      subscriptions.push(
        await createSubscription(ctx.deps, { organisationId, endpointUrl: `${receiver.origin}/s${i}` }),
      );
    }
    const workers = await Promise.all([startWorker(ctx), startWorker(ctx), startWorker(ctx)]);
    processes.push(...workers);

    const started = Date.now();
    // 500 events x 10 subscriptions = 5,000 deliveries, published 50 events per transaction.
    for (let batch = 0; batch < 10; batch++) {
      await withTransaction(ctx.deps.pool, async (tx) => {
        for (let i = 0; i < 50; i++) {
          await publishEvent(tx, ctx.deps.secretBox, {
            organisationId,
            eventTypeCode: EVENT_TYPE,
            data: { n: batch * 50 + i },
          });
        }
      });
    }
    const published = Date.now() - started;
    await waitUntil(
      async () => {
        const result = await ctx.deps.pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM webhook_deliveries WHERE state = 'succeeded' AND organisation_id = $1",
          [organisationId],
        );
        return result.rows[0]!.n === 5_000 || undefined;
      },
      '5,000 deliveries succeeded',
      240_000,
    );
    const elapsed = Date.now() - started;
    process.stdout.write(
      `# 5,000 deliveries by 3 worker processes: ${elapsed} ms from the first publish (publishing took ${published} ms), ${Math.round(5_000_000 / elapsed)} deliveries/s\n`,
    );

    const counts = new Map<string, number>();
    for (const request of receiver.requests) {
      const key = `${request.path} ${request.headers['webhook-id']}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    assert.equal(receiver.requests.length, 5_000, 'no request was sent twice');
    assert.equal(counts.size, 5_000);
    assert.ok([...counts.values()].every((count) => count === 1));
    const secrets = new Map(subscriptions.map((s, i) => [`/s${i}`, s.secret]));
    for (const request of receiver.requests) verifyDelivery(secrets.get(request.path)!, request);

    const attempts = await ctx.deps.pool.query<{ status: string; attempt_number: number; n: number }>(
      `SELECT status, attempt_number, count(*)::int AS n FROM webhook_delivery_attempts
       WHERE organisation_id = $1 GROUP BY 1, 2`,
      [organisationId],
    );
    assert.deepEqual(attempts.rows, [{ status: 'success', attempt_number: 1, n: 5_000 }]);
    const statuses = await ctx.deps.pool.query<{ status: string; n: number }>(
      'SELECT status, count(*)::int AS n FROM webhook_events WHERE organisation_id = $1 GROUP BY 1',
      [organisationId],
    );
    assert.deepEqual(statuses.rows, [{ status: 'delivered', n: 500 }]);
    for (const worker of workers) assert.equal(await worker.stop('SIGTERM'), 0, 'a clean stop');
  });
});
