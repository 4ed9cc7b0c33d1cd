// A real deadlock between a transaction under test and another connection, with the transaction under
// test as PostgreSQL's victim: its deadlock_timeout is short and the other's long, so its own deadlock
// check runs first, finds the cycle and aborts it (40P01). Needs a table `lock_pair` holding ids 1 and 2.
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
  await other.query("SET LOCAL deadlock_timeout = '10s'");
  await other.query('SELECT id FROM lock_pair WHERE id = 1 FOR UPDATE');
  let holding!: () => void;
  const victimHolds = new Promise<void>((resolve) => {
    holding = resolve;
  });
  const done = (async () => {
    await victimHolds;
    // The victim is about to wait for row 1; this then waits for row 2, which the victim holds.
    await new Promise((resolve) => setTimeout(resolve, 20));
    await other.query('SELECT id FROM lock_pair WHERE id = 2 FOR UPDATE');
    await other.query('COMMIT');
  })();
  return {
    async enter(tx) {
      await tx.query("SET LOCAL deadlock_timeout = '100ms'");
      await tx.query('SELECT id FROM lock_pair WHERE id = 2 FOR UPDATE');
      holding();
      await tx.query('SELECT id FROM lock_pair WHERE id = 1 FOR UPDATE');
    },
    done,
  };
}
