// SQL of the durable timers (D21).
import type { Queryable } from '../../db/pool.ts';

/** NOTIFY channel: a transaction that schedules a job wakes the runners at its commit. */
export const JOBS_CHANNEL = 'payment_jobs';

export interface JobRow {
  id: number;
  kind: string;
  payload: Record<string, unknown>;
  attempts: number;
}

export interface NewJob {
  kind: string;
  payload: Record<string, unknown>;
  runAt: Date;
  /** At most one pending job per key: scheduling it again changes nothing. */
  dedupeKey?: string;
}

/**
 * Longest a runner sleeps without a notification (runner.ts). A job due later than this needs no wake-up:
 * every runner looks again before it falls due. NOTIFY serialises the commits of the transactions that
 * send it, so expiry timers (minutes to days ahead) do not send one.
 */
export const RUNNER_MAX_IDLE_MS = 5_000;

/**
 * A job insert from the rows of `source` (a SELECT of kind, payload, run_at, dedupe_key), for a statement
 * that writes a resource and schedules its timer at once (a data-modifying WITH). It wakes no runner: only
 * for jobs due later than RUNNER_MAX_IDLE_MS.
 */
export const insertJobsFrom = (source: string): string =>
  `INSERT INTO jobs (kind, payload, run_at, dedupe_key) ${source} ON CONFLICT (dedupe_key) DO NOTHING`;

/** The statement that removes the pending job of a dedupe key (see deleteJobByKey), for a WITH. */
export const deleteJobOfKey = (dedupeKey: string): string =>
  `DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE dedupe_key = ${dedupeKey} FOR UPDATE SKIP LOCKED)`;

/** Inserts the job (unless its dedupe key is pending), waking the runners if it is due soon; true if inserted. */
export async function insertJob(db: Queryable, job: NewJob): Promise<boolean> {
  const soon = job.runAt.getTime() - Date.now() < RUNNER_MAX_IDLE_MS;
  const result = await db.query({
    name: soon ? 'jobs.insert_notify' : 'jobs.insert',
    text: `WITH inserted AS (
             ${insertJobsFrom('VALUES ($1, $2, $3, $4)')}
             RETURNING id
           )
           SELECT ${soon ? `pg_notify('${JOBS_CHANNEL}', '')` : '1'} FROM inserted`,
    values: [job.kind, job.payload, job.runAt, job.dedupeKey ?? null],
  });
  return result.rowCount === 1;
}

/**
 * Makes the pending job of the dedupe key due now and wakes the runners; true if there was one to move. A
 * job a runner has claimed is left to it, as deleteJobByKey leaves it.
 */
export async function runJobNow(db: Queryable, dedupeKey: string): Promise<boolean> {
  const result = await db.query(
    `WITH moved AS (
       UPDATE jobs SET run_at = now()
        WHERE id IN (SELECT id FROM jobs WHERE dedupe_key = $1 FOR UPDATE SKIP LOCKED)
        RETURNING id
     )
     SELECT pg_notify('${JOBS_CHANNEL}', '') FROM moved`,
    [dedupeKey],
  );
  return result.rowCount === 1;
}

/** Whether a job of the dedupe key is pending, as the caller's snapshot sees it (a job being run counts). */
export async function jobPending(db: Queryable, dedupeKey: string): Promise<boolean> {
  const result = await db.query('SELECT 1 FROM jobs WHERE dedupe_key = $1', [dedupeKey]);
  return result.rowCount === 1;
}

/**
 * Removes a pending job by its dedupe key (a funded transfer's expiry, say); true if there was one. A job a
 * runner has claimed is left to it: the runner holds the job's row and then locks the resource, while the
 * caller already holds the resource, so waiting for the row would deadlock. The caller's change commits
 * first and the job, finding its resource moved on, does nothing (every handler checks the state first).
 */
export async function deleteJobByKey(db: Queryable, dedupeKey: string): Promise<boolean> {
  const result = await db.query({
    name: 'jobs.delete_by_key',
    text: deleteJobOfKey('$1'),
    values: [dedupeKey],
  });
  return (result.rowCount ?? 0) > 0;
}

