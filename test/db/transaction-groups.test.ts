// Transactions that share a commit: each piece is all-or-nothing on its own, a failing piece rejects
// alone, pieces of one key share transactions under load, and each submitter's commit hook runs with
// its own piece.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { beforeCommit } from '../../src/db/pool.ts';
import { transactionGroups } from '../../src/db/transaction-groups.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { deadlockWith, LOCK_PAIR_TABLE } from '../helpers/deadlock.ts';

describe('transaction groups', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
    await db.pool.query('CREATE TABLE piece (name text PRIMARY KEY, txid bigint NOT NULL)');
    await db.pool.query('CREATE TABLE hooked (name text PRIMARY KEY)');
  });
  after(() => db.drop());

  const insert = (name: string) => async (tx: import('../../src/db/pool.ts').PoolClient) => {
    await tx.query('INSERT INTO piece (name, txid) VALUES ($1, txid_current())', [name]);
    return name;
  };

  it('runs concurrent pieces of one key in shared transactions, each resolving with its own result', async () => {
    const groups = transactionGroups(db.pool);
    const names = Array.from({ length: 40 }, (_, index) => `shared-${index}`);
    const results = await Promise.all(names.map((name) => groups.run('k', insert(name))));
    assert.deepEqual(results, names);
    const transactions = await db.pool.query<{ n: number }>(
      "SELECT count(DISTINCT txid)::int AS n FROM piece WHERE name LIKE 'shared-%'",
    );
    assert.ok(
      transactions.rows[0]!.n < names.length,
      `${transactions.rows[0]!.n} transactions for 40 pieces`,
    );
    assert.equal((await db.pool.query("SELECT 1 FROM piece WHERE name LIKE 'shared-%'")).rowCount, 40);
  });

  it('rolls back a failing piece alone: its writes go, the others commit', async () => {
    const groups = transactionGroups(db.pool);
    const outcomes = await Promise.allSettled([
      groups.run('f', insert('f-1')),
      groups.run('f', async (tx) => {
        await insert('f-2')(tx);
        throw new Error('refused');
      }),
      groups.run('f', async (tx) => {
        await insert('f-1')(tx); // a duplicate key: a database error inside the piece
      }),
      groups.run('f', insert('f-3')),
    ]);
    assert.deepEqual(
      outcomes.map((outcome) => outcome.status),
      ['fulfilled', 'rejected', 'rejected', 'fulfilled'],
    );
    const rows = await db.pool.query("SELECT name FROM piece WHERE name LIKE 'f-%' ORDER BY name");
    assert.deepEqual(
      rows.rows.map((row) => row.name),
      ['f-1', 'f-3'],
    );
  });

  it("runs the whole group again when a piece is a deadlock's victim: every submitter gets its own result", async () => {
    await db.pool.query(LOCK_PAIR_TABLE);
    const groups = transactionGroups(db.pool);
    const other = await db.pool.connect();
    try {
      const deadlock = await deadlockWith(other);
      // A first group keeps the key busy, so that the next three pieces share the next transaction.
      let open!: () => void;
      const gate = new Promise<void>((resolve) => {
        open = resolve;
      });
      const busy = groups.run('d', () => gate);
      const runs = { 'd-1': 0, 'd-2': 0, 'd-3': 0 };
      const piece = (name: keyof typeof runs) =>
        groups.run('d', async (tx) => {
          runs[name]++;
          await insert(name)(tx);
          // The second piece meets the other transaction once, holding the first piece's row meanwhile.
          if (name === 'd-2' && runs[name] === 1) await deadlock.enter(tx);
          return name;
        });
      const results = Promise.all([piece('d-1'), piece('d-2'), piece('d-3')]);
      open();
      await busy;
      assert.deepEqual(await results, ['d-1', 'd-2', 'd-3']);
      await deadlock.done;
      assert.deepEqual(runs, { 'd-1': 2, 'd-2': 2, 'd-3': 1 });
      const rows = await db.pool.query("SELECT name FROM piece WHERE name LIKE 'd-%' ORDER BY name");
      assert.deepEqual(
        rows.rows.map((row) => row.name),
        ['d-1', 'd-2', 'd-3'],
      );
    } finally {
      other.release();
    }
  });

  it('runs each submitter’s commit hook with its own piece, and not with a failed one', async () => {
    const groups = transactionGroups(db.pool);
    const submit = (name: string, fail: boolean) =>
      beforeCommit.run(
        async (tx) => {
          await tx.query('INSERT INTO hooked (name) VALUES ($1)', [name]);
        },
        () =>
          groups.run('h', async (tx) => {
            await insert(name)(tx);
            if (fail) throw new Error('no');
          }),
      );
    await Promise.allSettled([submit('h-1', false), submit('h-2', true), submit('h-3', false)]);
    const hooked = await db.pool.query('SELECT name FROM hooked ORDER BY name');
    assert.deepEqual(
      hooked.rows.map((row) => row.name),
      ['h-1', 'h-3'],
    );
  });
});
