// Writes a transaction collects go to the database just before its commit, each kind in one write, in the
// order collected; they roll back with the transaction (or with a transaction group's failing piece); a
// connection without a managed transaction writes at once.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { type BatchWrite, collectOrWrite, sendCollected } from '../../src/db/collected-writes.ts';
import { type PoolClient, withTransaction } from '../../src/db/pool.ts';
import { transactionGroups } from '../../src/db/transaction-groups.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

describe('collected writes', () => {
  let db: TestDatabase;
  /** The batches the write received, as it received them. */
  let batches: string[][];
  const write: BatchWrite<string> = async (tx, items) => {
    batches.push(items);
    await tx.query('INSERT INTO collected (name, txid) SELECT unnest($1::text[]), txid_current()', [items]);
  };
  const names = async () =>
    (await db.pool.query<{ name: string }>('SELECT name FROM collected ORDER BY seq')).rows.map(
      (row) => row.name,
    );

  before(async () => {
    db = await createTestDatabase();
    await db.pool.query(
      'CREATE TABLE collected (seq bigserial PRIMARY KEY, name text NOT NULL UNIQUE, txid bigint NOT NULL)',
    );
  });
  after(() => db.drop());
  beforeEach(async () => {
    batches = [];
    await db.pool.query('TRUNCATE collected');
  });

  it('sends what withTransaction collected in one write, in order, in the same transaction', async () => {
    const txid = await withTransaction(db.pool, async (tx) => {
      for (const name of ['a', 'b', 'c']) await collectOrWrite(tx, write, name);
      // Nothing is written before the end of the work.
      assert.equal((await tx.query('SELECT 1 FROM collected')).rowCount, 0);
      return (await tx.query<{ txid: string }>('SELECT txid_current()::text AS txid')).rows[0]!.txid;
    });
    assert.deepEqual(batches, [['a', 'b', 'c']]);
    assert.deepEqual(await names(), ['a', 'b', 'c']);
    const written = await db.pool.query<{ txid: string }>(
      'SELECT DISTINCT txid::text AS txid FROM collected',
    );
    assert.deepEqual(
      written.rows.map((row) => row.txid),
      [txid],
    );
  });

  it('sendCollected sends what was collected so far; what follows goes in a second write', async () => {
    await withTransaction(db.pool, async (tx) => {
      await collectOrWrite(tx, write, 'a');
      await sendCollected(tx);
      assert.equal((await tx.query('SELECT 1 FROM collected')).rowCount, 1);
      await collectOrWrite(tx, write, 'b');
    });
    assert.deepEqual(batches, [['a'], ['b']]);
    assert.deepEqual(await names(), ['a', 'b']);
  });

  it('writes nothing for a transaction that rolls back, and a failing write rolls its transaction back', async () => {
    await assert.rejects(
      withTransaction(db.pool, async (tx) => {
        await tx.query("INSERT INTO collected (name, txid) VALUES ('direct', 0)");
        await collectOrWrite(tx, write, 'a');
        throw new Error('refused');
      }),
      /refused/,
    );
    assert.deepEqual(batches, []);
    await assert.rejects(
      withTransaction(db.pool, async (tx) => {
        await tx.query("INSERT INTO collected (name, txid) VALUES ('direct', 0)");
        await collectOrWrite(tx, write, 'twice');
        await collectOrWrite(tx, write, 'twice'); // a unique violation when the batch is written
      }),
      /duplicate key/,
    );
    assert.deepEqual(await names(), []);
    // The connection collects nothing more once its transaction ended.
    const client = await db.pool.connect();
    try {
      await collectOrWrite(client, write, 'later');
    } finally {
      client.release();
    }
    assert.deepEqual(await names(), ['later']);
  });

  it('writes at once on a connection whose transaction nobody sends the collected writes of', async () => {
    const client: PoolClient = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await collectOrWrite(client, write, 'a');
      assert.equal((await client.query('SELECT 1 FROM collected')).rowCount, 1);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    assert.deepEqual(batches, [['a']]);
  });

  it('in a transaction group, a failing piece drops what it collected; the other pieces write theirs', async () => {
    const groups = transactionGroups(db.pool);
    const piece = (name: string, fail: boolean) =>
      groups.run('collect', async (tx) => {
        await collectOrWrite(tx, write, name);
        if (fail) throw new Error(`${name} refused`);
        return name;
      });
    const outcomes = await Promise.allSettled([
      piece('one', false),
      piece('two', true),
      piece('three', false),
      piece('four', true),
    ]);
    assert.deepEqual(
      outcomes.map((outcome) => outcome.status),
      ['fulfilled', 'rejected', 'fulfilled', 'rejected'],
    );
    assert.deepEqual(await names(), ['one', 'three']);
    assert.ok(batches.every((batch) => batch.length === 1 && ['one', 'three'].includes(batch[0]!)));
  });
});
