// Durable timers (D21): quote, transfer and deposit expiries and the sandbox's steps run in the worker
// role from job rows in PostgreSQL. A runner claims a batch of due jobs with session advisory locks, then
// runs each in a transaction of its own that deletes it first: its effects and its removal commit
// together, a worker that dies mid-way rolls both back and its claims go with its connection, and no two
// workers run one job at once (the claim keeps other runners away; the delete decides). One transaction
// per job, because a job holding the previous job's locks (a payout, a balance) while it takes the next
// one's deadlocks with a client's request that takes them the other way.
//
// A table of our own rather than graphile-worker or pg-boss: those run jobs outside the caller's
// transaction (at-least-once, with a lease), keep their own schema and migrations beside ours, and
// graphile-worker's installer needs a database role allowed to create a schema; a job that must commit
// with the state change it makes needs neither.
import type { Logger } from 'pino';
import { listenOnChannel } from '../../db/listen.ts';
import { type PoolClient, withTransaction } from '../../db/pool.ts';
import type { GaugeGroup, JobHandler } from '../area.ts';
import type { AppDeps } from '../deps.ts';
import { purgeExpiredKeys } from '../idempotency.ts';
import { readingsByLabel } from '../metrics.ts';
import * as repo from './repository.ts';

export interface JobRunner {
  stop(): Promise<void>;
  /** Looks for due jobs now (tests). */
  wake(): void;
}

export interface JobRunnerOptions {
  /** Jobs claimed at once (each still runs in a transaction of its own). */
  batchSize?: number;
  /** Longest sleep without a notification (a backstop for lost NOTIFYs). */
  maxIdleMs?: number;
  /** Tests: no LISTEN connection. */
  listen?: boolean;
  /** Extra handlers by kind (tests), beside the areas' and the platform's. */
  handlers?: Readonly<Record<string, JobHandler>>;
}

/** Retry delay after a failed run: 1 s, 2 s, 4 s, ... capped at one hour. */
export const retryDelayMs = (attempts: number): number => Math.min(1_000 * 2 ** attempts, 3_600_000);

const PURGE_KIND = 'platform.purge_idempotency_keys';
const PURGE_EVERY_MS = 60 * 60 * 1000;

/** Schedules a job in the caller's transaction (the one making the change the job follows up). */
export async function scheduleJob(tx: PoolClient, job: repo.NewJob): Promise<boolean> {
  return repo.insertJob(tx, job);
}

export const cancelJob = (tx: PoolClient, dedupeKey: string): Promise<boolean> =>
  repo.deleteJobByKey(tx, dedupeKey);

export const jobPending = (tx: PoolClient, dedupeKey: string): Promise<boolean> =>
  repo.jobPending(tx, dedupeKey);

export const runJobNow = (tx: PoolClient, dedupeKey: string): Promise<boolean> =>
  repo.runJobNow(tx, dedupeKey);

/** Platform jobs: expired idempotency keys are purged every hour (D14), by one worker at a time. */
const PLATFORM_JOBS: Readonly<Record<string, JobHandler>> = {
  [PURGE_KIND]: async (tx, _payload, deps) => {
    await purgeExpiredKeys(deps.pool);
    await scheduleJob(tx, {
      kind: PURGE_KIND,
      payload: {},
      runAt: new Date(Date.now() + PURGE_EVERY_MS),
      dedupeKey: PURGE_KIND,
    });
  },
};

/**
 * The durable timers' backlog by kind, for a worker's /metrics: a due job waiting long means expiries and
 * hand-offs run late (too few workers, or none); a retrying one is failing (its `last_error` says why).
 */
export function jobGauges(deps: AppDeps): GaugeGroup {
  const kinds = Object.keys({ ...PLATFORM_JOBS, ...deps.catalogue.jobs });
  return {
    gauges: {
      jobs_due:
        'Durable timer jobs whose time has come and that have not completed (running or waiting for a worker)',
      jobs_due_oldest_seconds:
        'How long the oldest due job has been due: its expiry or hand-off runs this late (0 when none is due)',
      jobs_retrying: 'Jobs that failed and wait to run again (the jobs table keeps the last_error)',
    },
    labelNames: ['kind'],
    async read(db) {
      return readingsByLabel(
        'kind',
        kinds,
        await repo.jobBacklog(db),
        (row) => row.kind,
        (row) => ({
          jobs_due: row?.due ?? 0,
          jobs_due_oldest_seconds: row?.oldestDueSeconds ?? 0,
          jobs_retrying: row?.retrying ?? 0,
        }),
      );
    },
  };
}

