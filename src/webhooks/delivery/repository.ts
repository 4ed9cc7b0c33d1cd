// SQL of the delivery engine (D10). The delivery row is the job: it is due when state = 'pending' and
// next_attempt_at <= now(); a worker holds it with a lease (locked_by, locked_until).
import type { Queryable } from '../../db/pool.ts';

export interface ClaimedDelivery {
  id: number;
  event_id: number;
  subscription_id: string;
  organisation_id: string;
  round: number;
  attempts_in_round: number;
  event_public_id: string;
  payload: string;
  subscription_status: string;
  endpoint_url: string;
  signing_secret_sealed: string;
  max_retries: number;
}

export interface ClaimInput {
  workerId: string;
  leaseMs: number;
  /** Free request slots of this worker (WEBHOOK_CONCURRENCY minus in flight). */
  limit: number;
  /** WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION. */
  perSubscription: number;
  /** This worker's in-flight count per subscription. */
  inFlight: ReadonlyMap<string, number>;
}

/**
 * Claims up to `limit` due deliveries in one statement and returns what sending them needs.
 *
 * - `FOR UPDATE SKIP LOCKED`: concurrent workers never wait on, nor take, each other's candidates.
 * - The lease: locked_by/locked_until, and next_attempt_at moved to the lease end, so a delivery whose
 *   worker died simply falls due again when its lease expires (no separate reaper), and the fallback
 *   timer to the earliest next_attempt_at also covers expired leases.
 * - Fairness: subscriptions already at their cap in this worker are excluded before the LIMIT, so a slow
 *   endpoint with a long backlog cannot fill the scan; the window function then takes at most the
 *   remaining allowance of each subscription from the candidates. Candidates locked but not chosen are
 *   released at the end of this statement's transaction.
 * - The subscription's status, URL, secret and max_retries are returned too, but the worker reads them
 *   again immediately before sending (readSubscriptionForSend), so a change committed after the claim
 *   applies to the request itself (D9: rotation applies to every request sent after the call).
 */
export async function claimDeliveries(db: Queryable, input: ClaimInput): Promise<ClaimedDelivery[]> {
  const busyIds: string[] = [];
  const busyCounts: number[] = [];
  const saturated: string[] = [];
  for (const [subscriptionId, count] of input.inFlight) {
    if (count >= input.perSubscription) saturated.push(subscriptionId);
    else if (count > 0) {
      busyIds.push(subscriptionId);
      busyCounts.push(count);
    }
  }
  const scanLimit = Math.max(input.limit * 4, 100);
  const result = await db.query<ClaimedDelivery>(
    `WITH busy AS (
       SELECT * FROM unnest($3::uuid[], $4::int[]) AS b(subscription_id, in_flight)
     ),
     candidates AS (
       SELECT id, subscription_id, next_attempt_at FROM webhook_deliveries
       WHERE state = 'pending' AND next_attempt_at <= now() AND NOT (subscription_id = ANY($5::uuid[]))
       ORDER BY next_attempt_at, id
       LIMIT $6
       FOR UPDATE SKIP LOCKED
     ),
     ranked AS (
       SELECT c.id, c.next_attempt_at, coalesce(b.in_flight, 0) AS in_flight,
              row_number() OVER (PARTITION BY c.subscription_id ORDER BY c.next_attempt_at, c.id) AS rn
       FROM candidates c LEFT JOIN busy b ON b.subscription_id = c.subscription_id
     ),
     chosen AS (
       SELECT id FROM ranked WHERE rn + in_flight <= $7 ORDER BY next_attempt_at, id LIMIT $8
     )
     UPDATE webhook_deliveries d
     SET locked_by = $1,
         locked_until = now() + $2 * interval '1 millisecond',
         next_attempt_at = now() + $2 * interval '1 millisecond',
         updated_at = now()
     FROM chosen, webhook_events e, webhook_subscriptions s
     WHERE d.id = chosen.id AND e.id = d.event_id AND s.id = d.subscription_id
     RETURNING d.id, d.event_id, d.subscription_id, d.organisation_id, d.round, d.attempts_in_round,
               e.public_id AS event_public_id, e.payload,
               s.status AS subscription_status, s.endpoint_url, s.signing_secret_sealed, s.max_retries`,
    [
      input.workerId,
      input.leaseMs,
      busyIds,
      busyCounts,
      saturated,
      scanLimit,
      input.perSubscription,
      input.limit,
    ],
  );
  return result.rows;
}

