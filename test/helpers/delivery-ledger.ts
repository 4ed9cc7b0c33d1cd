// The books of a delivery run, checked against what the receiver actually saw (issue 7): every delivery
// reached its final state, no attempt was recorded twice, each delivery's attempts match its
// attempts_in_round, and every delivery that succeeded was received (its `webhook-id` on its endpoint).
import type { Pool } from '../../src/db/pool.ts';
import type { ReceivedRequest } from './https-receiver.ts';

export interface DeliveryLedgerRow {
  delivery_id: number;
  event_id: number;
  event_public_id: string;
  event_status: string;
  subscription_id: string;
  endpoint_path: string;
  state: string;
  round: number;
  attempts_in_round: number;
  locked_by: string | null;
  /** Attempt rows of this delivery. */
  attempts: number;
  successes: number;
  pending_retries: number;
  /** Highest attempt_number of the delivery's rows (0 without any). */
  max_attempt_number: number;
  /** Attempt statuses in attempt_number order. */
  statuses: string[];
  /** HTTP status codes in attempt_number order (null: none). */
  http_status_codes: (number | null)[];
  /** failure_reason in attempt_number order (null: none). */
  failure_reasons: (string | null)[];
  /** Requests the receiver got for this delivery (same `webhook-id` on the same endpoint path). */
  received: number;
}

export interface DeliveryLedger {
  rows: DeliveryLedgerRow[];
  /** (event_id, subscription_id, attempt_number) groups holding more than one row. */
  duplicateAttemptNumbers: number;
  /** Deliveries whose attempt rows do not number 1..n without a gap, or n differs from attempts_in_round. */
  countMismatches: DeliveryLedgerRow[];
  /** Deliveries with more than one `success` attempt. */
  doubleSuccesses: DeliveryLedgerRow[];
  /** Succeeded deliveries the receiver never saw. */
  succeededButNotReceived: DeliveryLedgerRow[];
  /** Deliveries the receiver saw more often than attempts were recorded (a request whose outcome was lost). */
  receivedMoreThanRecorded: DeliveryLedgerRow[];
  /** Requests the receiver got that match no delivery of the organisation. */
  strayRequests: number;
  /** Count of deliveries per state, e.g. { succeeded: 5000 }. */
  deliveryStates: Record<string, number>;
  /** Count of events per status, e.g. { delivered: 500 }. */
  eventStatuses: Record<string, number>;
}

/** The endpoint path a receiver sees for a subscription URL (`https://127.0.0.1:1234/s3` → `/s3`). */
const pathOf = (url: string) => new URL(url).pathname;

export async function readLedger(
  pool: Pool,
  organisationId: string,
  requests: readonly ReceivedRequest[],
): Promise<DeliveryLedger> {
  const result = await pool.query<
    Omit<DeliveryLedgerRow, 'received' | 'endpoint_path'> & { endpoint_url: string }
  >(
    `SELECT d.id AS delivery_id, d.event_id, e.public_id AS event_public_id, e.status AS event_status,
            d.subscription_id, s.endpoint_url, d.state, d.round, d.attempts_in_round, d.locked_by,
            count(a.id)::int AS attempts,
            (count(a.id) FILTER (WHERE a.status = 'success'))::int AS successes,
            (count(a.id) FILTER (WHERE a.status = 'pending_retry'))::int AS pending_retries,
            coalesce(max(a.attempt_number), 0)::int AS max_attempt_number,
            coalesce(array_agg(a.status ORDER BY a.attempt_number) FILTER (WHERE a.id IS NOT NULL), '{}') AS statuses,
            coalesce(array_agg(a.http_status_code ORDER BY a.attempt_number) FILTER (WHERE a.id IS NOT NULL), '{}')
              AS http_status_codes,
            coalesce(array_agg(a.failure_reason ORDER BY a.attempt_number) FILTER (WHERE a.id IS NOT NULL), '{}')
              AS failure_reasons
     FROM webhook_deliveries d
     JOIN webhook_events e ON e.id = d.event_id
     JOIN webhook_subscriptions s ON s.id = d.subscription_id
     LEFT JOIN webhook_delivery_attempts a ON a.delivery_id = d.id
     WHERE d.organisation_id = $1
     GROUP BY d.id, e.id, s.id
     ORDER BY d.id`,
    [organisationId],
  );
  const duplicates = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (
       SELECT 1 FROM webhook_delivery_attempts WHERE organisation_id = $1
       GROUP BY event_id, subscription_id, attempt_number HAVING count(*) > 1
     ) t`,
    [organisationId],
  );
  const hits = new Map<string, number>();
  for (const request of requests) {
    const key = `${request.path} ${String(request.headers['webhook-id'])}`;
    hits.set(key, (hits.get(key) ?? 0) + 1);
  }
  const matched = new Set<string>();
  const rows: DeliveryLedgerRow[] = result.rows.map(({ endpoint_url, ...row }) => {
    const key = `${pathOf(endpoint_url)} ${row.event_public_id}`;
    matched.add(key);
    return { ...row, endpoint_path: pathOf(endpoint_url), received: hits.get(key) ?? 0 };
  });
  const tally = (values: string[]) =>
    values.reduce<Record<string, number>>((counts, value) => {
      counts[value] = (counts[value] ?? 0) + 1;
      return counts;
    }, {});
  const events = new Map(rows.map((row) => [row.event_id, row.event_status]));
  // Several rounds of one event and subscription share the numbering; this check is per single round.
  const singleRound = rows.every((row) => row.round === 1);
  return {
    rows,
    duplicateAttemptNumbers: duplicates.rows[0]!.n,
    countMismatches: rows.filter(
      (row) =>
        row.attempts !== row.attempts_in_round || (singleRound && row.max_attempt_number !== row.attempts),
    ),
    doubleSuccesses: rows.filter((row) => row.successes > 1),
    succeededButNotReceived: rows.filter((row) => row.state === 'succeeded' && row.received === 0),
    receivedMoreThanRecorded: rows.filter((row) => row.received > row.attempts),
    strayRequests: [...hits].filter(([key]) => !matched.has(key)).reduce((sum, [, n]) => sum + n, 0),
    deliveryStates: tally(rows.map((row) => row.state)),
    eventStatuses: tally([...events.values()]),
  };
}

/** Polls the count of deliveries of the organisation in `state`, tolerating a database that is away. */
export async function countDeliveries(pool: Pool, organisationId: string, state: string): Promise<number> {
  const result = await pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM webhook_deliveries WHERE organisation_id = $1 AND state = $2',
    [organisationId, state],
  );
  return result.rows[0]!.n;
}

/** Polls until `check` returns a value; errors (a restarting database) count as "not yet". */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  message: string,
  timeoutMs: number,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${message}${lastError ? ` (last error: ${String(lastError)})` : ''}`,
      );
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