/** What a worker process's /metrics reads from storage: the timers' backlog and every area's. */
export const workerGauges = (deps: AppDeps): GaugeGroup[] => [
  jobGauges(deps),
  ...deps.areas.flatMap((area) => area.gauges ?? []),
];

export function startJobRunner(deps: AppDeps, log: Logger, options: JobRunnerOptions = {}): JobRunner {
  const handlers: Readonly<Record<string, JobHandler>> = {
    ...PLATFORM_JOBS,
    ...deps.catalogue.jobs,
    ...options.handlers,
  };
  // A runner claims only the kinds it has handlers for: during a rolling deploy an older worker leaves a
  // newer kind to the workers that know it.
  const kinds = Object.keys(handlers);
  const batchSize = options.batchSize ?? 16;
  const maxIdleMs = Math.min(options.maxIdleMs ?? repo.RUNNER_MAX_IDLE_MS, repo.RUNNER_MAX_IDLE_MS);
  const lanes = deps.config.jobConcurrency;
  let stopped = false;
  const sleepers = new Set<() => void>();
  const wake = () => {
    for (const resume of sleepers) resume();
    sleepers.clear();
  };
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        sleepers.delete(done);
        resolve();
      }, ms);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      sleepers.add(done);
    });

  /** Runs one job in a transaction of its own on the claiming connection. */
  const runJob = async (client: PoolClient, job: repo.JobRow): Promise<void> => {
    try {
      await client.query('BEGIN');
      // Deleted first, so that a handler may schedule the next job of the same dedupe key; a job
      // cancelled since its claim is gone, and runs no more.
      if (await repo.deleteJob(client, job.id)) await handlers[job.kind]!(client, job.payload, deps);
      await client.query('COMMIT');
      deps.metrics.jobsRun.inc({ kind: job.kind, outcome: 'done' });
    } catch (error) {
      await client.query('ROLLBACK');
      const delay = retryDelayMs(job.attempts);
      await repo.retryJobLater(client, job.id, delay, (error as Error).message ?? String(error));
      deps.metrics.jobsRun.inc({ kind: job.kind, outcome: 'failed' });
      log.warn(
        { err: error, job_id: job.id, kind: job.kind, retry_in_ms: delay },
        'job failed; retrying later',
      );
    }
  };

  /** Claims and runs one batch of due jobs; returns how many were claimed. */
  const runBatch = async (): Promise<number> => {
    const client = await deps.pool.connect();
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken = error;
    };
    client.on('error', onError);
    try {
      const jobs = await repo.claimDueJobs(client, kinds, batchSize);
      for (const job of jobs) {
        if (stopped) break; // the claims left are released below, for the other runners
        await runJob(client, job);
      }
      await repo.releaseClaims(client);
      return jobs.length;
    } catch (error) {
      // A connection whose claims may outlive this batch is closed, which releases them.
      broken ??= error as Error;
      throw error;
    } finally {
      client.removeListener('error', onError);
      client.release(broken);
    }
  };

  const lane = async () => {
    while (!stopped) {
      try {
        if ((await runBatch()) === batchSize) continue;
        const next = await repo.msUntilNextJob(deps.pool, kinds);
        if (next === 0) {
          // Due jobs remain that other runners hold: look again shortly rather than spin.
          await sleep(25);
          continue;
        }
        await sleep(Math.min(next ?? maxIdleMs, maxIdleMs));
      } catch (error) {
        if (stopped) break;
        log.error({ err: error }, 'job runner: storage error; retrying in 1 s');
        await sleep(1_000);
      }
    }
  };

  const started = withTransaction(deps.pool, (tx) =>
    scheduleJob(tx, { kind: PURGE_KIND, payload: {}, runAt: new Date(), dedupeKey: PURGE_KIND }),
  ).catch((error: unknown) => log.error({ err: error }, 'could not schedule the idempotency key purge'));
  const running = started.then(() => Promise.all(Array.from({ length: lanes }, lane)));
  const listener =
    options.listen === false
      ? undefined
      : listenOnChannel(deps.pool, log, wake, repo.JOBS_CHANNEL, {
          // Named apart from the delivery worker's listener, so that operators (and tests) can tell them.
          applicationName: `${deps.pool.options.application_name ?? 'payment-service'}:jobs-listen`,
        });
  log.info({ lanes, kinds: kinds.length }, 'job runner started');

  return {
    wake,
    async stop() {
      stopped = true;
      wake();
      await listener?.close();
      await running;
    },
  };
}
