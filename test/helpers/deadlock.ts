// A real deadlock between a transaction under test and another connection, with the transaction under
// test as PostgreSQL's victim, whatever the machine's load. A deadlock is found by the check a waiting
// session runs once, deadlock_timeout after it starts to wait; so the other side waits first (for row 2,
// which the victim holds) with a long timeout, and only then does the victim close the cycle (waiting for
// row 1) with a short one: its check runs first and finds the cycle complete. Needs a table `lock_pair`
// holding ids 1 and 2.
import type pg from 'pg';
import type { PoolClient } from '../../src/db/pool.ts';

export const LOCK_PAIR_TABLE =
  'CREATE TABLE lock_pair (id int PRIMARY KEY); INSERT INTO lock_pair VALUES (1), (2)';

export interface Deadlock {
  /** Called inside the transaction under test: takes row 2, then waits for row 1 into the cycle. */
  enter(tx: PoolClient): Promise<void>;
  /** Resolves once the other side has committed, after the victim let go of row 2. */
  done: Promise<void>;
}

/** The other side holds row 1 from now on; `enter` closes the cycle by the victim taking row 2 first. */
export async function deadlockWith(other: pg.ClientBase): Promise<Deadlock> {
  await other.query('BEGIN');
  await other.query("SET LOCAL deadlock_timeout = '60s'");
  await other.query('SELECT id FROM lock_pair WHERE id = 1 FOR UPDATE');
  const otherPid = (await other.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  let holding!: () => void;
  const victimHolds = new Promise<void>((resolve) => {
    holding = resolve;
  });
  const done = (async () => {
    await victimHolds;
    // Waits for row 2, which the victim holds, until the victim is aborted and lets it go.
    await other.query('SELECT id FROM lock_pair WHERE id = 2 FOR UPDATE');
    await other.query('COMMIT');
  })();
  return {
    async enter(tx) {
      await tx.query("SET LOCAL deadlock_timeout = '100ms'");
      await tx.query('SELECT id FROM lock_pair WHERE id = 2 FOR UPDATE');
      holding();
      // pg_locks is read afresh on every call (pg_stat_activity would keep the transaction's snapshot).
      for (;;) {
        const waiting = await tx.query('SELECT 1 FROM pg_locks WHERE pid = $1 AND NOT granted', [otherPid]);
        if (waiting.rowCount) break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await tx.query('SELECT id FROM lock_pair WHERE id = 1 FOR UPDATE');
    },
    done,
  };
}
