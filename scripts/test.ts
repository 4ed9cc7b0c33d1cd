// The test runner behind `npm test`: provides a PostgreSQL server, a migrated template database,
// then runs every test file with node:test. Each test file copies the template into its own database.
//   TEST_DATABASE_URL set: that server (any database on it serves as the admin connection).
//   unset: an embedded PostgreSQL in .test-data/ (initialised once, reused).
import { spawn } from 'node:child_process';
import { globSync } from 'node:fs';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool } from '../src/db/pool.ts';

const TEMPLATE = 'pstest_template';

async function prepareTemplate(adminUrl: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const stale = await admin.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE 'pstest\\_%'",
    );
    for (const { datname } of stale.rows) {
      await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(datname)} WITH (FORCE)`);
    }
    await admin.query(`CREATE DATABASE ${TEMPLATE}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${TEMPLATE}`;
  const pool = createPool(url.toString(), 2, 'payment-service:test-template');
  try {
    await migrate(pool);
  } finally {
    await pool.end();
  }
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
  try {
    await prepareTemplate(adminUrl);
    const testFiles = patterns.flatMap((pattern) => globSync(pattern)).sort();
    const code = await new Promise<number>((resolve) => {
      const child = spawn(
        process.execPath,
        ['--test', '--test-concurrency=3', '--test-timeout=180000', ...testFiles],
        {
          stdio: 'inherit',
          env: { ...process.env, TEST_DATABASE_URL: adminUrl, TEST_TEMPLATE_DATABASE: TEMPLATE },
        },
      );
      child.on('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0)));
    });
    return code;
  } finally {
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
