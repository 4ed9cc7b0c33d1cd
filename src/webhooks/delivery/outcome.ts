// Recording rules of one attempt (D10), free of I/O: what an HTTP result means for the attempt row and
// for its delivery.
import { retryDelayMs, willRetry } from './schedule.ts';
import { type SendResult, TIMEOUT_REASON_PREFIX } from './send.ts';

export type FinalAttemptStatus = 'success' | 'failed' | 'timeout';

export interface AttemptResult {
  status: FinalAttemptStatus;
  httpStatusCode: number | null;
  latencyMs: number;
  responseBodySnippet: string;
  /** Short text, null on success (D10). */
  failureReason: string | null;
}

/** Any 2xx is success; a 3xx is not followed and fails; no status line means no http_status_code. */
export function classify(result: SendResult): AttemptResult {
  if (result.kind === 'timeout') {
    return {
      status: 'timeout',
      httpStatusCode: null,
      latencyMs: result.latencyMs,
      responseBodySnippet: '',
      failureReason: result.reason,
    };
  }
  if (result.kind === 'error') {
    return {
      status: 'failed',
      httpStatusCode: null,
      latencyMs: result.latencyMs,
      responseBodySnippet: '',
      failureReason: result.reason,
    };
  }
  const code = result.statusCode;
  const success = code >= 200 && code < 300;
  return {
    status: success ? 'success' : 'failed',
    httpStatusCode: code,
    latencyMs: result.latencyMs,
    responseBodySnippet: result.bodySnippet,
    failureReason: success
      ? null
      : code >= 300 && code < 400
        ? `redirect not followed: HTTP ${code}`
        : `endpoint answered HTTP ${code}`,
  };
}

export type DeliveryDecision =
  | { kind: 'succeeded' }
  /** The attempt is `pending_retry`, the next one is due after delayMs. */
  | { kind: 'retry'; delayMs: number }
  /** The last attempt of the round failed: it settles directly and the delivery is exhausted. */
  | { kind: 'exhausted' };

export function decide(
  result: AttemptResult,
  attemptInRound: number,
  maxRetries: number,
  scheduleMs: readonly number[],
): DeliveryDecision {
  if (result.status === 'success') return { kind: 'succeeded' };
  if (willRetry(attemptInRound, maxRetries)) {
    return { kind: 'retry', delayMs: retryDelayMs(scheduleMs, attemptInRound) };
  }
  return { kind: 'exhausted' };
}

/**
 * The status a `pending_retry` attempt settles to once its retry is sent: `timeout` when it timed out,
 * else `failed`. The kind is kept in the attempt's failure_reason, which a timeout always starts with.
 */
export function settledStatus(pending: {
  http_status_code: number | null;
  failure_reason: string | null;
}): 'failed' | 'timeout' {
  return pending.http_status_code === null && pending.failure_reason?.startsWith(TIMEOUT_REASON_PREFIX)
    ? 'timeout'
    : 'failed';
}

/** failure_reason of a delivery given up because its subscription is no longer active (D10). */
export function givenUpReason(subscriptionStatus: string, previous: string | null): string {
  const why = `not sent: subscription is ${subscriptionStatus}, delivery given up`;
  return previous ? `${why} (last attempt: ${previous})` : why;
}

/** Consecutive failed attempts after which an active subscription is auto-disabled (contract section 8). */
export const AUTO_DISABLE_AFTER = 50;

/**
 * What a run of outcomes, in the order the requests completed, means for one subscription's
 * consecutive_failures (D10: +1 per attempt that does not succeed, reset to 0 by a success), told without
 * the count it starts from, so that one statement can apply many outcomes to the stored count: the new
 * count is `failures_after_last_success` if anything succeeded, else the old count plus
 * `failures_before_first_success`; the count reached the auto-disable threshold at some point if the old
 * count plus `failures_before_first_success`, or any later run, reached it.
 */
export interface FailureTally {
  succeeded: boolean;
  failures: number;
  failures_before_first_success: number;
  failures_after_last_success: number;
  longest_failure_run_between_successes: number;
}

export function tallyFailures(successes: readonly boolean[]): FailureTally {
  const tally: FailureTally = {
    succeeded: false,
    failures: 0,
    failures_before_first_success: 0,
    failures_after_last_success: 0,
    longest_failure_run_between_successes: 0,
  };
  let run = 0;
  for (const success of successes) {
    if (!success) {
      tally.failures++;
      run++;
      continue;
    }
    if (tally.succeeded) {
      tally.longest_failure_run_between_successes = Math.max(
        tally.longest_failure_run_between_successes,
        run,
      );
    } else {
      tally.failures_before_first_success = run;
    }
    tally.succeeded = true;
    run = 0;
  }
  if (tally.succeeded) tally.failures_after_last_success = run;
  else tally.failures_before_first_success = run;
  return tally;
}
