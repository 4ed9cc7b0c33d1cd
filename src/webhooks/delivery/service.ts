// Recording the outcome of one claimed delivery (D10), each in one transaction that never spans the HTTP
// request: the attempt, the delivery, the subscription's counters and the event status move together.
import type { Pool } from '../../db/pool.ts';
import { withTransaction } from '../../db/pool.ts';
import {
  type AttemptResult,
  AUTO_DISABLE_AFTER,
  classify,
  decide,
  givenUpReason,
  settledStatus,
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
      autoDisabled: boolean;
    };

/** Records a completed request: the new attempt, the older pending one settled, counters, event status. */
export async function recordAttempt(
  pool: Pool,
  input: {
    workerId: string;
    delivery: repo.ClaimedDelivery;
    result: SendResult;
    requestHeaders: Record<string, string>;
    retryScheduleMs: readonly number[];
  },
): Promise<RecordOutcome> {
  const { delivery } = input;
  const attempt = classify(input.result);
  return withTransaction(pool, async (tx) => {
    await repo.lockEvent(tx, delivery.event_id);
    const fenced = await repo.fenceDelivery(tx, delivery.id, input.workerId);
    if (!fenced) return { recorded: false };

    // D10: when the retry is sent, the attempt that waited for it settles to failed or timeout.
    const pending = await repo.findPendingAttempt(tx, delivery.id);
    if (pending) await repo.settleAttempt(tx, pending.id, settledStatus(pending), null);

    const attemptInRound = fenced.attempts_in_round + 1;
    const decision = decide(attempt, attemptInRound, delivery.max_retries, input.retryScheduleMs);
    const attemptStatus = decision.kind === 'retry' ? 'pending_retry' : attempt.status;
    const inserted = await repo.insertAttempt(tx, {
      delivery_id: delivery.id,
      event_id: delivery.event_id,
      subscription_id: delivery.subscription_id,
      organisation_id: delivery.organisation_id,
      status: attemptStatus,
      http_status_code: attempt.httpStatusCode,
      latency_ms: attempt.latencyMs,
      request_headers: input.requestHeaders,
      response_body_snippet: attempt.responseBodySnippet,
      failure_reason: attempt.failureReason,
      retry_delay_ms: decision.kind === 'retry' ? decision.delayMs : null,
    });
    await repo.updateDelivery(tx, delivery.id, {
      state:
        decision.kind === 'succeeded' ? 'succeeded' : decision.kind === 'exhausted' ? 'exhausted' : 'pending',
      attemptsInRound: attemptInRound,
      delayMs: decision.kind === 'retry' ? decision.delayMs : 0,
    });
    const eventStatus = await repo.recomputeEventStatus(tx, delivery.event_id);
    // Last, so that the subscription row (shared by every delivery to the endpoint) is locked only for
    // this statement and the commit: outcomes of one subscription are serialised on it, and holding it
    // across the statements above capped one endpoint's throughput. Every lock on subscription rows is
    // NO KEY UPDATE, which does not conflict with the foreign-key KEY SHARE lock of the attempt insert
    // above, so taking it after the insert cannot deadlock with the API's updates.
    const subscription = await repo.recordSubscriptionResult(
      tx,
      delivery.subscription_id,
      attempt.status === 'success',
      AUTO_DISABLE_AFTER,
    );
    return {
      recorded: true,
      attempt,
      attemptStatus,
      attemptNumber: inserted.attempt_number,
      eventStatus,
      autoDisabled: subscription.auto_disabled,
    };
  });
}

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
    await repo.lockEvent(tx, delivery.event_id);
    const fenced = await repo.fenceDelivery(tx, delivery.id, input.workerId);
    if (!fenced) return { recorded: false, why: 'lease_lost' };
    const status = (await repo.subscriptionStatusForGiveUp(tx, delivery.subscription_id)) ?? 'deleted';
    if (status === 'active') return { recorded: false, why: 'active' };
    const pending = await repo.findPendingAttempt(tx, delivery.id);
    const reason = givenUpReason(status, pending?.failure_reason ?? null);
    if (pending) {
      await repo.settleAttempt(tx, pending.id, 'failed', reason);
    } else {
      await repo.insertAttempt(tx, {
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
      });
    }
    await repo.updateDelivery(tx, delivery.id, {
      state: 'exhausted',
      attemptsInRound: fenced.attempts_in_round,
      delayMs: 0,
    });
    const eventStatus = await repo.recomputeEventStatus(tx, delivery.event_id);
    return { recorded: true, eventStatus, reason };
  });
}
