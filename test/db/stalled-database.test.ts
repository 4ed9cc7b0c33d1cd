// A database that accepts connections and answers nothing (a hung server, a network that drops its
// packets), through a proxy that stops forwarding: statements and connects fail within their bounds
// (DATABASE_STATEMENT_TIMEOUT_MS, DATABASE_CONNECT_TIMEOUT_MS) instead of waiting for ever, the pool
// discards what waited and works again once the database answers, API requests get the platform envelope,
// and a process stopped meanwhile exits 0. A busy pool's queue is not bounded.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createPool,
  type Pool,
  StatementTimeoutError,
  unboundedStatements,
  withTransaction,
} from '../../src/db/pool.ts';
import { startTestApp, type Tenant, type TestApp, testEnv } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startService } from '../helpers/process.ts';
import { type StallingProxy, startStallingProxy } from '../helpers/stalling-proxy.ts';
import { waitUntil } from '../helpers/wait.ts';

const BOUNDS = { connectTimeoutMs: 500, statementTimeoutMs: 500 };

/** Settles with what `promise` settles with, or rejects once a generous bound has passed. */
function answered<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer: ${what}`)), 20_000);
    }),
  ]);
}

describe('a database that does not answer', () => {
  let db: TestDatabase;
  let proxy: StallingProxy;
  before(async () => {
    db = await createTestDatabase();
    proxy = await startStallingProxy(db.url);
  });
  after(async () => {
    proxy.resume();
    await proxy.close();
    await db.drop();
  });

  describe('the pool', () => {
    let pool: Pool;
    before(() => {
      pool = createPool(proxy.url, 2, 'stall-test', BOUNDS);
    });
    after(() => pool.end());

    it('fails statements and connects within their bounds, and works again once the database answers', async () => {
      // Two open connections, then the stall.
      await Promise.all([pool.query('SELECT pg_sleep(0.05)'), pool.query('SELECT pg_sleep(0.05)')]);
      assert.equal(pool.idleCount, 2);
      proxy.stall();
      try {
        await assert.rejects(answered(pool.query('SELECT 1'), 'pool.query'), StatementTimeoutError);
        await assert.rejects(
          answered(
            withTransaction(pool, (tx) => tx.query('SELECT 1')),
            'withTransaction',
          ),
          StatementTimeoutError,
        );
        assert.equal(pool.totalCount, 0, 'both connections that waited are discarded');
        // A new connection is not answered either.
        await assert.rejects(answered(pool.query('SELECT 1'), 'connect'), /timeout/);
        assert.equal(pool.totalCount, 0);
      } finally {
        proxy.resume();
      }
      assert.deepEqual((await pool.query('SELECT 1 AS one')).rows, [{ one: 1 }]);
    });

    it('does not bound a statement of unbounded work (migrations, loading sanctions lists)', async () => {
      const direct = createPool(db.url, 1, 'stall-test-direct', { statementTimeoutMs: 200 });
      try {
        await assert.rejects(direct.query('SELECT pg_sleep(0.6)'), StatementTimeoutError);
        const slow = await unboundedStatements.run(true, () =>
          direct.query('SELECT pg_sleep(0.6), 1 AS one'),
        );
        assert.equal(slow.rows[0].one, 1);
      } finally {
        await direct.end();
      }
    });

    it('lets a request wait for a busy pool longer than the connect bound', async () => {
      const busy = createPool(db.url, 1, 'stall-test-busy', { connectTimeoutMs: 200, statementTimeoutMs: 0 });
      try {
        const held = await busy.connect();
        const queued = busy.query('SELECT 2 AS two');
        await new Promise((resolve) => setTimeout(resolve, 600));
        held.release();
        assert.deepEqual((await queued).rows, [{ two: 2 }]);
      } finally {
        await busy.end();
      }
    });
  });

  describe('the API', () => {
    let t: TestApp;
    let tenant: Tenant;
    before(async () => {
      const pool = createPool(proxy.url, 4, 'stall-test-api', BOUNDS);
      t = await startTestApp({ db: { url: proxy.url, pool, drop: () => pool.end() } });
      tenant = await t.tenant();
    });
    after(() => t.close());

    it('answers in the platform envelope while the database does not answer, and as usual after', async () => {
      assert.equal(
        (await t.app.inject({ method: 'GET', url: '/api/v1/balances', headers: tenant.auth })).statusCode,
        200,
      );
      proxy.stall();
      try {
        const balances = await answered(
          t.app.inject({ method: 'GET', url: '/api/v1/balances', headers: tenant.auth }),
          'GET /api/v1/balances',
        );
        // The token's client was checked a moment ago (cached); the balances' read meets the bound: the
        // service is unavailable for a moment, and says when to retry.
        assert.equal(balances.statusCode, 503);
        assert.equal(balances.headers['retry-after'], '1');
        const body = JSON.parse(balances.body);
        assert.deepEqual(Object.keys(body), ['error', 'code', 'error_id']);
        assert.equal(body.code, 'SERVICE_UNAVAILABLE');
        assert.equal(
          body.error,
          'The service is temporarily unavailable; retry after the Retry-After interval',
        );
        const ready = await answered(t.app.inject({ method: 'GET', url: '/readyz' }), 'GET /readyz');
        assert.equal(ready.statusCode, 503);
        assert.deepEqual(JSON.parse(ready.body), { status: 'storage unreachable' });
      } finally {
        proxy.resume();
      }
      const after = await t.app.inject({ method: 'GET', url: '/api/v1/balances', headers: tenant.auth });
      assert.equal(after.statusCode, 200);
    });
  });

  it('lets a process stopped while the database does not answer exit 0', async () => {
    const service = await startService(
      'serve',
      testEnv({
        DATABASE_URL: proxy.url,
        DATABASE_CONNECT_TIMEOUT_MS: '500',
        DATABASE_STATEMENT_TIMEOUT_MS: '500',
        SHUTDOWN_TIMEOUT_MS: '5000',
      }),
    );
    proxy.stall();
    try {
      const ready = fetch(`${service.baseUrl}/readyz`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const stopped = service.stop('SIGTERM');
      await waitUntil(() => service.stdout().includes('shutting down'), 'the process begins to shut down');
      assert.equal((await answered(ready, '/readyz')).status, 503);
      assert.equal(await answered(stopped, 'exit'), 0);
      assert.doesNotMatch(service.stdout(), /shutdown timed out/);
    } finally {
      proxy.resume();
    }
  });
});