export interface SubscriptionForSend {
  status: string;
  endpoint_url: string;
  signing_secret_sealed: string;
  max_retries: number;
}

/**
 * The subscription as it is now, read immediately before a request is signed and sent (D10, D9): a
 * rotate-secret, pause, delete or URL change committed after the claim applies to this very request, not
 * only to the next one. One primary-key lookup, no lock: the request goes out outside any transaction,
 * and what commits after this read applies from the next attempt. Undefined if the row is gone.
 */
export async function readSubscriptionForSend(
  db: Queryable,
  subscriptionId: string,
): Promise<SubscriptionForSend | undefined> {
  const result = await db.query<SubscriptionForSend>(
    `SELECT status, endpoint_url, signing_secret_sealed, max_retries
     FROM webhook_subscriptions WHERE id = $1`,
    [subscriptionId],
  );
  return result.rows[0];
}

/**
 * The subscription's status inside a give-up transaction (D10: given up only if it is not active when the
 * attempt falls due). FOR SHARE holds the status until commit, so a re-activation either commits first and
 * is seen here (nothing is given up) or waits and applies to later deliveries. Taken after the event and
 * delivery locks, the order recordAttempt uses; it does not conflict with the foreign-key KEY SHARE lock
 * of the attempt insert. Undefined if the row is gone.
 */
export async function subscriptionStatusForGiveUp(
  db: Queryable,
  subscriptionId: string,
): Promise<string | undefined> {
  const result = await db.query<{ status: string }>(
    'SELECT status FROM webhook_subscriptions WHERE id = $1 FOR SHARE',
    [subscriptionId],
  );
  return result.rows[0]?.status;
}

/**
 * Milliseconds until the next delivery falls due (expired leases included; 0 when one is due now),
 * ignoring saturated subscriptions; undefined when nothing is pending. Computed by the database so that
 * worker clocks do not matter.
 */
export async function nextDueInMs(db: Queryable, saturated: string[]): Promise<number | undefined> {
  const result = await db.query<{ ms: number | null }>(
    `SELECT greatest(0, ceil(extract(epoch FROM min(next_attempt_at) - clock_timestamp()) * 1000))::bigint AS ms
     FROM webhook_deliveries
     WHERE state = 'pending' AND NOT (subscription_id = ANY($1::uuid[]))`,
    [saturated],
  );
  return result.rows[0]?.ms ?? undefined;
}

/** Graceful stop: hands unfinished deliveries back, due now, for any worker. */
export async function releaseLeases(db: Queryable, workerId: string, ids: number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await db.query(
    `UPDATE webhook_deliveries
     SET locked_by = NULL, locked_until = NULL, next_attempt_at = now(), updated_at = now()
     WHERE id = ANY($1::bigint[]) AND locked_by = $2 AND state = 'pending'`,
    [ids, workerId],
  );
  return result.rowCount ?? 0;
}

/**
 * Locks the event row for the outcome transaction: outcomes of one event are recorded one at a time, so
 * its status is recomputed from every delivery's latest state and attempt numbers never collide (two
 * rounds of one event may hold deliveries to the same subscription at once).
 * Row locks here are FOR NO KEY UPDATE: they serialise the outcome transactions among themselves but do
 * not conflict with the FOR KEY SHARE locks that foreign keys take when attempts are inserted (a FOR
 * UPDATE would deadlock two transactions that each inserted an attempt first).
 */
export async function lockEvent(db: Queryable, eventId: number): Promise<{ current_round: number }> {
  const result = await db.query<{ current_round: number }>(
    'SELECT current_round FROM webhook_events WHERE id = $1 FOR NO KEY UPDATE',
    [eventId],
  );
  return result.rows[0]!;
}

