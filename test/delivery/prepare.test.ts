// The step between the claim and the send (D9, D10): the subscription is read again, so a rotation, pause,
// delete, URL or max_retries change committed after the claim applies to the request itself; a delivery
// that cannot be signed becomes a failed attempt instead of a delivery re-claimed forever.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { prepareDelivery, UNSIGNABLE_REASON } from '../../src/webhooks/delivery/prepare.ts';
import * as repo from '../../src/webhooks/delivery/repository.ts';
import {
  createOrganisation,
  createSubscription,
  type DeliveryTestContext,
  deliveryContext,
  publish,
  rotateSecret,
  setSubscriptionStatus,
  type TestSubscription,
} from './fixtures.ts';

describe('preparing a claimed delivery', () => {
  let ctx: DeliveryTestContext;

  before(async () => {
    ctx = await deliveryContext();
  });
  after(async () => {
    await ctx.close();
  });

  /** A subscription with one due delivery, claimed (as a worker would) with the subscription as it was. */
  async function claimed(
    name: string,
  ): Promise<{ subscription: TestSubscription; delivery: repo.ClaimedDelivery; payload: string }> {
    const organisationId = await createOrganisation(ctx.deps.pool);
    const subscription = await createSubscription(ctx.deps, {
      organisationId,
      endpointUrl: `https://hook.example/${name}`,
      maxRetries: 3,
    });
    const event = await publish(ctx.deps, organisationId);
    const rows = await repo.claimDeliveries(ctx.deps.pool, {
      workerId: `worker-${name}`,
      leaseMs: 60_000,
      limit: 100,
      perSubscription: 100,
      inFlight: new Map(),
    });
    const delivery = rows.find((row) => row.event_id === event.id);
    assert.ok(delivery, 'claimed');
    return { subscription, delivery, payload: event.payload };
  }

  const verifies = (secret: string, body: string, headers: Record<string, string>) => {
    try {
      new Webhook(secret).verify(body, headers);
      return true;
    } catch {
      return false;
    }
  };

  it('should sign with the secret rotated after the claim, and only with it', async () => {
    const { subscription, delivery, payload } = await claimed('rotated');
    const rotated = await rotateSecret(ctx.deps, subscription.id);
    const prepared = await prepareDelivery(ctx.deps.pool, ctx.deps.secretBox, delivery);
    assert.equal(prepared.kind, 'send');
    const { headers } = prepared as { headers: Record<string, string> };
    assert.equal(verifies(rotated, payload, headers), true, 'verifies with the new secret');
    assert.equal(verifies(subscription.secret, payload, headers), false, 'not with the old one');
  });

  it('should send to the URL and with the max_retries current at send time', async () => {
    const { subscription, delivery } = await claimed('moved');
    await ctx.deps.pool.query(
      `UPDATE webhook_subscriptions SET endpoint_url = 'https://hook.example/new-home', max_retries = 1
       WHERE id = $1`,
      [subscription.id],
    );
    const prepared = await prepareDelivery(ctx.deps.pool, ctx.deps.secretBox, delivery);
    assert.equal(prepared.kind, 'send');
    assert.equal(prepared.delivery.endpoint_url, 'https://hook.example/new-home');
    assert.equal(prepared.delivery.max_retries, 1);
  });

  for (const status of ['paused', 'deleted', 'auto_disabled']) {
    it(`should send nothing when the subscription became ${status} after the claim`, async () => {
      const { subscription, delivery } = await claimed(`became-${status}`);
      await setSubscriptionStatus(ctx.deps.pool, subscription.id, status);
      const prepared = await prepareDelivery(ctx.deps.pool, ctx.deps.secretBox, delivery);
      assert.equal(prepared.kind, 'inactive');
      assert.equal(prepared.delivery.subscription_status, status);
    });
  }

  it('should report a secret it cannot unseal as unsendable, with a reason that names no secret', async () => {
    const { subscription, delivery } = await claimed('unsealable');
    const sealed = ctx.deps.secretBox.encrypt(subscription.secret);
    const damaged = `${sealed.slice(0, -4)}AAAA`;
    await ctx.deps.pool.query('UPDATE webhook_subscriptions SET signing_secret_sealed = $2 WHERE id = $1', [
      subscription.id,
      damaged,
    ]);
    const prepared = await prepareDelivery(ctx.deps.pool, ctx.deps.secretBox, delivery);
    assert.equal(prepared.kind, 'unsendable');
    const { result } = prepared as { result: { kind: string; reason: string; latencyMs: number } };
    assert.deepEqual(result, { kind: 'error', latencyMs: 0, reason: UNSIGNABLE_REASON });
    assert.ok(!result.reason.includes(damaged) && !result.reason.includes('whsec_'));
  });

  it('should report a stored endpoint_url that cannot be requested as unsendable', async () => {
    const { subscription, delivery } = await claimed('bad-url');
    await ctx.deps.pool.query('UPDATE webhook_subscriptions SET endpoint_url = $2 WHERE id = $1', [
      subscription.id,
      'not a url',
    ]);
    const prepared = await prepareDelivery(ctx.deps.pool, ctx.deps.secretBox, delivery);
    assert.equal(prepared.kind, 'unsendable');
    assert.match((prepared as { result: { reason: string } }).result.reason, /endpoint_url/);
  });
});
