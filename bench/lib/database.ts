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