/**
 * Fencing: the delivery, only while this worker's lease still holds. A worker whose lease ran out (and
 * whose delivery another worker may have claimed) gets nothing and records nothing.
 */
export async function fenceDelivery(
  db: Queryable,
  deliveryId: number,
  workerId: string,
): Promise<{ attempts_in_round: number } | undefined> {
  const result = await db.query<{ attempts_in_round: number }>(
    `SELECT attempts_in_round FROM webhook_deliveries
     WHERE id = $1 AND locked_by = $2 AND locked_until > now() AND state = 'pending'
     FOR NO KEY UPDATE`,
    [deliveryId, workerId],
  );
  return result.rows[0];
}

export interface PendingAttempt {
  id: number;
  http_status_code: number | null;
  failure_reason: string | null;
}

/** The delivery's attempt still waiting for its retry, if any. */
export async function findPendingAttempt(
  db: Queryable,
  deliveryId: number,
): Promise<PendingAttempt | undefined> {
  const result = await db.query<PendingAttempt>(
    `SELECT id, http_status_code, failure_reason FROM webhook_delivery_attempts
     WHERE delivery_id = $1 AND status = 'pending_retry'`,
    [deliveryId],
  );
  return result.rows[0];
}

/** A pending_retry attempt settles: final status, next_retry_at cleared (D10). */
export async function settleAttempt(
  db: Queryable,
  attemptId: number,
  status: 'failed' | 'timeout',
  failureReason: string | null,
): Promise<void> {
  await db.query(
    `UPDATE webhook_delivery_attempts
     SET status = $2, next_retry_at = NULL, failure_reason = coalesce($3, failure_reason), updated_at = now()
     WHERE id = $1`,
    [attemptId, status, failureReason],
  );
}

export interface NewAttempt {
  delivery_id: number;
  event_id: number;
  subscription_id: string;
  organisation_id: string;
  status: 'success' | 'failed' | 'timeout' | 'pending_retry';
  http_status_code: number | null;
  latency_ms: number;
  request_headers: Record<string, string>;
  response_body_snippet: string;
  failure_reason: string | null;
  /** Milliseconds from now to next_retry_at; null unless pending_retry. */
  retry_delay_ms: number | null;
}

/**
 * Inserts an attempt numbered after every earlier attempt of the same event and subscription, across
 * rounds (D10). Runs under the event lock, so the numbering cannot race.
 */
export async function insertAttempt(
  db: Queryable,
  attempt: NewAttempt,
): Promise<{ id: number; attempt_number: number }> {
  const result = await db.query<{ id: number; attempt_number: number }>(
    `INSERT INTO webhook_delivery_attempts
       (delivery_id, event_id, subscription_id, organisation_id, attempt_number, status, http_status_code,
        latency_ms, request_headers, response_body_snippet, failure_reason, next_retry_at)
     VALUES ($1, $2, $3, $4,
       (SELECT coalesce(max(attempt_number), 0) + 1 FROM webhook_delivery_attempts
        WHERE event_id = $2 AND subscription_id = $3),
       $5, $6, $7, $8, $9, $10,
       CASE WHEN $11::bigint IS NULL THEN NULL ELSE now() + $11::bigint * interval '1 millisecond' END)
     RETURNING id, attempt_number`,
    [
      attempt.delivery_id,
      attempt.event_id,
      attempt.subscription_id,
      attempt.organisation_id,
      attempt.status,
      attempt.http_status_code,
      attempt.latency_ms,
      JSON.stringify(attempt.request_headers),
      attempt.response_body_snippet,
      attempt.failure_reason,
      attempt.retry_delay_ms,
    ],
  );
  return result.rows[0]!;
}

/** Moves the delivery on and drops the lease: succeeded, exhausted, or pending again after a delay. */
export async function updateDelivery(
  db: Queryable,
  deliveryId: number,
  change: { state: 'pending' | 'succeeded' | 'exhausted'; attemptsInRound: number; delayMs: number },
): Promise<void> {
  await db.query(
    `UPDATE webhook_deliveries
     SET state = $2, attempts_in_round = $3, next_attempt_at = now() + $4 * interval '1 millisecond',
         locked_by = NULL, locked_until = NULL, updated_at = now()
     WHERE id = $1`,
    [deliveryId, change.state, change.attemptsInRound, change.delayMs],
  );
}

