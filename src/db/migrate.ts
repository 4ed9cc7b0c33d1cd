// Forward-only numbered migrations (D2), applied under an advisory lock so that several
// processes starting together apply each migration exactly once. The platform's migrations are in
// src/db/migrations; each area keeps its own in src/<area>/migrations. Numbers are one global order.
import { globSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Pool, unboundedStatements } from './pool.ts';

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
const SOURCE_DIR = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

/** The platform's migration folder and every area's (src/<area>/migrations). */
export function migrationDirs(): string[] {
  const areaDirs = globSync('*/migrations', { cwd: SOURCE_DIR })
    .map((dir) => path.join(SOURCE_DIR, dir))
    .filter((dir) => dir !== MIGRATIONS_DIR)
    .sort();
  return [MIGRATIONS_DIR, ...areaDirs];
}
// Arbitrary constant shared by every process of this service: "payment-service migrations".
const MIGRATION_LOCK_ID = 7_301_202_611;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export async function loadMigrations(dirs = migrationDirs()): Promise<Migration[]> {
  const found = await Promise.all(
    dirs.map(async (dir) =>
      Promise.all(
        (await readdir(dir))
          .filter((file) => /^\d{3}_[a-z0-9_]+\.sql$/.test(file))
          .map(async (file) => ({
            version: Number(file.slice(0, 3)),
            name: file.slice(4, -4),
            sql: await readFile(path.join(dir, file), 'utf8'),
            file: path.join(dir, file),
          })),
      ),
    ),
  );
  const migrations = found.flat().sort((a, b) => a.version - b.version);
  migrations.forEach((migration, index) => {
    const next = migrations[index + 1];
    if (next?.version === migration.version) {
      throw new Error(
        `migration number ${migration.version} is used twice: ${migration.file} and ${next.file}`,
      );
    }
  });
  return migrations.map(({ version, name, sql }) => ({ version, name, sql }));
}

/** Applies pending migrations; returns the versions this call applied (empty when up to date). */
export async function migrate(pool: Pool, migrations?: Migration[]): Promise<number[]> {
  // Its statements may rightly wait long: for another process's migrations, on an index build.
  return unboundedStatements.run(true, () => applyMigrations(pool, migrations));
}

async function applyMigrations(pool: Pool, migrations: Migration[] | undefined): Promise<number[]> {
  const all = migrations ?? (await loadMigrations());
  const client = await pool.connect();
  // A connection cut mid-migration rejects the running query; without a listener it would also be an
  // unhandled 'error' event.
  client.on('error', () => {});
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const done = new Set(
      (await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map(
        (row) => row.version,
      ),
    );
    const applied: number[] = [];
    for (const migration of all) {
      if (done.has(migration.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
          migration.version,
          migration.name,
        ]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw new Error(
          `migration ${migration.version}_${migration.name} failed: ${(error as Error).message}`,
        );
      }
      applied.push(migration.version);
    }
    return applied;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => {});
    client.release();
  }
}

/** True when every known migration is recorded: used by /readyz. */
export async function migrationsApplied(pool: Pool): Promise<boolean> {
  const expected = (await loadMigrations()).map((migration) => migration.version);
  const table = await pool.query<{ exists: boolean }>(
    "SELECT to_regclass('schema_migrations') IS NOT NULL AS exists",
  );
  if (!table.rows[0]?.exists) return false;
  const result = await pool.query<{ version: number }>('SELECT version FROM schema_migrations');
  const have = new Set(result.rows.map((row) => row.version));
  return expected.every((version) => have.has(version));
}
