// Subscription health (D9, D10): consecutive failures, auto-disable at 50, and the signed webhook.ping
// probe that decides whether an auto_disabled subscription may become active again.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { withTransaction } from '../../src/db/pool.ts';
import { generateSigningSecret } from '../../src/platform/secrets.ts';
import { probeEndpoint } from '../../src/webhooks/delivery/probe.ts';
import type { DeliveryWorker } from '../../src/webhooks/delivery/worker.ts';
import { publishEvent } from '../../src/webhooks/publish.ts';
import {
  answer,
  type HttpsReceiver,
  startHttpsReceiver,
  testCertificate,
} from '../helpers/https-receiver.ts';
import {
  createOrganisation,
  createSubscription,
  type DeliveryTestContext,
  deliveryContext,
  EVENT_TYPE,
  publish,
  startTestWorker,
  subscriptionRow,
  verifyDelivery,
  waitUntil,
} from './fixtures.ts';

describe('subscription health', () => {
  let ctx: DeliveryTestContext;
  let receiver: HttpsReceiver;
  let worker: DeliveryWorker;

  before(async () => {
    ctx = await deliveryContext({ WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_LEASE_MS: '5000' });
    receiver = await startHttpsReceiver();
    worker = startTestWorker(ctx.deps);
  });

  after(async () => {
    await worker.stop();
    await receiver.close();
    await ctx.close();
  });

  it('should auto-disable an active subscription after 50 consecutive failed attempts', async () => {
    receiver.setHandler(answer(500));
    const organisationId = await createOrganisation(ctx.deps.pool);
    const subscription = await createSubscription(ctx.deps, {
      organisationId,
      endpointUrl: `${receiver.origin}/failing`,
      maxRetries: 0,
    });
    for (let i = 0; i < 50; i++) await publish(ctx.deps, organisationId);
    const row = await waitUntil(
      async () => {
        const current = await subscriptionRow(ctx.deps.pool, subscription.id);
        return current.consecutive_failures >= 50 ? current : undefined;
      },
      '50 failed attempts',
      30_000,
    );
    assert.equal(row.status, 'auto_disabled');
    assert.equal(row.consecutive_failures, 50);
    assert.ok(row.last_delivery_at instanceof Date);
    // Auto-disabled: new events no longer match it.
    const next = await withTransaction(ctx.deps.pool, (tx) =>
      publishEvent(tx, ctx.deps.secretBox, { organisationId, eventTypeCode: EVENT_TYPE, data: {} }),
    );
    assert.equal(next.outcome, 'no_subscribers');
  });

  it('should count 49 failures without disabling, and reset the count on a success', async () => {
    const organisationId = await createOrganisation(ctx.deps.pool);
    const subscription = await createSubscription(ctx.deps, {
      organisationId,
      endpointUrl: `${receiver.origin}/recovering`,
      maxRetries: 0,
    });
    await ctx.deps.pool.query('UPDATE webhook_subscriptions SET consecutive_failures = 48 WHERE id = $1', [
      subscription.id,
    ]);
    receiver.setHandler(answer(503));
    await publish(ctx.deps, organisationId);
    let row = await waitUntil(async () => {
      const current = await subscriptionRow(ctx.deps.pool, subscription.id);
      return current.consecutive_failures === 49 ? current : undefined;
    }, '49 failures');
    assert.equal(row.status, 'active');
    receiver.setHandler(answer(200));
    await publish(ctx.deps, organisationId);
    row = await waitUntil(async () => {
      const current = await subscriptionRow(ctx.deps.pool, subscription.id);
      return current.consecutive_failures === 0 ? current : undefined;
    }, 'reset by a success');
    assert.equal(row.status, 'active');
  });

  describe('probeEndpoint', () => {
    const secret = generateSigningSecret();
    const probe = (path: string, options: { timeoutMs?: number } = {}) =>
      probeEndpoint(
        ctx.deps,
        {
          id: '0190d8e2-0000-7000-8000-000000000001',
          endpoint_url: `${receiver.origin}${path}`,
          signing_secret: secret,
        },
        { ca: testCertificate().cert, ...options },
      );

    it('should report healthy on a 2xx, with one signed webhook.ping', async () => {
      receiver.setHandler(answer(204));
      const before = receiver.requests.length;
      const result = await probe('/probe-ok');
      assert.deepEqual(result, { ok: true, description: 'the endpoint answered HTTP 204' });
      assert.equal(receiver.requests.length, before + 1);
      const request = receiver.requests[before]!;
      const ping = verifyDelivery(secret, request) as {
        id: string;
        type: string;
        data: { subscription_id: string };
      };
      assert.equal(ping.type, 'webhook.ping');
      assert.match(ping.id, /^evt_/);
      assert.equal(ping.data.subscription_id, '0190d8e2-0000-7000-8000-000000000001');
      assert.equal(request.headers['user-agent'], 'payment-service-webhooks/1.0');
      assert.match(String(request.headers['x-webhook-delivery-id']), /^dlv_/);
    });

    it('should report unhealthy on a 5xx, a 3xx, a refused connection and a timeout', async () => {
      receiver.setHandler(answer(500));
      assert.deepEqual(await probe('/probe-500'), {
        ok: false,
        description: 'the endpoint answered HTTP 500',
      });
      receiver.setHandler(answer(301, '', { location: '/elsewhere' }));
      assert.deepEqual(await probe('/probe-301'), {
        ok: false,
        description: 'the endpoint answered HTTP 301 (redirects are not followed)',
      });
      receiver.setHandler((_request, response) => {
        setTimeout(() => response.end(), 1_000);
      });
      assert.deepEqual(await probe('/probe-slow', { timeoutMs: 200 }), {
        ok: false,
        description: 'the endpoint did not answer within 0.2 s',
      });
      const closed = await startHttpsReceiver();
      await closed.close();
      const refused = await probeEndpoint(
        ctx.deps,
        { id: 'x', endpoint_url: `https://127.0.0.1:${closed.port}/`, signing_secret: secret },
        { ca: testCertificate().cert },
      );
      assert.equal(refused.ok, false);
      assert.match(refused.description, /could not be reached: connection refused/);
    });

    it('should apply the SSRF rules when private targets are not allowed', async () => {
      const strict = await deliveryContext({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
      try {
        receiver.setHandler(answer(200));
        const before = receiver.requests.length;
        const result = await probeEndpoint(
          strict.deps,
          { id: 'x', endpoint_url: `${receiver.origin}/probe`, signing_secret: secret },
          { ca: testCertificate().cert },
        );
        assert.equal(result.ok, false);
        assert.match(result.description, /destination refused: 127\.0\.0\.1 is a loopback address/);
        assert.equal(receiver.requests.length, before);
      } finally {
        await strict.close();
      }
    });

    it('should trust WEBHOOK_CA_FILE, so the subscriptions service needs no extra options', async () => {
      const withCa = await deliveryContext({ WEBHOOK_CA_FILE: testCertificate().certPath });
      try {
        receiver.setHandler(answer(200));
        const result = await probeEndpoint(withCa.deps, {
          id: 'x',
          endpoint_url: `${receiver.origin}/probe-ca-file`,
          signing_secret: secret,
        });
        assert.deepEqual(result, { ok: true, description: 'the endpoint answered HTTP 200' });
        const untrusted = await probeEndpoint(ctx.deps, {
          id: 'x',
          endpoint_url: `${receiver.origin}/probe-untrusted`,
          signing_secret: secret,
        });
        assert.equal(untrusted.ok, false);
        assert.match(untrusted.description, /TLS error/);
      } finally {
        await withCa.close();
      }
    });
  });
});
