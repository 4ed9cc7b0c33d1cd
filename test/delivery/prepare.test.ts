// The step between the claim and the send (D9, D10): the subscription is read again, so a rotation, pause,
// delete, URL or max_retries change committed after the claim applies to the request itself; a delivery
// that cannot be signed, or whose payload cannot be opened, becomes a failed attempt instead of a delivery
// re-claimed forever; the payload is opened (it is sealed at rest) and sent as published.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { SecretBox } from '../../src/platform/secrets.ts';
import {
  prepareDeliveries,
  UNREADABLE_PAYLOAD_REASON,
  UNSIGNABLE_REASON,
} from '../../src/webhooks/delivery/prepare.ts';
import * as repo from '../../src/webhooks/delivery/repository.ts';
import { giveUp } from '../../src/webhooks/delivery/service.ts';
import { answer, type HttpsReceiver, startHttpsReceiver } from '../helpers/https-receiver.ts';
import {
  attemptsOf,
  claimDue,
  createOrganisation,
  createSubscription,
  type DeliveryTestContext,
  deliveriesOf,
  deliveryContext,
  eventStatus,
  publish,
  rotateSecret,
  setSubscriptionStatus,
  startTestWorker,
  subscriptionRow,
  type TestSubscription,
  waitForEventStatus,
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
    const rows = await claimDue(ctx.deps.pool, `worker-${name}`);
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
    const prepared = (await prepareDeliveries(ctx.deps.pool, ctx.deps.secretBox, [delivery]))[0]!;
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
    const prepared = (await prepareDeliveries(ctx.deps.pool, ctx.deps.secretBox, [delivery]))[0]!;
    assert.equal(prepared.kind, 'send');
    assert.equal(prepared.delivery.endpoint_url, 'https://hook.example/new-home');
    assert.equal(prepared.delivery.max_retries, 1);
  });

  for (const status of ['paused', 'deleted', 'auto_disabled']) {
    it(`should send nothing when the subscription became ${status} after the claim`, async () => {
      const { subscription, delivery } = await claimed(`became-${status}`);
      await setSubscriptionStatus(ctx.deps.pool, subscription.id, status);
      const prepared = (await prepareDeliveries(ctx.deps.pool, ctx.deps.secretBox, [delivery]))[0]!;
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
    const prepared = (await prepareDeliveries(ctx.deps.pool, ctx.deps.secretBox, [delivery]))[0]!;
    assert.equal(prepared.kind, 'unsendable');
    const { result } = prepared as { result: { kind: string; reason: string; latencyMs: number } };
    assert.deepEqual(result, { kind: 'error', latencyMs: 0, reason: UNSIGNABLE_REASON });
    assert.ok(!result.reason.includes(damaged) && !result.reason.includes('whsec_'));
  });

  it('should sign and send the opened payload, opening it once for the deliveries of one event', async () => {
    const organisationId = await createOrganisation(ctx.deps.pool);
    const subscriptions = [
      await createSubscription(ctx.deps, { organisationId, endpointUrl: 'https://hook.example/one-a' }),
      await createSubscription(ctx.deps, { organisationId, endpointUrl: 'https://hook.example/one-b' }),
    ];
    const event = await publish(ctx.deps, organisationId);
    const rows = (await claimDue(ctx.deps.pool, 'worker-one-event')).filter(
      (row) => row.event_id === event.id,
    );
    assert.equal(rows.length, 2);
    assert.ok(
      rows.every((row) => row.payload.startsWith('v1.')),
      'claimed as stored: sealed',
    );
    let opened = 0;
    const box = {
      decrypt: (sealed: string) => {
        if (sealed === rows[0]!.payload) opened += 1;
        return ctx.deps.secretBox.decrypt(sealed);
      },
    };
    const prepared = await prepareDeliveries(ctx.deps.pool, box, rows);
    assert.equal(opened, 1, 'the payload is opened once');
    for (const item of prepared) {
      assert.equal(item.kind, 'send');
      const { headers } = item as { headers: Record<string, string> };
      const subscription = subscriptions.find((candidate) => candidate.id === item.delivery.subscription_id)!;
      assert.equal(item.delivery.payload, event.payload, 'the envelope as published');
      assert.equal(verifies(subscription.secret, event.payload, headers), true);
    }
  });

  it('should send a payload stored in clear as it is', async () => {
    const { subscription, delivery, payload } = await claimed('in-clear');
    const prepared = (
      await prepareDeliveries(ctx.deps.pool, ctx.deps.secretBox, [{ ...delivery, payload }])
    )[0]!;
    assert.equal(prepared.kind, 'send');
    assert.equal(prepared.delivery.payload, payload);
    const { headers } = prepared as { headers: Record<string, string> };
    assert.equal(verifies(subscription.secret, payload, headers), true);
  });

  it('should report a payload it cannot open as unsendable, with a reason that names nothing of it', async () => {
    const { delivery, payload } = await claimed('unreadable-payload');
    for (const stored of [
      new SecretBox('b'.repeat(64)).encrypt(payload),
      `${delivery.payload.slice(0, -4)}AAAA`,
      'not a payload',
    ]) {
      const prepared = (
        await prepareDeliveries(ctx.deps.pool, ctx.deps.secretBox, [{ ...delivery, payload: stored }])
      )[0]!;
      assert.equal(prepared.kind, 'unsendable', stored);
      const { result } = prepared as { result: { kind: string; reason: string; latencyMs: number } };
      assert.deepEqual(result, { kind: 'error', latencyMs: 0, reason: UNREADABLE_PAYLOAD_REASON });
    }
  });

  it('should report a stored endpoint_url that cannot be requested as unsendable', async () => {
    const { subscription, delivery } = await claimed('bad-url');
    await ctx.deps.pool.query('UPDATE webhook_subscriptions SET endpoint_url = $2 WHERE id = $1', [
      subscription.id,
      'not a url',
    ]);
    const prepared = (await prepareDeliveries(ctx.deps.pool, ctx.deps.secretBox, [delivery]))[0]!;
    assert.equal(prepared.kind, 'unsendable');
    assert.match((prepared as { result: { reason: string } }).result.reason, /endpoint_url/);
  });
});

