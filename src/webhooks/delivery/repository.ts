// SQL of the delivery engine (D10). The delivery row is the job: it is due when state = 'pending' and
// next_attempt_at <= now(); a worker holds it with a lease (locked_by, locked_until).
// The statements a busy worker runs many times a second are named: node-postgres prepares each once per
// connection, and PostgreSQL parses it once instead of on every call.
import type { Queryable } from '../../db/pool.ts';

export interface ClaimedDelivery {
  id: number;
  event_id: number;
  subscription_id: string;
  organisation_id: string;
  round: number;
  attempts_in_round: number;
  event_public_id: string;
  /** As stored (sealed) when claimed; prepareDeliveries opens it for the request. */
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
  /**
   * Deliveries this worker still holds (a request open, or an outcome waiting to be recorded). One whose
   * lease ran out meanwhile is due again for other workers, but not for this one: it would send it a
   * second time while its first outcome is still on its way, under the same fencing identity.
   */
  held?: readonly number[];
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
 *   again immediately before sending (readSubscriptionsForSend), so a change committed after the claim
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
  // Candidates are locked as they are scanned (SKIP LOCKED), and each lock is a WAL record: scan more than
  // `limit` only when the per-subscription cap can leave candidates out.
  const scanLimit = input.perSubscription >= input.limit ? input.limit : Math.max(input.limit * 4, 100);
  const result = await db.query<ClaimedDelivery>({
    name: 'delivery.claim',
    text: `WITH busy AS (
       SELECT * FROM unnest($3::uuid[], $4::int[]) AS b(subscription_id, in_flight)
     ),
     candidates AS (
       SELECT id, subscription_id, next_attempt_at FROM webhook_deliveries
       WHERE state = 'pending' AND next_attempt_at <= now() AND NOT (subscription_id = ANY($5::uuid[]))
         AND id <> ALL($9::bigint[])
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
     FROM webhook_events e, webhook_subscriptions s
     WHERE d.id = ANY(ARRAY(SELECT id FROM chosen)) AND e.id = d.event_id AND s.id = d.subscription_id
     RETURNING d.id, d.event_id, d.subscription_id, d.organisation_id, d.round, d.attempts_in_round,
               e.public_id AS event_public_id, e.payload,
               s.status AS subscription_status, s.endpoint_url, s.signing_secret_sealed, s.max_retries`,
    values: [
      input.workerId,
      input.leaseMs,
      busyIds,
      busyCounts,
      saturated,
      scanLimit,
      input.perSubscription,
      input.limit,
      input.held ?? [],
    ],
  });
  return result.rows;
}

export interface SubscriptionForSend {
  id: string;
  status: string;
  endpoint_url: string;
  signing_secret_sealed: string;
  max_retries: number;
}

/**
 * The subscriptions as they are now, read immediately before requests are signed and sent (D10, D9): a
 * rotate-secret, pause, delete or URL change committed after the claim applies to these very requests,
 * not only to the next ones. One primary-key lookup for a whole claim, no lock: the requests go out
 * outside any transaction, and what commits after this read applies from the next attempt. A row that is
 * gone is missing from the result.
 */
export async function readSubscriptionsForSend(
  db: Queryable,
  subscriptionIds: readonly string[],
): Promise<SubscriptionForSend[]> {
  const result = await db.query<SubscriptionForSend>({
    name: 'delivery.read_subscriptions',
    text: `SELECT id, status, endpoint_url, signing_secret_sealed, max_retries
     FROM webhook_subscriptions WHERE id = ANY($1::uuid[])`,
    values: [subscriptionIds],
  });
  return result.rows;
}

