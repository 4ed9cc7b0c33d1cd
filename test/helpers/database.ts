// One PostgreSQL database per test file, copied from the migrated template that scripts/test.ts made.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadMigrations } from '../../src/db/migrate.ts';
import { createPool, type Pool } from '../../src/db/pool.ts';

export interface TestDatabase {
  url: string;
  pool: Pool;
  drop(): Promise<void>;
}

function serverUrl(database: string): string {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) throw new Error('TEST_DATABASE_URL is not set: run the tests with `npm test`');
  const url = new URL(base);
  url.pathname = `/${database}`;
  return url.toString();
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A fresh, migrated database of its own. `template: false` gives an empty one (migration tests). */
export async function createTestDatabase(
  options: { template?: boolean; poolSize?: number } = {},
): Promise<TestDatabase> {
  const name = `pstest_${process.env.TEST_RUN_ID ?? process.pid}_${randomBytes(5).toString('hex')}`;
  const template = options.template === false ? 'template0' : (process.env.TEST_TEMPLATE_DATABASE ?? '');
  await admin(async (client) => {
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query(
          `CREATE DATABASE ${pg.escapeIdentifier(name)} TEMPLATE ${pg.escapeIdentifier(template)}`,
        );
        return;
      } catch (error) {
        // Concurrent copies of one template may collide ("source database is being accessed"): retry.
        if ((error as { code?: string }).code !== '55006' || attempt > 50) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 100));
      }
    }
  });
  const url = serverUrl(name);
  const pool = createPool(url, options.poolSize ?? 10, 'payment-service:test');
  return {
    url,
    pool,
    async drop() {
      await pool.end().catch(() => {});
      await admin((client) =>
        client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`),
      );
    },
  };
}

/**
 * Stores deposits' `column` as an earlier release did (`before`: id -> value), runs payments data migration
 * `version` again (the test database applied it on no such rows) and answers each deposit's value after it.
 */
export async function depositsAfterMigration(
  pool: Pool,
  version: number,
  column: 'tx_hash' | 'bank_transaction_id',
  before: Record<string, string>,
): Promise<Record<string, string>> {
  for (const [id, value] of Object.entries(before)) {
    await pool.query(`UPDATE deposits SET ${column} = $2 WHERE id = $1`, [id, value]);
  }
  const migration = (await loadMigrations()).find((each) => each.version === version)!;
  await pool.query(migration.sql);
  const after = await pool.query<{ id: string; value: string }>(
    `SELECT id, ${column} AS value FROM deposits WHERE id = ANY($1)`,
    [Object.keys(before)],
  );
  return Object.fromEntries(after.rows.map((row) => [row.id, row.value]));
}
