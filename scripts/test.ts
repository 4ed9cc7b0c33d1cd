// The test runner behind `npm test`: provides a PostgreSQL server, a migrated template database,
// then runs every test file with node:test. Each test file copies the template into its own database.
//   TEST_DATABASE_URL set: that server (any database on it serves as the admin connection).
//   unset: an embedded PostgreSQL in .test-data/ (initialised once, reused).
// Databases of one run are named pstest_<run id>_...; several runs may share one server.
import { spawn } from 'node:child_process';
import { chmodSync, globSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool } from '../src/db/pool.ts';

const RUN_ID = String(process.pid);
const TEMPLATE = `pstest_${RUN_ID}_template`;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function withAdmin<T>(adminUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Drops this run's databases, and those of earlier runs whose runner is gone. */
async function dropDatabases(adminUrl: string): Promise<void> {
  await withAdmin(adminUrl, async (admin) => {
    const found = await admin.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE 'pstest\\_%'",
    );
    for (const { datname } of found.rows) {
      const runner = Number(datname.split('_')[1]);
      if (runner === process.pid || !isAlive(runner)) {
        await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(datname)} WITH (FORCE)`);
      }
    }
  });
}

async function prepareTemplate(adminUrl: string): Promise<void> {
  await dropDatabases(adminUrl);
  await withAdmin(adminUrl, (admin) => admin.query(`CREATE DATABASE ${pg.escapeIdentifier(TEMPLATE)}`));
  const url = new URL(adminUrl);
  url.pathname = `/${TEMPLATE}`;
  const pool = createPool(url.toString(), 2, 'payment-service:test-template');
  try {
    await migrate(pool);
  } finally {
    await pool.end();
  }
}

/**
 * Issue 7: no log line of the whole suite holds a signing secret (`whsec_` + 64 hex) or any client
 * secret the tests were issued. Returns the offending lines.
 */
function scanLogsForSecrets(logDir: string): string[] {
  const files = readdirSync(logDir);
  const issued = files.includes('issued-secrets.txt')
    ? readFileSync(path.join(logDir, 'issued-secrets.txt'), 'utf8')
        .split('\n')
        .filter((line) => line.length >= 16)
    : [];
  const offending: string[] = [];
  for (const file of files.filter((name) => name.endsWith('.log'))) {
    for (const line of readFileSync(path.join(logDir, file), 'utf8').split('\n')) {
      if (/whsec_[0-9a-f]{64}/.test(line) || issued.some((secret) => line.includes(secret)))
        offending.push(line);
    }
  }
  return offending;
}

async function main(): Promise<number> {
  const files = process.argv.slice(2);
  const patterns = files.length > 0 ? files : ['test/**/*.test.ts'];
  let adminUrl = process.env.TEST_DATABASE_URL;
  let stop: (() => Promise<void>) | undefined;
  if (!adminUrl) {
    const server = await startEmbeddedPostgres('.test-data', () => {}, 'postgres');
    adminUrl = server.url;
    stop = () => server.stop();
  }
  let runTmpDir: string | undefined;
  try {
    await prepareTemplate(adminUrl);
    const testFiles = patterns.flatMap((pattern) => globSync(pattern)).sort();
    const logDir = mkdtempSync(path.join(tmpdir(), 'payment-service-test-logs-'));
    // The test processes' TMPDIR: what they leave there (test certificates, own PostgreSQL servers' data)
    // goes with the run instead of piling up in the system's temporary directory.
    runTmpDir = mkdtempSync(path.join(tmpdir(), 'payment-service-test-tmp-'));
    chmodSync(runTmpDir, 0o755); // a test's own PostgreSQL runs as the postgres OS user when root
    const code = await new Promise<number>((resolve) => {
      const child = spawn(
        process.execPath,
        ['--test', '--test-concurrency=3', '--test-timeout=300000', ...testFiles],
        {
          stdio: 'inherit',
          env: {
            ...process.env,
            TEST_DATABASE_URL: adminUrl,
            TEST_TEMPLATE_DATABASE: TEMPLATE,
            TEST_RUN_ID: RUN_ID,
            TEST_LOG_DIR: logDir,
            TMPDIR: runTmpDir,
          },
        },
      );
      child.on('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0)));
    });
    const leaks = scanLogsForSecrets(logDir);
    const logLines = readdirSync(logDir)
      .filter((name) => name.endsWith('.log'))
      .reduce(
        (count, name) => count + readFileSync(path.join(logDir, name), 'utf8').split('\n').length - 1,
        0,
      );
    rmSync(logDir, { recursive: true, force: true });
    if (leaks.length > 0) {
      process.stderr.write(
        `\nsecret scan: ${leaks.length} log line(s) hold a secret:\n${leaks.slice(0, 5).join('\n')}\n`,
      );
      return 1;
    }
    process.stdout.write(
      `secret scan: ${logLines} log lines of the suite hold no signing or client secret\n`,
    );
    return code;
  } finally {
    if (runTmpDir) rmSync(runTmpDir, { recursive: true, force: true });
    await dropDatabases(adminUrl).catch(() => {});
    await stop?.();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`test runner failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
