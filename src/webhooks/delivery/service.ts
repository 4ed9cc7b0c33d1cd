// Recording the outcomes of claimed deliveries (D10), many in one transaction that never spans an HTTP
// request: the attempts, the deliveries, the subscriptions' counters and the events' statuses move
// together. One transaction for many outcomes (the worker's group commit) is what lets one worker keep up
// with thousands of deliveries a second: each statement below handles the whole batch.
import type { Pool } from '../../db/pool.ts';
import { withTransaction } from '../../db/pool.ts';
import {
  type AttemptResult,
  AUTO_DISABLE_AFTER,
  classify,
  decide,
  givenUpReason,
  settledStatus,
  tallyFailures,
} from './outcome.ts';
import * as repo from './repository.ts';
import type { SendResult } from './send.ts';

export type RecordOutcome =
  /** The lease had expired (or was released): nothing recorded; another worker owns the delivery. */
  | { recorded: false }
  | {
      recorded: true;
      attempt: AttemptResult;
      attemptStatus: 'success' | 'failed' | 'timeout' | 'pending_retry';
      attemptNumber: number;
      eventStatus: string;
      /** This outcome's transaction took the subscription to auto_disabled. */
      autoDisabled: boolean;
    };

/** A completed request of a claimed delivery. */
export interface CompletedAttempt {
  delivery: repo.ClaimedDelivery;
  result: SendResult;
  requestHeaders: Record<string, string>;
}

/**
 * Records completed requests, in the order they completed, in one transaction: each new attempt, the
 * older pending one settled, the delivery moved on, the subscriptions' counters, the events' statuses.
 * An attempt whose lease this worker no longer holds records nothing (`recorded: false`); the others are
 * recorded all together or, on any error, not at all. Outcomes are returned in input order.
 */
export async function recordAttempts(
  pool: Pool,
  input: { workerId: string; attempts: readonly CompletedAttempt[]; retryScheduleMs: readonly number[] },
): Promise<RecordOutcome[]> {
  const { attempts } = input;
  const classified = attempts.map((completed) => classify(completed.result));
  return withTransaction(pool, async (tx) => {
    await repo.lockEvents(tx, unique(attempts.map((completed) => completed.delivery.event_id)));
    const fenced = new Map(
      (
        await repo.fenceDeliveries(
          tx,
          attempts.map((completed) => completed.delivery.id),
          input.workerId,
        )
      ).map((row) => [row.id, row]),
    );

    const settlements: repo.AttemptSettlement[] = [];
    const newAttempts: repo.NewAttempt[] = [];
    const changes: repo.DeliveryChange[] = [];
    const plans: ({ attempt: AttemptResult; attemptStatus: repo.NewAttempt['status'] } | undefined)[] = [];
    const resultsBySubscription = new Map<string, boolean[]>();
    attempts.forEach(({ delivery, requestHeaders }, index) => {
      const attempt = classified[index]!;
      const lease = fenced.get(delivery.id);
      if (!lease) {
        plans.push(undefined);
        return;
      }
      // D10: when the retry is sent, the attempt that waited for it settles to failed or timeout.
      if (lease.pending_attempt_id !== null) {
        settlements.push({
          id: lease.pending_attempt_id,
          status: settledStatus({
            http_status_code: lease.pending_http_status_code,
            failure_reason: lease.pending_failure_reason,
          }),
          failure_reason: null,
        });
      }
      const attemptInRound = lease.attempts_in_round + 1;
      const decision = decide(attempt, attemptInRound, delivery.max_retries, input.retryScheduleMs);
      const attemptStatus = decision.kind === 'retry' ? 'pending_retry' : attempt.status;
      newAttempts.push({
        delivery_id: delivery.id,
        event_id: delivery.event_id,
        subscription_id: delivery.subscription_id,
        organisation_id: delivery.organisation_id,
        status: attemptStatus,
        http_status_code: attempt.httpStatusCode,
        latency_ms: attempt.latencyMs,
        request_headers: requestHeaders,
        response_body_snippet: attempt.responseBodySnippet,
        failure_reason: attempt.failureReason,
        retry_delay_ms: decision.kind === 'retry' ? decision.delayMs : null,
      });
      changes.push({
        id: delivery.id,
        state:
          decision.kind === 'succeeded'
            ? 'succeeded'
            : decision.kind === 'exhausted'
              ? 'exhausted'
              : 'pending',
        attempts_in_round: attemptInRound,
        delay_ms: decision.kind === 'retry' ? decision.delayMs : 0,
      });
      const results = resultsBySubscription.get(delivery.subscription_id) ?? [];
      results.push(attempt.status === 'success');
      resultsBySubscription.set(delivery.subscription_id, results);
      plans.push({ attempt, attemptStatus });
    });
    if (changes.length === 0) return plans.map(() => ({ recorded: false }));

    await repo.settleAttempts(tx, settlements);
    const attemptNumbers = new Map(
      (await repo.insertAttempts(tx, newAttempts)).map((row) => [row.delivery_id, row.attempt_number]),
    );
    await repo.updateDeliveries(tx, changes);
    const eventStatuses = await repo.recomputeEventStatuses(
      tx,
      unique(newAttempts.map((attempt) => attempt.event_id)),
    );
    // Last, so that the subscription rows (shared by every delivery to an endpoint) are locked only for
    // this statement and the commit. Every lock on subscription rows is NO KEY UPDATE, which does not
    // conflict with the foreign-key KEY SHARE locks of the attempt inserts above, so taking it after them
    // cannot deadlock with the API's updates.
    const autoDisabled = await repo.recordSubscriptionResults(
      tx,
      [...resultsBySubscription].map(([subscriptionId, results]) => ({
        subscription_id: subscriptionId,
        ...tallyFailures(results),
      })),
      AUTO_DISABLE_AFTER,
    );
    return attempts.map(({ delivery }, index): RecordOutcome => {
      const plan = plans[index];
      if (!plan) return { recorded: false };
      return {
        recorded: true,
        attempt: plan.attempt,
        attemptStatus: plan.attemptStatus,
        attemptNumber: attemptNumbers.get(delivery.id)!,
        eventStatus: eventStatuses.get(delivery.event_id)!,
        autoDisabled: autoDisabled.has(delivery.subscription_id),
      };
    });
  });
}