/**
 * The subscription's status inside a give-up transaction (D10: given up only if it is not active when the
 * attempt falls due). FOR SHARE holds the status until commit, so a re-activation either commits first and
 * is seen here (nothing is given up) or waits and applies to later deliveries. Taken after the event and
 * delivery locks, the order recordAttempts uses; it does not conflict with the foreign-key KEY SHARE lock
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
  // Clamped here, not with greatest(0, ...): GREATEST ignores a NULL, so with nothing pending it answered 0
  // ("due now") and an idle worker claimed again every BUSY_RETRY_MS.
  const result = await db.query<{ ms: number | null }>(
    `SELECT ceil(extract(epoch FROM min(next_attempt_at) - clock_timestamp()) * 1000)::bigint AS ms
     FROM webhook_deliveries
     WHERE state = 'pending' AND NOT (subscription_id = ANY($1::uuid[]))`,
    [saturated],
  );
  const ms = result.rows[0]?.ms ?? null;
  return ms === null ? undefined : Math.max(0, ms);
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

// Recording outcomes (D10). Every function below takes a set of rows, so that one transaction records
// many outcomes (group commit): a worker's statements per delivery shrink from about ten to a fraction
// of one. Rows are passed as one JSON document (json_to_recordset), which keeps the SQL readable and
// the parameter count fixed. Row locks are taken in id order (events, then deliveries, then
// subscriptions), the same order in every transaction that takes more than one, so batches of several
// workers cannot deadlock each other.
//
// ROWS_BY_ID: a statement that joins a table to json_to_recordset also filters the table by the ids as an
// array. The planner cannot see how many rows the JSON holds (it assumes 100), and on a table of a few
// tens of thousands of rows it then hashes a sequential scan of the whole table: EXPLAIN showed the
// deliveries update of a 64-outcome batch reading all 20,000 rows (5.3 ms; 1.4 ms with the array), and
// the cost grows with the table. `id = ANY($n)` is an index scan whatever the table's size.

/**
 * Locks the events' rows for the outcome transaction: outcomes of one event are recorded one transaction at
 * a time, so its status is recomputed from every delivery's latest state and attempt numbers never collide
 * (two rounds of one event may hold deliveries to the same subscription at once).
 * Row locks here are FOR NO KEY UPDATE: they serialise the outcome transactions among themselves but do
 * not conflict with the FOR KEY SHARE locks that foreign keys take when attempts are inserted (a FOR
 * UPDATE would deadlock two transactions that each inserted an attempt first).
 */
export async function lockEvents(db: Queryable, eventIds: readonly number[]): Promise<void> {
  await db.query({
    name: 'delivery.lock_events',
    text: 'SELECT id FROM webhook_events WHERE id = ANY($1::bigint[]) ORDER BY id FOR NO KEY UPDATE',
    values: [eventIds],
  });
}

export interface FencedDelivery {
  id: number;
  attempts_in_round: number;
  /** The delivery's attempt still waiting for its retry, if any. */
  pending_attempt_id: number | null;
  pending_http_status_code: number | null;
  pending_failure_reason: string | null;
}

/**
 * Fencing: the deliveries, among `deliveryIds`, whose lease this worker still holds, locked, with their
 * pending_retry attempt. A worker whose lease ran out (and whose delivery another worker may have
 * claimed) gets nothing for that delivery and records nothing.
 */
export async function fenceDeliveries(
  db: Queryable,
  deliveryIds: readonly number[],
  workerId: string,
): Promise<FencedDelivery[]> {
  const result = await db.query<FencedDelivery>({
    name: 'delivery.fence',
    text: `SELECT d.id, d.attempts_in_round, p.id AS pending_attempt_id,
            p.http_status_code AS pending_http_status_code, p.failure_reason AS pending_failure_reason
     FROM webhook_deliveries d
     LEFT JOIN webhook_delivery_attempts p ON p.delivery_id = d.id AND p.status = 'pending_retry'
     WHERE d.id = ANY($1::bigint[]) AND d.locked_by = $2 AND d.locked_until > now() AND d.state = 'pending'
     ORDER BY d.id
     FOR NO KEY UPDATE OF d`,
    values: [deliveryIds, workerId],
  });
  return result.rows;
}

export interface AttemptSettlement {
  id: number;
  status: 'failed' | 'timeout';
  /** Replaces the attempt's failure_reason when set. */
  failure_reason: string | null;
}