/**
 * After a completed request: last_delivery_at = its completion time (the latest wins when workers
 * finish out of order), consecutive_failures +1 or reset by a success, and at the threshold an `active`
 * subscription becomes `auto_disabled` (contract section 3, D10).
 */
export async function recordSubscriptionResult(
  db: Queryable,
  subscriptionId: string,
  success: boolean,
  autoDisableAfter: number,
): Promise<{ auto_disabled: boolean }> {
  // One plain UPDATE (no locking CTE): the row lock is taken once, by the statement that changes it.
  // `auto_disabled` is true for the update that took the subscription to the threshold while active.
  // Every delivery to an endpoint records here, so the row is hot. A success that changes nothing but
  // last_delivery_at writes it at most once a second (the WHERE clause: an UPDATE that matches no row
  // locks nothing); failures and the reset of consecutive_failures always write. last_delivery_at is
  // therefore exact to within a second under load, and exact otherwise.
  const result = await db.query<{ auto_disabled: boolean }>(
    `UPDATE webhook_subscriptions s
     SET consecutive_failures = CASE WHEN $2 THEN 0 ELSE s.consecutive_failures + 1 END,
         status = CASE WHEN NOT $2 AND s.status = 'active' AND s.consecutive_failures + 1 >= $3
                       THEN 'auto_disabled' ELSE s.status END,
         last_delivery_at = greatest(s.last_delivery_at, clock_timestamp()),
         updated_at = now()
     WHERE s.id = $1
       AND (NOT $2 OR s.consecutive_failures <> 0 OR s.last_delivery_at IS NULL
            OR s.last_delivery_at < clock_timestamp() - interval '1 second')
     RETURNING (NOT $2 AND s.status = 'auto_disabled' AND s.consecutive_failures = $3) AS auto_disabled`,
    [subscriptionId, success, autoDisableAfter],
  );
  return { auto_disabled: result.rows[0]?.auto_disabled ?? false };
}

/**
 * Event status over the deliveries of its current round (D10): any exhausted → dead_letter; all
 * succeeded → delivered; some succeeded → partially_delivered; else failed. Touches the row only when
 * the status changes.
 */
export async function recomputeEventStatus(db: Queryable, eventId: number): Promise<string> {
  const result = await db.query<{ status: string }>(
    `WITH summary AS (
       SELECT CASE
                WHEN bool_or(d.state = 'exhausted') THEN 'dead_letter'
                WHEN bool_and(d.state = 'succeeded') THEN 'delivered'
                WHEN bool_or(d.state = 'succeeded') THEN 'partially_delivered'
                ELSE 'failed'
              END AS status
       FROM webhook_events e JOIN webhook_deliveries d ON d.event_id = e.id AND d.round = e.current_round
       WHERE e.id = $1
     ),
     changed AS (
       UPDATE webhook_events e SET status = summary.status, updated_at = now()
       FROM summary
       WHERE e.id = $1 AND summary.status IS NOT NULL AND e.status <> summary.status
       RETURNING e.status
     )
     SELECT coalesce((SELECT status FROM changed), (SELECT status FROM webhook_events WHERE id = $1)) AS status`,
    [eventId],
  );
  return result.rows[0]!.status;
}

/** Queue gauges: pending deliveries, and the age of the oldest one that is due (0 when none). */
export async function queueStats(db: Queryable): Promise<{ depth: number; lagSeconds: number }> {
  const result = await db.query<{ depth: number; lag_seconds: number | null }>(
    `SELECT count(*)::int AS depth,
            extract(epoch FROM now() - min(next_attempt_at) FILTER (WHERE next_attempt_at <= now()))::float8
              AS lag_seconds
     FROM webhook_deliveries WHERE state = 'pending'`,
  );
  const row = result.rows[0];
  return { depth: row?.depth ?? 0, lagSeconds: row?.lag_seconds ?? 0 };
}
