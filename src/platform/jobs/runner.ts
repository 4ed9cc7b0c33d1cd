// Durable timers (D21): quote, transfer and deposit expiries and the sandbox's steps run in the worker
// role from job rows in PostgreSQL. A job runs inside the transaction that deletes it and holds its row
// lock (FOR UPDATE SKIP LOCKED): its effects and its removal commit together, a worker that dies mid-way
// rolls both back and leaves the job to another worker, and no two workers run one job at once.
//
// A table of our own rather than graphile-worker or pg-boss: those run jobs outside the caller's
// transaction (at-least-once, with a lease), keep their own schema and migrations beside ours, and
// graphile-worker's installer needs a database role allowed to create a schema; a job that must commit
// with the state change it makes needs neither.
import type { Logger } from 'pino';
import { listenOnChannel } from '../../db/listen.ts';
import { type PoolClient, withTransaction } from '../../db/pool.ts';
import type { JobHandler } from '../area.ts';
import type { AppDeps } from '../deps.ts';
import { purgeExpiredKeys } from '../idempotency.ts';
import * as repo from './repository.ts';

export interface JobRunner {
  stop(): Promise<void>;
  /** Looks for due jobs now (tests). */
  wake(): void;
}

export interface JobRunnerOptions {
  /**
   * Jobs locked per transaction (default 1). More than one lets a job's locks (a payout, an organisation's
   * balance) wait on the next job's, in an order nobody else follows: a client's request that takes them
   * the other way deadlocks, and is the victim when it began waiting first.
   */
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

export function startJobRunner(deps: AppDeps, log: Logger, options: JobRunnerOptions = {}): JobRunner {
  const handlers: Readonly<Record<string, JobHandler>> = {
    ...PLATFORM_JOBS,
    ...deps.catalogue.jobs,
    ...options.handlers,
  };
  // A runner claims only the kinds it has handlers for: during a rolling deploy an older worker leaves a
  // newer kind to the workers that know it.
  const kinds = Object.keys(handlers);
  const batchSize = options.batchSize ?? 1;
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

  /** Runs one batch of due jobs; returns how many were due. */
  const runBatch = async (): Promise<number> =>
    withTransaction(deps.pool, async (tx) => {
      const jobs = await repo.claimDueJobs(tx, kinds, batchSize);
      for (const job of jobs) {
        await tx.query('SAVEPOINT job');
        try {
          // Deleted first, so that a handler may schedule the next job of the same dedupe key.
          await repo.deleteJob(tx, job.id);
          await handlers[job.kind]!(tx, job.payload, deps);
          await tx.query('RELEASE SAVEPOINT job');
          deps.metrics.jobsRun.inc({ kind: job.kind, outcome: 'done' });
        } catch (error) {
          await tx.query('ROLLBACK TO SAVEPOINT job');
          const delay = retryDelayMs(job.attempts);
          await repo.retryJobLater(tx, job.id, delay, (error as Error).message ?? String(error));
          deps.metrics.jobsRun.inc({ kind: job.kind, outcome: 'failed' });
          log.warn(
            { err: error, job_id: job.id, kind: job.kind, retry_in_ms: delay },
            'job failed; retrying later',
          );
        }
      }
      return jobs.length;
    });

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
