// Migrations (D2): forward-only numbered files, applied once even when several processes start together.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadMigrations, migrate, migrationsApplied } from '../../src/db/migrate.ts';
import { createPool, type Pool } from '../../src/db/pool.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

describe('migrations (D2)', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase({ template: false });
  });
  after(() => db.drop());

  it('numbers migration files consecutively from 001', async () => {
    const migrations = await loadMigrations();
    assert.ok(migrations.length >= 1);
    assert.deepEqual(
      migrations.map((migration) => migration.version),
      migrations.map((_migration, index) => index + 1),
    );
  });

  it('applies every migration exactly once when five processes start together', async () => {
    const pools: Pool[] = Array.from({ length: 5 }, () => createPool(db.url, 2, 'migrate-test'));
    try {
      assert.equal(await migrationsApplied(pools[0]!).catch(() => false), false);
      const results = await Promise.all(pools.map((pool) => migrate(pool)));
      const expected = (await loadMigrations()).map((migration) => migration.version);
      const appliedByAll = results.flat().sort((a, b) => a - b);
      assert.deepEqual(appliedByAll, expected, 'each version applied by exactly one of the five');
      const recorded = await db.pool.query('SELECT version FROM schema_migrations ORDER BY version');
      assert.deepEqual(
        recorded.rows.map((row) => row.version),
        expected,
      );
      assert.equal(await migrationsApplied(db.pool), true);
      assert.deepEqual(await migrate(pools[0]!), [], 'a later start applies nothing');
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });

  it('rolls back a failing migration and records nothing for it', async () => {
    const broken = [
      { version: 999, name: 'broken', sql: 'CREATE TABLE half_done (id int); SELECT no_such_function();' },
    ];
    await assert.rejects(() => migrate(db.pool, broken), /migration 999_broken failed/);
    const table = await db.pool.query("SELECT to_regclass('half_done') AS t");
    assert.equal(table.rows[0].t, null);
    const recorded = await db.pool.query('SELECT 1 FROM schema_migrations WHERE version = 999');
    assert.equal(recorded.rowCount, 0);
  });
});
