// Durable timers (D21) on real PostgreSQL: a job runs at its due time inside the transaction that
// removes it, once even with several runners, again after a failure or a worker that died mid-way, and
// survives a restart of the worker.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { withTransaction } from '../../src/db/pool.ts';
import type { JobHandler } from '../../src/platform/area.ts';
import {
  cancelJob,
  type JobRunner,
  retryDelayMs,
  scheduleJob,
  startJobRunner,
} from '../../src/platform/jobs/runner.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { waitUntil } from '../helpers/wait.ts';

const silent = pino({ level: 'silent' });

describe('durable timers (D21)', () => {
  let t: TestApp;
  const runners: JobRunner[] = [];
  before(async () => {
    t = await startTestApp();
    await t.db.pool.query(
      'CREATE TABLE job_probe (job text NOT NULL, runner text NOT NULL, at timestamptz NOT NULL DEFAULT now())',
    );
  });
  after(async () => {
    await Promise.all(runners.map((runner) => runner.stop()));
    await t.close();
  });

  /** Records each run in job_probe, inside the job's transaction. */
  const record =
    (runner: string): JobHandler =>
    async (tx, payload) => {
      await tx.query('INSERT INTO job_probe (job, runner) VALUES ($1, $2)', [payload.name, runner]);
    };
  const start = (handlers: Record<string, JobHandler>, listen = false) => {
    const runner = startJobRunner(t.deps, silent, { handlers, listen, maxIdleMs: 200 });
    runners.push(runner);
    return runner;
  };
  const schedule = (kind: string, name: string, runAt = new Date(), dedupeKey?: string) =>
    withTransaction(t.db.pool, (tx) =>
      scheduleJob(tx, { kind, payload: { name }, runAt, ...(dedupeKey ? { dedupeKey } : {}) }),
    );
  const runsOf = async (name: string) =>
    (
      await t.db.pool.query<{ runner: string }>('SELECT runner FROM job_probe WHERE job = $1', [name])
    ).rows.map((row) => row.runner);
  const pending = async (name: string) =>
    (await t.db.pool.query("SELECT 1 FROM jobs WHERE payload->>'name' = $1", [name])).rowCount ?? 0;

  it('runs a job at its due time, not before, and removes it in the same transaction', async () => {
    const runner = start({ 'test.due': record('a') }, true);
    const due = Date.now() + 2_000;
    await schedule('test.due', 'later', new Date(due));
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.ok(Date.now() < due - 500, 'the machine was too slow to check "not before"');
    assert.deepEqual(await runsOf('later'), []);
    await waitUntil(async () => (await runsOf('later')).length === 1, 'condition');
    assert.equal(await pending('later'), 0);
    await runner.stop();
  });

  it('runs each of many jobs exactly once with three runners claiming at once', async () => {
    const names = Array.from({ length: 150 }, (_, index) => `many-${index}`);
    await withTransaction(t.db.pool, async (tx) => {
      for (const name of names)
        await scheduleJob(tx, { kind: 'test.many', payload: { name }, runAt: new Date() });
    });
    for (const id of ['r1', 'r2', 'r3']) start({ 'test.many': record(id) });
    await waitUntil(async () => {
      const count = await t.db.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM job_probe WHERE job LIKE 'many-%'",
      );
      return count.rows[0]!.n >= names.length;
    }, 'condition');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const perJob = await t.db.pool.query<{ job: string; n: number }>(
      "SELECT job, count(*)::int AS n FROM job_probe WHERE job LIKE 'many-%' GROUP BY job HAVING count(*) <> 1",
    );
    assert.deepEqual(perJob.rows, []);
    const total = await t.db.pool.query<{ n: number }>(
      "SELECT count(DISTINCT job)::int AS n FROM job_probe WHERE job LIKE 'many-%'",
    );
    assert.equal(total.rows[0]!.n, 150);
    await Promise.all(runners.splice(0).map((runner) => runner.stop()));
  });

  it('rolls back a failed run, records the error and retries it later', async () => {
    let calls = 0;
    const runner = start({
      'test.flaky': async (tx, payload) => {
        calls += 1;
        await tx.query('INSERT INTO job_probe (job, runner) VALUES ($1, $2)', [
          payload.name,
          `call-${calls}`,
        ]);
        if (calls === 1) throw new Error('temporary failure');
      },
    });
    await schedule('test.flaky', 'flaky');
    await waitUntil(async () => calls >= 1, 'condition');
    await waitUntil(async () => {
      const row = await t.db.pool.query(
        "SELECT attempts, last_error FROM jobs WHERE payload->>'name' = 'flaky'",
      );
      return row.rows[0]?.attempts === 1;
    }, 'condition');
    const failed = await t.db.pool.query<{ last_error: string; delay: number }>(
      "SELECT last_error, EXTRACT(EPOCH FROM run_at - now()) AS delay FROM jobs WHERE payload->>'name' = 'flaky'",
    );
    assert.equal(failed.rows[0]!.last_error, 'temporary failure');
    assert.deepEqual(await runsOf('flaky'), [], 'the failed run left nothing');
    await waitUntil(async () => (await runsOf('flaky')).length === 1, 'condition', 5_000);
    assert.deepEqual(await runsOf('flaky'), ['call-2']);
    assert.equal(await pending('flaky'), 0);
    await runner.stop();
    assert.equal(retryDelayMs(0), 1_000);
    assert.equal(retryDelayMs(3), 8_000);
    assert.equal(retryDelayMs(30), 3_600_000);
  });

  it('hands the job of a runner that died mid-run to another, and runs it once', async () => {
    let backend: number | undefined;
    let resume!: () => void;
    const resumed = new Promise<void>((resolve) => {
      resume = resolve;
    });
    let dead = false;
    const dying = start({
      'test.crash': async (tx, payload) => {
        // A dead process runs nothing more (its other lane would otherwise claim the released job).
        if (dead) throw new Error('this worker is dead');
        await tx.query('INSERT INTO job_probe (job, runner) VALUES ($1, $2)', [payload.name, 'dying']);
        backend = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
        await resumed;
      },
    });
    await schedule('test.crash', 'crash');
    await waitUntil(async () => backend !== undefined, 'condition');
    // The worker's connection goes mid-run, as with a SIGKILL: PostgreSQL rolls its transaction back
    // and releases the job's row lock.
    dead = true;
    // With a timeout the call waits until the backend is gone, not only signalled.
    await t.db.pool.query('SELECT pg_terminate_backend($1, 5000)', [backend]);
    resume();
    // The dead worker claims nothing more; its successor finds the job released.
    await dying.stop();
    runners.splice(runners.indexOf(dying), 1);
    start({ 'test.crash': record('survivor') });
    await waitUntil(async () => (await runsOf('crash')).length === 1, 'condition');
    assert.deepEqual(await runsOf('crash'), ['survivor']);
    assert.equal(await pending('crash'), 0);
  });

  it('keeps a job through a restart: scheduled before, run by the next worker', async () => {
    const first = start({ 'test.restart': record('first') });
    await schedule('test.restart', 'restart', new Date(Date.now() + 400));
    await first.stop();
    runners.splice(runners.indexOf(first), 1);
    assert.equal(await pending('restart'), 1);
    start({ 'test.restart': record('second') });
    await waitUntil(async () => (await runsOf('restart')).length === 1, 'condition');
    assert.deepEqual(await runsOf('restart'), ['second']);
  });

  it('leaves kinds it has no handler for to workers that know them', async () => {
    const runner = start({ 'test.known': record('k') });
    await schedule('test.unknown-kind', 'unknown');
    await schedule('test.known', 'known');
    await waitUntil(async () => (await runsOf('known')).length === 1, 'condition');
    const left = await t.db.pool.query(
      "SELECT attempts, last_error FROM jobs WHERE payload->>'name' = 'unknown'",
    );
    assert.deepEqual(left.rows, [{ attempts: 0, last_error: null }]);
    await runner.stop();
    runners.splice(runners.indexOf(runner), 1);
    await t.db.pool.query("DELETE FROM jobs WHERE payload->>'name' = 'unknown'");
  });

  it('keeps one pending job per dedupe key, and cancels it by key', async () => {
    const later = new Date(Date.now() + 60_000);
    assert.equal(await schedule('test.none', 'dedupe-1', later, 'dedupe:x'), true);
    assert.equal(await schedule('test.none', 'dedupe-2', later, 'dedupe:x'), false);
    const rows = await t.db.pool.query(
      "SELECT payload->>'name' AS name FROM jobs WHERE dedupe_key = 'dedupe:x'",
    );
    assert.deepEqual(rows.rows, [{ name: 'dedupe-1' }]);
    assert.equal(await withTransaction(t.db.pool, (tx) => cancelJob(tx, 'dedupe:x')), true);
    assert.equal(await withTransaction(t.db.pool, (tx) => cancelJob(tx, 'dedupe:x')), false);
  });

  it('runs a batch one job per transaction: a job claimed then cancelled does not run, and claims are released', async () => {
    let resume!: () => void;
    const resumed = new Promise<void>((resolve) => {
      resume = resolve;
    });
    let started = false;
    let backend: number | undefined;
    const due = new Date(Date.now() - 1_000);
    await schedule('test.batch-pause', 'batch-first', new Date(due.getTime() - 1));
    await schedule('test.batch-second', 'batch-second', due, 'batch:second');
    await schedule('test.batch-second', 'batch-third', due);
    // One lane, so that one claim takes the three.
    const runner = startJobRunner({ ...t.deps, config: { ...t.deps.config, jobConcurrency: 1 } }, silent, {
      listen: false,
      maxIdleMs: 200,
      handlers: {
        'test.batch-pause': async (tx, payload) => {
          await record('batch')(tx, payload, t.deps);
          backend = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
          started = true;
          await resumed;
        },
        'test.batch-second': record('batch'),
      },
    });
    runners.push(runner);
    await waitUntil(() => started, 'the first job of the batch runs');
    // The later jobs are claimed by the same runner: advisory locks of its connection, no row lock.
    const claims = await t.db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = $1",
      [backend],
    );
    assert.equal(claims.rows[0]!.n, 3);
    // A client cancels the second meanwhile: its row is not locked, so the cancel does not wait.
    assert.equal(await withTransaction(t.db.pool, (tx) => cancelJob(tx, 'batch:second')), true);
    resume();
    await waitUntil(async () => (await runsOf('batch-third')).length === 1, 'the third job runs');
    assert.deepEqual(await runsOf('batch-first'), ['batch']);
    assert.deepEqual(await runsOf('batch-second'), [], 'cancelled after its claim: not run');
    await waitUntil(
      async () =>
        (
          await t.db.pool.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = $1",
            [backend],
          )
        ).rows[0]!.n === 0,
      'the claims are released after the batch',
    );
    await runner.stop();
    runners.splice(runners.indexOf(runner), 1);
  });

  it('schedules the hourly purge of expired idempotency keys once, however many runners start', async () => {
    await waitUntil(async () => {
      const rows = await t.db.pool.query("SELECT 1 FROM jobs WHERE kind = 'platform.purge_idempotency_keys'");
      return rows.rowCount === 1;
    }, 'condition');
    const rows = await t.db.pool.query<{ hours: number }>(
      "SELECT round(EXTRACT(EPOCH FROM run_at - now()) / 3600)::int AS hours FROM jobs WHERE kind = 'platform.purge_idempotency_keys'",
    );
    assert.deepEqual(
      rows.rows,
      [{ hours: 1 }],
      'the first run happened at start and the next is due in an hour',
    );
  });
});