describe('giving up a delivery', () => {
  let ctx: DeliveryTestContext;
  let receiver: HttpsReceiver;

  before(async () => {
    ctx = await deliveryContext({ WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_LEASE_MS: '5000' });
    receiver = await startHttpsReceiver(answer(200));
  });
  after(async () => {
    await receiver.close();
    await ctx.close();
  });

  /** A published event whose one delivery the caller then claims or lets a worker claim. */
  async function published(path: string) {
    const organisationId = await createOrganisation(ctx.deps.pool);
    const subscription = await createSubscription(ctx.deps, {
      organisationId,
      endpointUrl: `${receiver.origin}${path}`,
      maxRetries: 0,
    });
    const event = await publish(ctx.deps, organisationId);
    return { subscription, event };
  }

  const claim = async (workerId: string, eventId: number) => {
    const rows = await claimDue(ctx.deps.pool, workerId);
    const delivery = rows.find((row) => row.event_id === eventId);
    assert.ok(delivery, 'claimed');
    return delivery;
  };

  it('should not give up a delivery whose subscription was re-activated after it was read', async () => {
    const { subscription, event } = await published('/reactivated');
    await setSubscriptionStatus(ctx.deps.pool, subscription.id, 'paused');
    const delivery = await claim('give-up-reactivated', event.id);
    assert.equal(delivery.subscription_status, 'paused', 'read as paused');
    await setSubscriptionStatus(ctx.deps.pool, subscription.id, 'active');
    const outcome = await giveUp(ctx.deps.pool, { workerId: 'give-up-reactivated', delivery });
    assert.deepEqual(outcome, { recorded: false, why: 'active' });
    assert.deepEqual(await attemptsOf(ctx.deps.pool, event.id), []);
    assert.equal((await deliveriesOf(ctx.deps.pool, event.id))[0]?.state, 'pending');
    assert.equal(await eventStatus(ctx.deps.pool, event.id), 'failed');
    await repo.releaseLeases(ctx.deps.pool, 'give-up-reactivated', [delivery.id]);
  });

  it('should give up with the status current in its transaction, and leave last_delivery_at alone', async () => {
    const { subscription, event } = await published('/gone');
    await setSubscriptionStatus(ctx.deps.pool, subscription.id, 'paused');
    const delivery = await claim('give-up-gone', event.id);
    await setSubscriptionStatus(ctx.deps.pool, subscription.id, 'deleted');
    const outcome = await giveUp(ctx.deps.pool, { workerId: 'give-up-gone', delivery });
    assert.equal(outcome.recorded, true);
    const [attempt] = await attemptsOf(ctx.deps.pool, event.id);
    assert.equal(attempt?.status, 'failed');
    assert.match(attempt?.failure_reason ?? '', /^not sent: subscription is deleted, delivery given up$/);
    assert.deepEqual(attempt?.request_headers, {});
    assert.equal(await eventStatus(ctx.deps.pool, event.id), 'dead_letter');
    const row = await subscriptionRow(ctx.deps.pool, subscription.id);
    assert.equal(row.last_delivery_at, null, 'no request was made: last_delivery_at unchanged');
    assert.equal(row.consecutive_failures, 0);
  });

  it('should send, not give up, a delivery whose subscription is re-activated between the read and the give-up', async () => {
    const { subscription, event } = await published('/reactivated-worker');
    await setSubscriptionStatus(ctx.deps.pool, subscription.id, 'paused');
    // The worker's pre-send read sees `paused`; the subscription is re-activated right after that read,
    // before the give-up transaction.
    let reactivated = false;
    const pool = ctx.deps.pool;
    const reactivating = new Proxy(pool, {
      get(target, property) {
        if (property === 'query') {
          return async (...args: unknown[]) => {
            const result = await (target.query as (...a: unknown[]) => Promise<unknown>)(...args);
            // A query is a text or a config object (named statements).
            const text =
              typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text;
            if (
              !reactivated &&
              text !== undefined &&
              /signing_secret_sealed, max_retries\s+FROM/.test(text)
            ) {
              reactivated = true;
              await setSubscriptionStatus(target, subscription.id, 'active');
            }
            return result;
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const worker = startTestWorker({ ...ctx.deps, pool: reactivating }, { listen: false });
    try {
      await waitForEventStatus(ctx.deps.pool, event.id, ['delivered', 'dead_letter'], 10_000);
    } finally {
      await worker.stop();
    }
    assert.ok(reactivated, 'the re-activation happened between the read and the give-up');
    const attempts = await attemptsOf(ctx.deps.pool, event.id);
    assert.deepEqual(
      attempts.map((attempt) => attempt.status),
      ['success'],
    );
    assert.equal(await eventStatus(ctx.deps.pool, event.id), 'delivered');
    assert.equal(receiver.requests.filter((request) => request.path === '/reactivated-worker').length, 1);
  });
});
