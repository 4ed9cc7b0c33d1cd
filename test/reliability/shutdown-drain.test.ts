// Shutdown (docs/operator/running.md) of a real `serve` process with a request in flight on a keep-alive
// connection, as every HTTP client keeps by default: the request is answered, its connection is closed
// once the answer is out, and the process exits 0, without waiting for the client to hang up.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { testEnv } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startService } from '../helpers/process.ts';
import { waitUntil } from '../helpers/wait.ts';

describe('shutdown with a request in flight on a keep-alive connection', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(() => db.drop());

  it('answers it, closes its connection and exits 0', async () => {
    // The drain must end on its own: the forced exit (code 1) comes 5 s after this.
    const service = await startService(
      'serve',
      testEnv({ DATABASE_URL: db.url, SHUTDOWN_TIMEOUT_MS: '5000' }),
    );
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    let stopped: Promise<number | null> | undefined;
    try {
      // /readyz reads schema_migrations: it waits for this lock, in flight when the signal comes.
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE schema_migrations IN ACCESS EXCLUSIVE MODE');
      const answer = fetch(`${service.baseUrl}/readyz`);
      await waitUntil(
        async () =>
          (
            await db.pool.query(
              "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
            )
          ).rowCount === 1,
        '/readyz waits for the lock',
      );
      stopped = service.stop('SIGTERM');
      await waitUntil(() => service.stdout().includes('shutting down'), 'the process begins to shut down');
      await locker.query('COMMIT');
      const response = await answer;
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { status: 'ready' });
    } finally {
      await locker.end();
    }
    assert.equal(await stopped, 0);
    assert.doesNotMatch(service.stdout(), /shutdown timed out/);
  });
});
