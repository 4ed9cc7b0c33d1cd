// One attempt against a real HTTPS endpoint: what is sent, and how every kind of answer is recorded (D10).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DeliveryWorker } from '../../src/webhooks/delivery/worker.ts';
import { answer, type HttpsReceiver, startHttpsReceiver } from '../helpers/https-receiver.ts';
import {
  attemptsOf,
  createOrganisation,
  createSubscription,
  type DeliveryTestContext,
  deliveriesOf,
  deliveryContext,
  eventStatus,
  publish,
  publishStoredAs,
  startTestWorker,
  subscriptionRow,
  verifyDelivery,
  waitForEventStatus,
} from './fixtures.ts';

describe('delivery outcomes', () => {
  let ctx: DeliveryTestContext;
  let receiver: HttpsReceiver;
  let worker: DeliveryWorker;

  before(async () => {
    // max_retries 0 below: every test concludes on its first attempt.
    // A timeout a loaded 2-core machine cannot hit by accident (TLS set-up included), short enough for
    // the timeout test.
    ctx = await deliveryContext({ WEBHOOK_TIMEOUT_MS: '3000', WEBHOOK_LEASE_MS: '5000' });
    receiver = await startHttpsReceiver();
    worker = startTestWorker(ctx.deps);
  });

  after(async () => {
    await worker.stop();
    await receiver.close();
    await ctx.close();
  });

  /** An organisation with one subscription on its own receiver path (events reach only it). */
  async function subscribe(name: string, maxRetries = 0) {
    const path = `/${name}`;
    const organisationId = await createOrganisation(ctx.deps.pool);
    const subscription = await createSubscription(ctx.deps, {
      organisationId,
      endpointUrl: `${receiver.origin}${path}`,
      maxRetries,
    });
    return { subscription, path, organisationId };
  }

  const requestsTo = (path: string) => receiver.requests.filter((request) => request.path === path);

  it('should POST the published payload byte for byte, signed per Standard Webhooks, and record a success', async () => {
    receiver.setHandler(answer(200, 'thanks'));
    const { subscription, path, organisationId } = await subscribe('success');
    const event = await publish(ctx.deps, organisationId, { object: { id: 'tr_é✓', amount: '10.50' } });
    await waitForEventStatus(ctx.deps.pool, event.id, ['delivered']);

    const [request] = requestsTo(path);
    assert.ok(request);
    assert.equal(request.method, 'POST');
    assert.equal(request.body, event.payload, 'the body is the published envelope, byte for byte');
    const verified = verifyDelivery(subscription.secret, request) as { id: string; type: string };
    assert.equal(verified.id, event.public_id);
    assert.equal(verified.type, 'transfer.completed');
    assert.equal(request.headers['webhook-id'], event.public_id);
    assert.match(String(request.headers['webhook-timestamp']), /^\d{10}$/);
    assert.ok(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000) < 10);
    assert.match(String(request.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/);
    assert.equal(request.headers['content-type'], 'application/json');
    assert.equal(request.headers['user-agent'], 'payment-service-webhooks/1.0');
    assert.match(String(request.headers['x-webhook-delivery-id']), /^dlv_[0-9A-HJKMNP-TV-Z]{26}$/);

    const [attempt] = await attemptsOf(ctx.deps.pool, event.id);
    assert.ok(attempt);
    assert.equal(attempt.status, 'success');
    assert.equal(attempt.attempt_number, 1);
    assert.equal(attempt.http_status_code, 200);
    assert.equal(attempt.response_body_snippet, 'thanks');
    assert.equal(attempt.failure_reason, null);
    assert.equal(attempt.next_retry_at, null);
    assert.ok(attempt.latency_ms >= 0 && attempt.latency_ms < 5000);
    // The stored headers are the ones sent, signature included.
    assert.equal(attempt.request_headers['webhook-signature'], request.headers['webhook-signature']);
    assert.equal(attempt.request_headers['X-Webhook-Delivery-Id'], request.headers['x-webhook-delivery-id']);
    assert.equal(attempt.request_headers['webhook-timestamp'], request.headers['webhook-timestamp']);

    const row = await subscriptionRow(ctx.deps.pool, subscription.id);
    assert.equal(row.consecutive_failures, 0);
    assert.ok(row.last_delivery_at instanceof Date);
    const [delivery] = await deliveriesOf(ctx.deps.pool, event.id);
    assert.equal(delivery?.state, 'succeeded');
    assert.equal(delivery?.locked_by, null);
  });

  it('should POST a payload stored in clear byte for byte, signed, as it was published', async () => {
    receiver.setHandler(answer(200));
    const { subscription, path, organisationId } = await subscribe('in-clear');
    const event = await publishStoredAs(ctx.deps, organisationId, (envelope) => envelope);
    const stored = await ctx.deps.pool.query<{ payload: string }>(
      'SELECT payload FROM webhook_events WHERE id = $1',
      [event.id],
    );
    assert.equal(stored.rows[0]!.payload, event.payload, 'stored in clear');
    await waitForEventStatus(ctx.deps.pool, event.id, ['delivered']);
    const [request] = requestsTo(path);
    assert.ok(request);
    assert.equal(request.body, event.payload, 'the body is the envelope, byte for byte');
    assert.equal((verifyDelivery(subscription.secret, request) as { id: string }).id, event.public_id);
  });

  it('should accept any 2xx, and a 204 with no body stores an empty snippet', async () => {
    receiver.setHandler(answer(204));
    const { subscription, organisationId } = await subscribe('no-content');
    const event = await publish(ctx.deps, organisationId);
    await waitForEventStatus(ctx.deps.pool, event.id, ['delivered']);
    const [attempt] = await attemptsOf(ctx.deps.pool, event.id, subscription.id);
    assert.equal(attempt?.status, 'success');
    assert.equal(attempt?.http_status_code, 204);
    assert.equal(attempt?.response_body_snippet, '');
  });

  for (const [status, label] of [
    [400, '4xx'],
    [410, '4xx'],
    [500, '5xx'],
    [503, '5xx'],
  ] as const) {
    it(`should record a ${label} answer (${status}) as failed with its status code and body`, async () => {
      receiver.setHandler(answer(status, `{"error":"nope ${status}"}`));
      const { subscription, organisationId } = await subscribe(`status-${status}`);
      const event = await publish(ctx.deps, organisationId);
      await waitForEventStatus(ctx.deps.pool, event.id, ['dead_letter']);
      const [attempt] = await attemptsOf(ctx.deps.pool, event.id, subscription.id);
      assert.equal(attempt?.status, 'failed');
      assert.equal(attempt?.http_status_code, status);
      assert.equal(attempt?.response_body_snippet, `{"error":"nope ${status}"}`);
      assert.equal(attempt?.failure_reason, `endpoint answered HTTP ${status}`);
      assert.equal(attempt?.next_retry_at, null);
      assert.equal((await subscriptionRow(ctx.deps.pool, subscription.id)).consecutive_failures, 1);
    });
  }

  it('should not follow a redirect: a 3xx is a failure and the target is never called', async () => {
    receiver.setHandler((request, response) => {
      if (request.path === '/redirect') {
        response.writeHead(302, { location: `${receiver.origin}/redirect-target` });
        response.end('moved');
      } else {
        response.writeHead(200);
        response.end();
      }
    });
    const { subscription, organisationId } = await subscribe('redirect');
    const event = await publish(ctx.deps, organisationId);
    await waitForEventStatus(ctx.deps.pool, event.id, ['dead_letter']);
    const [attempt] = await attemptsOf(ctx.deps.pool, event.id, subscription.id);
    assert.equal(attempt?.status, 'failed');
    assert.equal(attempt?.http_status_code, 302);
    assert.equal(attempt?.failure_reason, 'redirect not followed: HTTP 302');
    assert.equal(requestsTo('/redirect-target').length, 0);
  });

  it('should record a refused connection as failed with no status code', async () => {
    const closed = await startHttpsReceiver();
    const port = closed.port;
    await closed.close();
    const organisationId = await createOrganisation(ctx.deps.pool);
    const subscription = await createSubscription(ctx.deps, {
      organisationId,
      endpointUrl: `https://127.0.0.1:${port}/gone`,
      maxRetries: 0,
    });
    const event = await publish(ctx.deps, organisationId);
    await waitForEventStatus(ctx.deps.pool, event.id, ['dead_letter']);
    const [attempt] = await attemptsOf(ctx.deps.pool, event.id, subscription.id);
    assert.equal(attempt?.status, 'failed');
    assert.equal(attempt?.http_status_code, null);
    assert.equal(attempt?.response_body_snippet, '');
    assert.match(attempt?.failure_reason ?? '', /connection refused/);
  });

  it('should record a TLS failure (certificate not trusted) as failed with no status code', async () => {
    // A second worker that does not trust the test CA: the handshake fails, nothing reaches the handler.
    const ownCtx = await deliveryContext({ WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_LEASE_MS: '5000' });
    const { startDeliveryWorker } = await import('../../src/webhooks/delivery/worker.ts');
    const { quietLogger } = await import('./fixtures.ts');
    const untrusting = startDeliveryWorker(ownCtx.deps, quietLogger(), { stopTimeoutMs: 1000 });
    try {
      const org = await createOrganisation(ownCtx.deps.pool);
      const subscription = await createSubscription(ownCtx.deps, {
        organisationId: org,
        endpointUrl: `${receiver.origin}/untrusted`,
        maxRetries: 0,
      });
      const event = await publish(ownCtx.deps, org);
      await waitForEventStatus(ownCtx.deps.pool, event.id, ['dead_letter']);
      const [attempt] = await attemptsOf(ownCtx.deps.pool, event.id, subscription.id);
      assert.equal(attempt?.status, 'failed');
      assert.equal(attempt?.http_status_code, null);
      assert.match(attempt?.failure_reason ?? '', /TLS error|certificate/i);
      assert.equal(requestsTo('/untrusted').length, 0);
    } finally {
      await untrusting.stop();
      await ownCtx.close();
    }
  });

  it('should record a timeout with no status code and the timeout as latency', async () => {
    receiver.setHandler((request, response) => {
      if (request.path === '/slow') setTimeout(() => response.end('late'), 6_000).unref();
      else response.end();
    });
    const { subscription, organisationId } = await subscribe('slow');
    const event = await publish(ctx.deps, organisationId);
    await waitForEventStatus(ctx.deps.pool, event.id, ['dead_letter']);
    const [attempt] = await attemptsOf(ctx.deps.pool, event.id, subscription.id);
    assert.equal(attempt?.status, 'timeout');
    assert.equal(attempt?.http_status_code, null);
    assert.equal(attempt?.latency_ms, 3000);
    assert.equal(attempt?.response_body_snippet, '');
    assert.match(attempt?.failure_reason ?? '', /^timeout/);
  });

  it('should store only the first 1024 bytes of a large answer and not download the rest', async () => {
    let bytesWritten = 0;
    let finished = false;
    receiver.setHandler((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      // 64 MiB in 64 KiB chunks, written only as the client reads: a client reading it all would take long.
      const chunk = Buffer.alloc(64 * 1024, 'x');
      chunk.write('€'.repeat(400)); // multi-byte characters straddle the 1024-byte cut
      let left = 1024;
      const pump = () => {
        while (left > 0) {
          left--;
          bytesWritten += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
        finished = true;
        response.end();
      };
      response.on('close', () => {
        left = 0;
      });
      pump();
    });
    const { subscription, organisationId } = await subscribe('large');
    const event = await publish(ctx.deps, organisationId);
    await waitForEventStatus(ctx.deps.pool, event.id, ['delivered']);
    const [attempt] = await attemptsOf(ctx.deps.pool, event.id, subscription.id);
    assert.equal(attempt?.status, 'success');
    const snippet = attempt?.response_body_snippet ?? '';
    assert.ok(Buffer.byteLength(snippet) <= 1024, `snippet is ${Buffer.byteLength(snippet)} bytes`);
    assert.ok(Buffer.byteLength(snippet) >= 1022, 'a character cut at the limit is dropped, nothing else');
    assert.equal(snippet, '€'.repeat(341));
    assert.equal(finished, false, 'the endpoint could not send its whole answer');
    assert.ok(
      bytesWritten < 32 * 1024 * 1024,
      `the client stopped reading early (${bytesWritten} bytes written)`,
    );
  });

  it('should leave the event failed while a retry is pending', async () => {
    receiver.setHandler(answer(500));
    const { subscription, organisationId } = await subscribe('pending', 3);
    const event = await publish(ctx.deps, organisationId);
    // The default schedule's first retry is 5 s away: the attempt stays pending_retry for the test.
    const attempts = await (async () => {
      for (;;) {
        const rows = await attemptsOf(ctx.deps.pool, event.id, subscription.id);
        if (rows.length > 0) return rows;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    assert.equal(attempts[0]?.status, 'pending_retry');
    assert.ok(attempts[0]?.next_retry_at instanceof Date);
    assert.equal(attempts[0]!.next_retry_at!.getTime() - attempts[0]!.created_at.getTime(), 5_000);
    assert.equal(await eventStatus(ctx.deps.pool, event.id), 'failed');
  });
});
