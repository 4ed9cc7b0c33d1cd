// Outcomes recorded many to a transaction (the worker's group commit) and requests prepared many to a read
// must follow the same D10 rules as one at a time: attempt numbers, retries, event statuses, fencing,
// consecutive_failures and auto-disable at 50 (contract section 3) across a batch.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { prepareDeliveries } from '../../src/webhooks/delivery/prepare.ts';
import type * as repo from '../../src/webhooks/delivery/repository.ts';
import type { SendResult } from '../../src/webhooks/delivery/send.ts';
import { type CompletedAttempt, recordAttempts } from '../../src/webhooks/delivery/service.ts';
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
  replay,
  rotateSecret,
  setSubscriptionStatus,
  subscriptionRow,
} from './fixtures.ts';

const ok: SendResult = { kind: 'response', statusCode: 200, bodySnippet: 'ok', latencyMs: 4 };
const serverError: SendResult = { kind: 'response', statusCode: 500, bodySnippet: 'boom', latencyMs: 6 };
const timeout: SendResult = {
  kind: 'timeout',
  latencyMs: 30_000,
  reason: 'timeout: no response within 30000 ms',
};

describe('outcomes recorded in batches', () => {
  let ctx: DeliveryTestContext;

  before(async () => {
    ctx = await deliveryContext();
  });
  after(async () => {
    await ctx.close();
  });

  /** Claims every due delivery of the organisation's subscriptions for `workerId`. */
  async function claim(workerId: string, subscriptionIds: string[]): Promise<repo.ClaimedDelivery[]> {
    const rows = await claimDue(ctx.deps.pool, workerId);
    return rows.filter((row) => subscriptionIds.includes(row.subscription_id));
  }

  const completed = (delivery: repo.ClaimedDelivery, result: SendResult): CompletedAttempt => ({
    delivery,
    result,
    requestHeaders: { 'webhook-id': delivery.event_public_id },
  });

  const record = (workerId: string, attempts: CompletedAttempt[]) =>
    recordAttempts(ctx.deps.pool, { workerId, attempts, retryScheduleMs: [5_000] });

  it('should record outcomes of several events and subscriptions in one transaction, each by the D10 rules', async () => {
    const organisationId = await createOrganisation(ctx.deps.pool);
    const a = await createSubscription(ctx.deps, {
      organisationId,
      endpointUrl: 'https://a.example/',
      maxRetries: 2,
    });
    const b = await createSubscription(ctx.deps, {
      organisationId,
      endpointUrl: 'https://b.example/',
      maxRetries: 0,
    });
    const first = await publish(ctx.deps, organisationId);
    const second = await publish(ctx.deps, organisationId);
    const claimed = await claim('batch-1', [a.id, b.id]);
    assert.equal(claimed.length, 4);
    const of = (subscriptionId: string, eventId: number) =>
      claimed.find((row) => row.subscription_id === subscriptionId && row.event_id === eventId)!;

    const outcomes = await record('batch-1', [
      completed(of(a.id, first.id), ok),
      completed(of(b.id, first.id), timeout),
      completed(of(a.id, second.id), serverError),
      completed(of(b.id, second.id), ok),
    ]);
    assert.deepEqual(
      outcomes.map((outcome) =>
        outcome.recorded
          ? [outcome.attemptStatus, outcome.attemptNumber, outcome.eventStatus]
          : 'not recorded',
      ),
      [
        ['success', 1, 'dead_letter'],
        ['timeout', 1, 'dead_letter'], // max_retries 0: the only attempt settles directly, exhausted
        ['pending_retry', 1, 'partially_delivered'],
        ['success', 1, 'partially_delivered'],
      ],
    );
    assert.equal(await eventStatus(ctx.deps.pool, first.id), 'dead_letter');
    assert.equal(await eventStatus(ctx.deps.pool, second.id), 'partially_delivered');
    const attempts = [
      ...(await attemptsOf(ctx.deps.pool, first.id)),
      ...(await attemptsOf(ctx.deps.pool, second.id)),
    ];
    assert.equal(attempts.length, 4);
    assert.equal(
      new Set(attempts.map((attempt) => attempt.created_at.getTime())).size,
      1,
      'one transaction: every attempt has the same transaction time',
    );
    const retry = attempts.find((attempt) => attempt.status === 'pending_retry')!;
    assert.equal(retry.http_status_code, 500);
    assert.equal(retry.response_body_snippet, 'boom');
    assert.equal(retry.next_retry_at!.getTime() - retry.created_at.getTime(), 5_000);
    const deliveries = new Map(
      (await deliveriesOf(ctx.deps.pool, second.id)).map((row) => [
        row.subscription_id,
        [row.state, row.locked_by],
      ]),
    );
    assert.deepEqual(deliveries.get(a.id), ['pending', null], 'waits for its retry, lease dropped');
    assert.deepEqual(deliveries.get(b.id), ['succeeded', null]);
    assert.deepEqual(
      [await subscriptionRow(ctx.deps.pool, a.id), await subscriptionRow(ctx.deps.pool, b.id)].map((row) => [
        row.status,
        row.consecutive_failures,
        row.last_delivery_at !== null,
      ]),
      [
        ['active', 1, true], // success, then a failure
        ['active', 0, true], // a failure, then a success
      ],
    );
  });

  it('should settle the pending attempt when its retry is recorded in a later batch', async () => {
    const organisationId = await createOrganisation(ctx.deps.pool);
    const s = await createSubscription(ctx.deps, {
      organisationId,
      endpointUrl: 'https://retry.example/',
      maxRetries: 1,
    });
    const event = await publish(ctx.deps, organisationId);
    const [delivery] = await claim('batch-2', [s.id]);
    await record('batch-2', [completed(delivery!, timeout)]);
    await ctx.deps.pool.query('UPDATE webhook_deliveries SET next_attempt_at = now() WHERE id = $1', [
      delivery!.id,
    ]);
    const [again] = await claim('batch-2', [s.id]);
    const [outcome] = await record('batch-2', [completed(again!, serverError)]);
    assert.ok(outcome?.recorded);
    assert.equal(outcome.attemptStatus, 'failed', 'the last attempt of the round settles directly');
    assert.deepEqual(
      (await attemptsOf(ctx.deps.pool, event.id)).map((attempt) => [
        attempt.attempt_number,
        attempt.status,
        attempt.next_retry_at,
      ]),
      [
        [1, 'timeout', null],
        [2, 'failed', null],
      ],
    );
    assert.equal(await eventStatus(ctx.deps.pool, event.id), 'dead_letter');
    assert.equal((await subscriptionRow(ctx.deps.pool, s.id)).consecutive_failures, 2);
  });

  it('should auto-disable when the count reaches 50 inside a batch, even if a later success resets it', async () => {
    const organisationId = await createOrganisation(ctx.deps.pool);
    const s = await createSubscription(ctx.deps, { organisationId, endpointUrl: 'https://flaky.example/' });
    await ctx.deps.pool.query('UPDATE webhook_subscriptions SET consecutive_failures = 48 WHERE id = $1', [
      s.id,
    ]);
    for (let i = 0; i < 3; i++) await publish(ctx.deps, organisationId);
    const claimed = await claim('batch-3', [s.id]);
    const outcomes = await record('batch-3', [
      completed(claimed[0]!, serverError), // 49
      completed(claimed[1]!, serverError), // 50: auto_disabled
      completed(claimed[2]!, ok), // reset to 0; the status stays
    ]);
    assert.deepEqual(
      outcomes.map((outcome) => outcome.recorded && outcome.autoDisabled),
      [true, true, true],
    );
    const row = await subscriptionRow(ctx.deps.pool, s.id);
    assert.deepEqual([row.status, row.consecutive_failures], ['auto_disabled', 0]);
  });

  it('should auto-disable on a run of 50 failures between two successes of one batch, and not on 49', async () => {
    const organisationId = await createOrganisation(ctx.deps.pool);
    const fifty = await createSubscription(ctx.deps, {
      organisationId,
      endpointUrl: 'https://fifty.example/',
    });
    const fortyNine = await createSubscription(ctx.deps, {
      organisationId,
      endpointUrl: 'https://49.example/',
    });
    for (let i = 0; i < 52; i++) await publish(ctx.deps, organisationId);
    const claimed = await claim('batch-4', [fifty.id, fortyNine.id]);
    const runOf = (subscriptionId: string, failures: number) => {
      const rows = claimed.filter((row) => row.subscription_id === subscriptionId);
      return rows
        .slice(0, failures + 2)
        .map((row, index) => completed(row, index === 0 || index === failures + 1 ? ok : serverError));
    };
    await record('batch-4', [...runOf(fifty.id, 50), ...runOf(fortyNine.id, 49)]);
    const [disabled, active] = [
      await subscriptionRow(ctx.deps.pool, fifty.id),
      await subscriptionRow(ctx.deps.pool, fortyNine.id),
    ];
    assert.deepEqual([disabled.status, disabled.consecutive_failures], ['auto_disabled', 0]);
    assert.deepEqual([active.status, active.consecutive_failures], ['active', 0]);
  });

  it('should number two rounds of one event to one subscription in batch order', async () => {
    const organisationId = await createOrganisation(ctx.deps.pool);
    const slow = await createSubscription(ctx.deps, { organisationId, endpointUrl: 'https://slow.example/' });
    const failing = await createSubscription(ctx.deps, {
      organisationId,
      endpointUrl: 'https://failing.example/',
      maxRetries: 0,
    });
    const event = await publish(ctx.deps, organisationId);
    const round1 = await claim('batch-5', [slow.id, failing.id]);
    const slowRound1 = round1.find((row) => row.subscription_id === slow.id)!;
    const failingRound1 = round1.find((row) => row.subscription_id === failing.id)!;
    await record('batch-5', [completed(failingRound1, serverError)]);
    assert.equal(await eventStatus(ctx.deps.pool, event.id), 'dead_letter');
    await replay(ctx.deps, event.id); // round 2, while round 1's delivery to `slow` is still in flight
    const round2 = await claim('batch-5', [slow.id, failing.id]);
    assert.equal(round2.length, 2);
    const outcomes = await record('batch-5', [
      completed(slowRound1, ok),
      ...round2.map((row) => completed(row, ok)),
    ]);
    assert.ok(outcomes.every((outcome) => outcome.recorded));
    assert.deepEqual(
      (await attemptsOf(ctx.deps.pool, event.id, slow.id)).map((attempt) => [
        attempt.attempt_number,
        attempt.status,
      ]),
      [
        [1, 'success'],
        [2, 'success'],
      ],
    );
    assert.deepEqual(
      (await attemptsOf(ctx.deps.pool, event.id, failing.id)).map((attempt) => attempt.attempt_number),
      [1, 2],
    );
    assert.equal(await eventStatus(ctx.deps.pool, event.id), 'delivered', 'the current round all succeeded');
  });

  it('should record nothing for a delivery whose lease this worker lost, and the rest of the batch as usual', async () => {
    const organisationId = await createOrganisation(ctx.deps.pool);
    const s = await createSubscription(ctx.deps, { organisationId, endpointUrl: 'https://fenced.example/' });
    const lost = await publish(ctx.deps, organisationId);
    const kept = await publish(ctx.deps, organisationId);
    const claimed = await claim('batch-6', [s.id]);
    const lostDelivery = claimed.find((row) => row.event_id === lost.id)!;
    await ctx.deps.pool.query(`UPDATE webhook_deliveries SET locked_by = 'another-worker' WHERE id = $1`, [
      lostDelivery.id,
    ]);
    const outcomes = await record(
      'batch-6',
      claimed.map((row) => completed(row, ok)),
    );
    assert.deepEqual(
      claimed.map((row, index) => [row.event_id, outcomes[index]!.recorded]),
      [
        [lost.id, false],
        [kept.id, true],
      ],
    );
    assert.deepEqual(await attemptsOf(ctx.deps.pool, lost.id), []);
    assert.equal((await attemptsOf(ctx.deps.pool, kept.id)).length, 1);
    assert.equal((await deliveriesOf(ctx.deps.pool, lost.id))[0]!.locked_by, 'another-worker');
  });

  it('should keep text from outside that PostgreSQL JSON would refuse (lone surrogates) as replacement characters', async () => {
    const organisationId = await createOrganisation(ctx.deps.pool);
    const s = await createSubscription(ctx.deps, { organisationId, endpointUrl: 'https://odd.example/' });
    const event = await publish(ctx.deps, organisationId);
    const [delivery] = await claim('batch-7', [s.id]);
    const [outcome] = await record('batch-7', [
      completed(delivery!, { kind: 'error', latencyMs: 1, reason: 'reset \ud800 by peer' }),
    ]);
    assert.ok(outcome!.recorded);
    const [attempt] = await attemptsOf(ctx.deps.pool, event.id);
    assert.equal(attempt!.failure_reason, 'reset \ufffd by peer');
  });
});

