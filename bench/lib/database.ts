// PostgreSQL for a scenario: the embedded server (the service's own startEmbeddedPostgres, with a DATA_DIR
// in the scenario's temp directory) or the server of BENCH_DATABASE_URL. Each run gets a fresh, migrated
// database on it, dropped afterwards.
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../src/db/embedded.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createPool, type Pool } from '../../src/db/pool.ts';

export interface BenchDatabase {
  /** URL of this database, for the service processes (DATABASE_URL). */
  url: string;
  /** A pool of the bench process itself (seeding, publishing, checks). */
  pool: Pool;
  drop(): Promise<void>;
}

export interface BenchServer {
  kind: 'embedded' | 'external';
  /** `SHOW server_version`. */
  version: string;
  createDatabase(label: string, poolSize?: number): Promise<BenchDatabase>;
  stop(): Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Starts (embedded) or connects to (external) the server; `tmpDir` holds the embedded DATA_DIR. */
export async function openServer(
  externalUrl: string | undefined,
  tmpDir: string,
  log: (message: string) => void,
): Promise<BenchServer> {
  let adminUrl: string;
  let stopServer = async () => {};
  let kind: BenchServer['kind'];
  if (externalUrl) {
    kind = 'external';
    adminUrl = externalUrl;
  } else {
    kind = 'embedded';
    const dataDir = path.join(tmpDir, 'pgdata');
    await mkdir(dataDir, { recursive: true });
    const embedded = await startEmbeddedPostgres(
      dataDir,
      (message) => log(`  [postgres] ${message}`),
      'bench',
    );
    adminUrl = embedded.url;
    stopServer = () => embedded.stop();
  }
  const version = await withClient(adminUrl, async (client) => {
    const result = await client.query<{ server_version: string }>('SHOW server_version');
    return result.rows[0]!.server_version;
  });
  const created = new Set<string>();

  return {
    kind,
    version,
    async createDatabase(label, poolSize = 10) {
      const name = `bench_${label.replace(/\W/g, '_')}_${process.pid}_${randomBytes(3).toString('hex')}`;
      await withClient(adminUrl, (client) => client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`));
      created.add(name);
      const url = withDatabase(adminUrl, name);
      const pool = createPool(url, poolSize, 'payment-service:bench');
      await migrate(pool);
      let dropped = false;
      return {
        url,
        pool,
        async drop() {
          if (dropped) return;
          dropped = true;
          await pool.end().catch(() => {});
          await withClient(adminUrl, (client) =>
            client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`),
          );
          created.delete(name);
        },
      };
    },
    async stop() {
      if (kind === 'external' && created.size > 0) {
        // Databases a failed run could not drop itself.
        await withClient(adminUrl, async (client) => {
          for (const name of created)
            await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
        }).catch((error: unknown) => log(`could not drop bench databases: ${String(error)}`));
      }
      await stopServer();
    },
  };
}

/**
 * ANALYZE the tables that autovacuum would analyze now: those changed since their last analyze by more
 * than autovacuum_analyze_threshold + autovacuum_analyze_scale_factor x their rows (PostgreSQL's own rule,
 * "The Autovacuum Daemon" in its manual). Tables the run does not write keep their statistics, as they
 * would in a deployed database. Returns the tables analyzed.
 */
export async function analyzeChangedTables(pool: Pool): Promise<string[]> {
  const due = await pool.query<{ name: string }>(
    `SELECT format('%I.%I', s.schemaname, s.relname) AS name
     FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
     WHERE s.n_mod_since_analyze > current_setting('autovacuum_analyze_threshold')::float8
             + current_setting('autovacuum_analyze_scale_factor')::float8 * greatest(c.reltuples, 0)
     ORDER BY 1`,
  );
  const tables = due.rows.map((row) => row.name);
  if (tables.length > 0) await pool.query(`ANALYZE ${tables.join(', ')}`);
  return tables;
}
