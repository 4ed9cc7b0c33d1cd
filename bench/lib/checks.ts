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