/** pending_retry attempts settle: final status, next_retry_at cleared (D10). */
export async function settleAttempts(
  db: Queryable,
  settlements: readonly AttemptSettlement[],
): Promise<void> {
  if (settlements.length === 0) return;
  await db.query({
    name: 'delivery.settle',
    text: `UPDATE webhook_delivery_attempts a
     SET status = s.status, next_retry_at = NULL, failure_reason = coalesce(s.failure_reason, a.failure_reason),
         updated_at = now()
     FROM json_to_recordset($1::json) AS s(id bigint, status text, failure_reason text)
     WHERE a.id = s.id AND a.id = ANY($2::bigint[]) -- see ROWS_BY_ID`,
    values: [toJson(settlements), settlements.map((settlement) => settlement.id)],
  });
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
 * Inserts attempts, each numbered after every earlier attempt of the same event and subscription, across
 * rounds (D10); two attempts of one batch for the same pair (two rounds) are numbered in batch order.
 * Runs under the events' locks, so the numbering cannot race.
 */
export async function insertAttempts(
  db: Queryable,
  attempts: readonly NewAttempt[],
): Promise<{ id: number; delivery_id: number; attempt_number: number }[]> {
  if (attempts.length === 0) return [];
  const result = await db.query<{ id: number; delivery_id: number; attempt_number: number }>({
    name: 'delivery.insert_attempts',
    text: `INSERT INTO webhook_delivery_attempts
       (delivery_id, event_id, subscription_id, organisation_id, attempt_number, status, http_status_code,
        latency_ms, request_headers, response_body_snippet, failure_reason, next_retry_at)
     SELECT a.delivery_id, a.event_id, a.subscription_id, a.organisation_id,
            coalesce((SELECT max(x.attempt_number) FROM webhook_delivery_attempts x
                      WHERE x.event_id = a.event_id AND x.subscription_id = a.subscription_id), 0)
              + row_number() OVER (PARTITION BY a.event_id, a.subscription_id ORDER BY a.ord),
            a.status, a.http_status_code, a.latency_ms, a.request_headers, a.response_body_snippet,
            a.failure_reason,
            CASE WHEN a.retry_delay_ms IS NULL THEN NULL
                 ELSE now() + a.retry_delay_ms * interval '1 millisecond' END
     FROM json_to_recordset($1::json) AS a(
       ord int, delivery_id bigint, event_id bigint, subscription_id uuid, organisation_id uuid, status text,
       http_status_code int, latency_ms int, request_headers jsonb, response_body_snippet text,
       failure_reason text, retry_delay_ms bigint)
     RETURNING id, delivery_id, attempt_number`,
    values: [toJson(attempts.map((attempt, ord) => ({ ord, ...attempt })))],
  });
  return result.rows;
}

export interface DeliveryChange {
  id: number;
  state: 'pending' | 'succeeded' | 'exhausted';
  attempts_in_round: number;
  /** next_attempt_at = now + this (a retry's delay; 0 otherwise). */
  delay_ms: number;
}

/** Moves deliveries on and drops their leases: succeeded, exhausted, or pending again after a delay. */
export async function updateDeliveries(db: Queryable, changes: readonly DeliveryChange[]): Promise<void> {
  if (changes.length === 0) return;
  await db.query({
    name: 'delivery.update_deliveries',
    text: `UPDATE webhook_deliveries d
     SET state = c.state, attempts_in_round = c.attempts_in_round,
         next_attempt_at = now() + c.delay_ms * interval '1 millisecond',
         locked_by = NULL, locked_until = NULL, updated_at = now()
     FROM json_to_recordset($1::json) AS c(id bigint, state text, attempts_in_round int, delay_ms bigint)
     WHERE d.id = c.id AND d.id = ANY($2::bigint[]) -- see ROWS_BY_ID`,
    values: [toJson(changes), changes.map((change) => change.id)],
  });
}

/** What one transaction's outcomes mean for one subscription (see tallyFailures in outcome.ts). */
export interface SubscriptionTally {
  subscription_id: string;
  succeeded: boolean;
  failures: number;
  failures_before_first_success: number;
  failures_after_last_success: number;
  longest_failure_run_between_successes: number;
}

/**
 * After completed requests, once per subscription: last_delivery_at = now (the latest wins when workers
 * finish out of order), consecutive_failures continued or reset by the tally, and an `active` subscription
 * whose run of failures reached the threshold at any point becomes `auto_disabled` (contract section 3,
 * D10). Returns the ids this call auto-disabled.
 *
 * Every delivery to an endpoint records here, so the row is hot: a tally of successes only, on a row with
 * no failures counted, writes (and locks) it at most once a second, so last_delivery_at is exact to within
 * a second under load, and exact otherwise. Failures and resets always write.
 */
export async function recordSubscriptionResults(
  db: Queryable,
  tallies: readonly SubscriptionTally[],
  autoDisableAfter: number,
): Promise<Set<string>> {
  if (tallies.length === 0) return new Set();
  const result = await db.query<{ id: string; auto_disabled: boolean }>({
    name: 'delivery.subscription_results',
    text: `WITH tally AS (
       SELECT * FROM json_to_recordset($1::json) AS t(
         subscription_id uuid, succeeded boolean, failures int, failures_before_first_success int,
         failures_after_last_success int, longest_failure_run_between_successes int)
     ),
     target AS (
       SELECT s.id, s.status, s.consecutive_failures, t.succeeded, t.failures_before_first_success,
              t.failures_after_last_success, t.longest_failure_run_between_successes
       FROM webhook_subscriptions s JOIN tally t ON t.subscription_id = s.id
       WHERE s.id = ANY($3::uuid[]) -- see ROWS_BY_ID
         AND (t.failures > 0 OR s.consecutive_failures <> 0 OR s.last_delivery_at IS NULL
          OR s.last_delivery_at < clock_timestamp() - interval '1 second')
       ORDER BY s.id
       FOR NO KEY UPDATE OF s
     ),
     next AS (
       SELECT id,
              CASE WHEN succeeded THEN failures_after_last_success
                   ELSE consecutive_failures + failures_before_first_success END AS consecutive_failures,
              status = 'active'
                AND (consecutive_failures + failures_before_first_success >= $2
                     OR longest_failure_run_between_successes >= $2
                     OR (succeeded AND failures_after_last_success >= $2)) AS auto_disable
       FROM target
     )
     UPDATE webhook_subscriptions s
     SET consecutive_failures = n.consecutive_failures,
         status = CASE WHEN n.auto_disable THEN 'auto_disabled' ELSE s.status END,
         last_delivery_at = greatest(s.last_delivery_at, clock_timestamp()),
         updated_at = now()
     FROM next n
     WHERE s.id = n.id
     RETURNING s.id, n.auto_disable AS auto_disabled`,
    values: [toJson(tallies), autoDisableAfter, tallies.map((tally) => tally.subscription_id)],
  });
  return new Set(result.rows.filter((row) => row.auto_disabled).map((row) => row.id));
}

/**
 * Event status over the deliveries of its current round (D10): any exhausted → dead_letter; all
 * succeeded → delivered; some succeeded → partially_delivered; else failed. Touches a row only when its
 * status changes. Returns every given event's status.
 */
export async function recomputeEventStatuses(
  db: Queryable,
  eventIds: readonly number[],
): Promise<Map<number, string>> {
  const result = await db.query<{ id: number; status: string }>({
    name: 'delivery.event_statuses',
    text: `WITH summary AS (
       SELECT e.id,
              CASE
                WHEN bool_or(d.state = 'exhausted') THEN 'dead_letter'
                WHEN bool_and(d.state = 'succeeded') THEN 'delivered'
                WHEN bool_or(d.state = 'succeeded') THEN 'partially_delivered'
                ELSE 'failed'
              END AS status
       FROM webhook_events e JOIN webhook_deliveries d ON d.event_id = e.id AND d.round = e.current_round
       WHERE e.id = ANY($1::bigint[]) AND d.event_id = ANY($1::bigint[]) -- both: index scans on both tables
       GROUP BY e.id
     ),
     changed AS (
       UPDATE webhook_events e SET status = summary.status, updated_at = now()
       FROM summary
       WHERE e.id = summary.id AND e.status <> summary.status
     )
     SELECT id, status FROM summary -- the status each event has now, changed or not`,
    values: [eventIds],
  });
  return new Map(result.rows.map((row) => [row.id, row.status]));
}

/**
 * Rows as one JSON parameter. Text that came from outside (response snippets, error messages) may hold
 * lone UTF-16 surrogates, which PostgreSQL's JSON parser rejects: every string is made well-formed first
 * (a lone surrogate becomes U+FFFD, as it would when sent as a plain text parameter).
 */
function toJson(rows: readonly object[]): string {
  return JSON.stringify(rows, (_key, value: unknown) =>
    typeof value === 'string' ? value.toWellFormed() : value,
  );
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