/**
 * Claims up to `limit` due jobs for the caller's connection with session advisory locks (the Que pattern):
 * another runner skips them, and they are released by `releaseClaims` or when the connection goes (a
 * runner that dies leaves its jobs to the others at once). A claim locks no row, so each job can then run
 * in a transaction of its own on the same connection: one commit's locks never wait on the next job's.
 */
export async function claimDueJobs(db: Queryable, kinds: string[], limit: number): Promise<JobRow[]> {
  const result = await db.query<JobRow>({
    name: 'jobs.claim',
    // Locks are tried in due order on the first due rows only until `limit` are held (no sort above the
    // lock: a lock taken on a row not returned would hold that job back until the claims are released).
    text: `SELECT id, kind, payload, attempts FROM (
             SELECT id, kind, payload, attempts FROM jobs
             WHERE run_at <= now() AND kind = ANY($1::text[]) ORDER BY run_at, id LIMIT $2 * 4
           ) AS due
           WHERE pg_try_advisory_lock(${CLAIM_KEY_BASE}::bigint | id)
           LIMIT $2`,
    values: [kinds, limit],
  });
  return result.rows;
}

/** Advisory lock keys of job claims: the job id with bit 62 set, apart from the service's other keys. */
const CLAIM_KEY_BASE = '4611686018427387904';

/** Releases the connection's claims (every session advisory lock it holds). */
export async function releaseClaims(db: Queryable): Promise<void> {
  await db.query({ name: 'jobs.release_claims', text: 'SELECT pg_advisory_unlock_all()' });
}

/** Deletes the job; false if it is gone (cancelled since its claim, or run by another runner). */
export async function deleteJob(db: Queryable, id: number): Promise<boolean> {
  const result = await db.query({
    name: 'jobs.delete',
    text: 'DELETE FROM jobs WHERE id = $1',
    values: [id],
  });
  return result.rowCount === 1;
}

export async function retryJobLater(
  db: Queryable,
  id: number,
  delayMs: number,
  error: string,
): Promise<void> {
  await db.query({
    name: 'jobs.retry',
    text: `UPDATE jobs SET attempts = attempts + 1, last_error = $3,
             run_at = now() + make_interval(secs => $2::double precision / 1000)
           WHERE id = $1`,
    values: [id, delayMs, error],
  });
}

/**
 * Milliseconds until the earliest job of these kinds falls due (0 when one is due), or undefined with none
 * pending.
 */
export async function msUntilNextJob(db: Queryable, kinds: string[]): Promise<number | undefined> {
  const result = await db.query<{ ms: number | null }>({
    name: 'jobs.next_due',
    text: `SELECT GREATEST(0, EXTRACT(EPOCH FROM (min(run_at) - now())) * 1000)::float8 AS ms FROM jobs
           WHERE kind = ANY($1::text[])`,
    values: [kinds],
  });
  const ms = result.rows[0]?.ms;
  return ms === null || ms === undefined ? undefined : ms;
}

export interface JobBacklog {
  kind: string;
  due: number;
  oldestDueSeconds: number;
  retrying: number;
}

/**
 * Per kind: jobs due (their time has come, running or not), how long the oldest of them has been due, and
 * jobs that failed and wait to run again. Reads only those rows, through jobs_due_idx and
 * jobs_retrying_idx: the jobs table also holds every timer far ahead (a day's deposit expiries).
 */
export async function jobBacklog(db: Queryable): Promise<JobBacklog[]> {
  const result = await db.query<JobBacklog>({
    name: 'jobs.backlog',
    text: `SELECT kind,
                  (count(*) FILTER (WHERE run_at <= now()))::int AS due,
                  coalesce(EXTRACT(EPOCH FROM now() - min(run_at) FILTER (WHERE run_at <= now())), 0)::float8
                    AS "oldestDueSeconds",
                  (count(*) FILTER (WHERE attempts > 0))::int AS retrying
           FROM jobs WHERE run_at <= now() OR attempts > 0
           GROUP BY kind`,
  });
  return result.rows;
}