describe('requests prepared in batches', () => {
  let ctx: DeliveryTestContext;

  before(async () => {
    ctx = await deliveryContext();
  });
  after(async () => {
    await ctx.close();
  });

  it('should read every subscription of a claim once and prepare each request with its current state', async () => {
    const organisationId = await createOrganisation(ctx.deps.pool);
    const rotated = await createSubscription(ctx.deps, {
      organisationId,
      endpointUrl: 'https://rotated.example/',
    });
    const paused = await createSubscription(ctx.deps, {
      organisationId,
      endpointUrl: 'https://paused.example/',
    });
    const plain = await createSubscription(ctx.deps, {
      organisationId,
      endpointUrl: 'https://plain.example/',
    });
    await publish(ctx.deps, organisationId);
    await publish(ctx.deps, organisationId);
    const claimed = await claimDue(ctx.deps.pool, 'prepare-batch');
    assert.equal(claimed.length, 6);
    const newSecret = await rotateSecret(ctx.deps, rotated.id);
    await setSubscriptionStatus(ctx.deps.pool, paused.id, 'paused');

    const prepared = await prepareDeliveries(ctx.deps.pool, ctx.deps.secretBox, claimed);
    assert.deepEqual(
      prepared.map((item) => item.delivery.id),
      claimed.map((row) => row.id),
      'input order',
    );
    for (const item of prepared) {
      const { subscription_id: subscriptionId, payload } = item.delivery;
      if (subscriptionId === paused.id) {
        assert.equal(item.kind, 'inactive');
        continue;
      }
      assert.equal(item.kind, 'send');
      const headers = (item as { headers: Record<string, string> }).headers;
      const secret = subscriptionId === rotated.id ? newSecret : plain.secret;
      assert.deepEqual(new Webhook(secret).verify(payload, headers), JSON.parse(payload));
    }
    const deliveryIds = prepared.flatMap((item) =>
      item.kind === 'send' ? [item.headers['X-Webhook-Delivery-Id']] : [],
    );
    assert.equal(deliveryIds.length, 4);
    assert.equal(new Set(deliveryIds).size, 4, 'a new X-Webhook-Delivery-Id for every request');
  });
});
