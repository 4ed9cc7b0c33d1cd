// Migrations (D2): forward-only numbered files, applied once even when several processes start together.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
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

  it('gathers the platform and area migrations in one ascending order, each number once', async () => {
    const migrations = await loadMigrations();
    const versions = migrations.map((migration) => migration.version);
    assert.deepEqual(versions.slice(0, 3), [1, 2, 3]);
    assert.deepEqual(
      versions,
      [...new Set(versions)].sort((a, b) => a - b),
    );
  });

  it('refuses two migration files with one number', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'migrations-'));
    const other = await mkdtemp(path.join(tmpdir(), 'migrations-'));
    try {
      await writeFile(path.join(dir, '007_one.sql'), 'SELECT 1;');
      await writeFile(path.join(other, '007_two.sql'), 'SELECT 2;');
      await assert.rejects(() => loadMigrations([dir, other]), /migration number 7 is used twice/);
    } finally {
      await rm(dir, { recursive: true, force: true });
      await rm(other, { recursive: true, force: true });
    }
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

/** The statements of a migration, its comments left out. */
const statementsOf = (sql: string): string[] =>
  sql
    .replace(/--.*$/gm, '')
    .split(';')
    .map((statement) => statement.replace(/\s+/g, ' ').trim())
    .filter((statement) => statement !== '');

const CREATE_INDEX = /^CREATE (UNIQUE )?INDEX (IF NOT EXISTS )?(\w+) ON /i;

describe('migrations that add an index to a table an earlier one made', () => {
  // Such a migration runs in the migration transaction, so it cannot build CONCURRENTLY, and the build
  // blocks every write to the table: on a large table the operator builds the same index CONCURRENTLY
  // before deploying (docs/operator/running.md), and the migration must then find it and do nothing.
  it('each accepts its index already built with CREATE INDEX CONCURRENTLY', async () => {
    const all = await loadMigrations();
    const indexOnly = all.filter((migration) =>
      statementsOf(migration.sql).every((statement) => CREATE_INDEX.test(statement)),
    );
    assert.deepEqual(
      indexOnly.map((migration) => migration.version),
      [2, 21, 31, 70],
    );
    for (const migration of indexOnly) {
      const db = await createTestDatabase({ template: false });
      try {
        await migrate(
          db.pool,
          all.filter((earlier) => earlier.version < migration.version),
        );
        const names: string[] = [];
        for (const statement of statementsOf(migration.sql)) {
          const [, unique = '', , name = ''] = CREATE_INDEX.exec(statement)!;
          names.push(name);
          await db.pool.query(
            statement.replace(CREATE_INDEX, `CREATE ${unique}INDEX CONCURRENTLY IF NOT EXISTS ${name} ON `),
          );
        }
        await assert.doesNotReject(
          () => migrate(db.pool, all),
          `${migration.version}_${migration.name} applies over its index built beforehand`,
        );
        const built = await db.pool.query<{ indexname: string }>(
          `SELECT c.relname AS indexname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
            WHERE c.relname = ANY($1) AND i.indisvalid ORDER BY c.relname`,
          [names],
        );
        assert.deepEqual(
          built.rows.map((row) => row.indexname),
          [...names].sort(),
        );
      } finally {
        await db.drop();
      }
    }
  });
});
