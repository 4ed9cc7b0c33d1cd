// What the database says about a delivery run: every delivery succeeded, with one success attempt each.
import type { Pool } from '../../src/db/pool.ts';
import { now, waitUntil } from './util.ts';

export interface DeliverySummary {
  deliveries: number;
  succeeded: number;
  pending: number;
  exhausted: number;
  attempts: number;
  successAttempts: number;
  events: number;
  eventsDelivered: number;
}

export async function deliverySummary(pool: Pool, subscriptionIds?: string[]): Promise<DeliverySummary> {
  const filter = subscriptionIds ? 'WHERE subscription_id = ANY($1::uuid[])' : '';
  const params = subscriptionIds ? [subscriptionIds] : [];
  const deliveries = await pool.query<{
    total: number;
    succeeded: number;
    pending: number;
    exhausted: number;
  }>(
    `SELECT count(*)::int AS total,
            count(*) FILTER (WHERE state = 'succeeded')::int AS succeeded,
            count(*) FILTER (WHERE state = 'pending')::int AS pending,
            count(*) FILTER (WHERE state = 'exhausted')::int AS exhausted
     FROM webhook_deliveries ${filter}`,
    params,
  );
  const attempts = await pool.query<{ total: number; success: number }>(
    `SELECT count(*)::int AS total, count(*) FILTER (WHERE status = 'success')::int AS success
     FROM webhook_delivery_attempts ${filter}`,
    params,
  );
  const events = await pool.query<{ total: number; delivered: number }>(
    `SELECT count(*)::int AS total, count(*) FILTER (WHERE status = 'delivered')::int AS delivered
     FROM webhook_events`,
  );
  const d = deliveries.rows[0]!;
  return {
    deliveries: d.total,
    succeeded: d.succeeded,
    pending: d.pending,
    exhausted: d.exhausted,
    attempts: attempts.rows[0]!.total,
    successAttempts: attempts.rows[0]!.success,
    events: events.rows[0]!.total,
    eventsDelivered: events.rows[0]!.delivered,
  };
}

/** Waits until no delivery (of `subscriptionIds`, if given) is pending; returns when (performance.now()). */
export async function waitForNoPending(
  pool: Pool,
  options: { timeoutMs: number; signal?: AbortSignal; subscriptionIds?: string[] },
): Promise<number> {
  let pending = -1;
  const filter = options.subscriptionIds ? 'AND subscription_id = ANY($1::uuid[])' : '';
  const params = options.subscriptionIds ? [options.subscriptionIds] : [];
  await waitUntil(
    'every delivery recorded in the database',
    async () => {
      const result = await pool.query<{ pending: number }>(
        `SELECT count(*)::int AS pending FROM webhook_deliveries WHERE state = 'pending' ${filter}`,
        params,
      );
      pending = result.rows[0]!.pending;
      return pending === 0;
    },
    {
      timeoutMs: options.timeoutMs,
      intervalMs: 100,
      signal: options.signal,
      progress: () => `${pending} pending`,
    },
  );
  return now();
}

/** Human-readable problems of a summary where every one of `expected` deliveries should have succeeded once. */
export function deliveryProblems(summary: DeliverySummary, expected: number): string[] {
  const problems: string[] = [];
  if (summary.deliveries !== expected)
    problems.push(`${summary.deliveries} deliveries recorded, expected ${expected}`);
  if (summary.succeeded !== expected)
    problems.push(`${summary.succeeded} of ${expected} deliveries succeeded`);
  if (summary.successAttempts !== expected)
    problems.push(`${summary.successAttempts} success attempts, expected ${expected}`);
  if (summary.attempts !== summary.successAttempts)
    problems.push(`${summary.attempts - summary.successAttempts} attempts did not succeed`);
  return problems;
}

/** Transactions committed in the current database so far (pg_stat_database; flushed by exiting backends). */
export async function commitCount(pool: Pool): Promise<number> {
  const result = await pool.query<{ commits: string }>(
    'SELECT xact_commit::text AS commits FROM pg_stat_database WHERE datname = current_database()',
  );
  return Number(result.rows[0]?.commits ?? 0);
}

export interface WaitProfile {
  samples: number;
  /** Active backends of the database seen per wait event (`Lock:transactionid`, `CPU:running`, ...). */
  seen: Record<string, number>;
  /** The most frequent wait event and its share of all active-backend sightings, e.g. "Lock:tuple 62 %". */
  top: string | undefined;
}

/**
 * Samples pg_stat_activity of the current database every `intervalMs` until stopped: what the service's
 * backends are waiting on (a hot row lock shows up as Lock:transactionid / Lock:tuple, round trips as
 * Client:ClientRead). A diagnostic beside the throughput, not a measurement of its own.
 */
export function sampleWaits(pool: Pool, intervalMs = 250): { stop(): Promise<WaitProfile> } {
  const seen: Record<string, number> = {};
  let samples = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        const result = await pool.query<{ wait: string; backends: number }>(
          `SELECT coalesce(wait_event_type, 'CPU') || ':' || coalesce(wait_event, 'running') AS wait,
                  count(*)::int AS backends
           FROM pg_stat_activity
           WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()
           GROUP BY 1`,
        );
        samples++;
        for (const row of result.rows) seen[row.wait] = (seen[row.wait] ?? 0) + row.backends;
      } catch {
        // A sample lost (the database being dropped at the end): the profile is a diagnostic.
      }
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      const total = Object.values(seen).reduce((sum, count) => sum + count, 0);
      const [name, count] = Object.entries(seen).sort((a, b) => b[1] - a[1])[0] ?? [];
      return {
        samples,
        seen,
        top: name && total > 0 ? `${name} ${Math.round(((count ?? 0) * 100) / total)} %` : undefined,
      };
    },
  };
}