const unique = <T>(values: readonly T[]): T[] => [...new Set(values)];

export type GiveUpOutcome =
  /** The lease had expired (or was released): nothing recorded; another worker owns the delivery. */
  | { recorded: false; why: 'lease_lost' }
  /** The subscription is active again (re-activated since it was read): nothing given up; send it. */
  | { recorded: false; why: 'active' }
  | { recorded: true; eventStatus: string; reason: string };

/**
 * D10: a delivery whose subscription is no longer active when its attempt falls due is given up, and
 * nothing is sent. The status is read again inside this transaction (and held until commit): a
 * subscription re-activated since the worker read it is not given up. Its pending attempt settles to
 * `failed` saying why. A delivery without any attempt yet gets one `failed` attempt that records no
 * request (empty request_headers, latency 0), so that the event's outcome is explained in its attempts.
 * Neither counts as a failure of the endpoint: consecutive_failures is left alone, and so is
 * last_delivery_at, although an attempt is recorded: no request was made (a deliberate exception to D9's
 * "completion time of the latest attempt", documented for operators and integrators).
 */
export async function giveUp(
  pool: Pool,
  input: { workerId: string; delivery: repo.ClaimedDelivery },
): Promise<GiveUpOutcome> {
  const { delivery } = input;
  return withTransaction(pool, async (tx) => {
    await repo.lockEvents(tx, [delivery.event_id]);
    const [fenced] = await repo.fenceDeliveries(tx, [delivery.id], input.workerId);
    if (!fenced) return { recorded: false, why: 'lease_lost' };
    const status = (await repo.subscriptionStatusForGiveUp(tx, delivery.subscription_id)) ?? 'deleted';
    if (status === 'active') return { recorded: false, why: 'active' };
    const reason = givenUpReason(status, fenced.pending_failure_reason);
    if (fenced.pending_attempt_id !== null) {
      await repo.settleAttempts(tx, [
        { id: fenced.pending_attempt_id, status: 'failed', failure_reason: reason },
      ]);
    } else {
      await repo.insertAttempts(tx, [
        {
          delivery_id: delivery.id,
          event_id: delivery.event_id,
          subscription_id: delivery.subscription_id,
          organisation_id: delivery.organisation_id,
          status: 'failed',
          http_status_code: null,
          latency_ms: 0,
          request_headers: {},
          response_body_snippet: '',
          failure_reason: reason,
          retry_delay_ms: null,
        },
      ]);
    }
    await repo.updateDeliveries(tx, [
      { id: delivery.id, state: 'exhausted', attempts_in_round: fenced.attempts_in_round, delay_ms: 0 },
    ]);
    const eventStatuses = await repo.recomputeEventStatuses(tx, [delivery.event_id]);
    return { recorded: true, eventStatus: eventStatuses.get(delivery.event_id)!, reason };
  });
}
