// withTransaction: commit, rollback, and a connection cut by the server mid-transaction (a PostgreSQL
// restart) rejects the call instead of crashing the process; the broken client never returns to the pool.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPool, type Pool, withTransaction } from '../../src/db/pool.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { deadlockWith, LOCK_PAIR_TABLE } from '../helpers/deadlock.ts';

describe('withTransaction', () => {
  let db: TestDatabase;
  let pool: Pool;
  before(async () => {
    db = await createTestDatabase();
    pool = createPool(db.url, 2, 'pool-test');
    await pool.query('CREATE TABLE tx_probe (n int)');
  });
  after(async () => {
    await pool.end();
    await db.drop();
  });

  it('commits the work of a successful callback', async () => {
    await withTransaction(pool, async (tx) => {
      await tx.query('INSERT INTO tx_probe VALUES (1), (2)');
    });
    assert.equal((await pool.query('SELECT count(*) AS n FROM tx_probe')).rows[0].n, 2);
  });

  it('rolls back every statement when the callback throws', async () => {
    await assert.rejects(
      withTransaction(pool, async (tx) => {
        await tx.query('INSERT INTO tx_probe VALUES (3)');
        throw new Error('stop');
      }),
      /stop/,
    );
    assert.equal((await pool.query('SELECT count(*) AS n FROM tx_probe WHERE n = 3')).rows[0].n, 0);
  });

  it("runs the work again in a new transaction when it was a deadlock's victim, as often as retries allow", async () => {
    await pool.query(LOCK_PAIR_TABLE);
    const other = createPool(db.url, 1, 'pool-test-other');
    try {
      for (const retries of [0, 1]) {
        const otherClient = await other.connect();
        const deadlock = await deadlockWith(otherClient);
        let attempts = 0;
        const result = withTransaction(
          pool,
          async (tx) => {
            attempts++;
            await tx.query('INSERT INTO tx_probe VALUES (10)');
            if (attempts === 1) await deadlock.enter(tx);
            return attempts;
          },
          { retries },
        );
        if (retries === 0) {
          await assert.rejects(result, (error: { code?: string }) => error.code === '40P01');
        } else {
          assert.equal(await result, 2);
        }
        await deadlock.done;
        otherClient.release();
        // The victim's writes went with it; the run that committed wrote once.
        assert.equal(attempts, retries + 1);
        const rows = (await pool.query('SELECT count(*)::int AS n FROM tx_probe WHERE n = 10')).rows[0].n;
        assert.equal(rows, retries);
      }
    } finally {
      await other.end();
    }
  });

  it('rejects, without crashing the process, when the server terminates the connection mid-transaction', async () => {
    const killer = createPool(db.url, 1, 'pool-test-killer');
    try {
      await assert.rejects(
        withTransaction(pool, async (tx) => {
          const { pid } = (await tx.query('SELECT pg_backend_pid() AS pid')).rows[0];
          await killer.query('SELECT pg_terminate_backend($1)', [pid]);
          await new Promise((resolve) => setTimeout(resolve, 200));
          await tx.query('INSERT INTO tx_probe VALUES (4)');
        }),
      );
      // The pool works afterwards: the broken client was destroyed, not reused.
      for (let i = 0; i < 4; i++) {
        await withTransaction(pool, (tx) => tx.query('SELECT 1'));
      }
      assert.equal((await pool.query('SELECT count(*) AS n FROM tx_probe WHERE n = 4')).rows[0].n, 0);
    } finally {
      await killer.end();
    }
  });
});
