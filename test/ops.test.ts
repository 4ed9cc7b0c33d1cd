// Operational endpoints (D1) and the generated API reference.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { errorBody, startTestApp, type TestApp } from './helpers/app.ts';
import { createTestDatabase } from './helpers/database.ts';
import { waitUntil } from './helpers/wait.ts';

describe('health, readiness, metrics, OpenAPI', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  it('answers /healthz 200 without a token', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), { status: 'ok' });
  });

  it('answers /readyz 200 when storage is reachable and migrations are applied', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), { status: 'ready' });
  });

  it('answers /readyz 503 when migrations are missing', async () => {
    const empty = await createTestDatabase({ template: false });
    const { buildApp } = await import('../src/app.ts');
    const { Metrics } = await import('../src/platform/metrics.ts');
    const app = await buildApp(
      { ...t.deps, pool: empty.pool, metrics: new Metrics() },
      { components: { api: false, auth: false } },
    );
    try {
      const response = await app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(response.statusCode, 503);
      assert.deepEqual(response.json(), { status: 'migrations pending' });
    } finally {
      await app.close();
      await empty.drop();
    }
  });

  it('answers /readyz 503 when storage is unreachable', async () => {
    const { createPool } = await import('../src/db/pool.ts');
    const { buildApp } = await import('../src/app.ts');
    const { Metrics } = await import('../src/platform/metrics.ts');
    const pool = createPool('postgres://nobody@127.0.0.1:1/none', 1, 'unreachable');
    const app = await buildApp(
      { ...t.deps, pool, metrics: new Metrics() },
      { components: { api: false, auth: false } },
    );
    try {
      const response = await app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(response.statusCode, 503);
      assert.deepEqual(response.json(), { status: 'storage unreachable' });
    } finally {
      await app.close();
      await pool.end();
    }
  });

  it('answers /readyz 503 within the wait when storage does not answer, with one check for all probes', async () => {
    const locker = await t.db.pool.connect();
    try {
      await locker.query('BEGIN');
      // The readiness check reads schema_migrations: this lock holds it as a stalled database would.
      await locker.query('LOCK TABLE schema_migrations IN ACCESS EXCLUSIVE MODE');
      // A check made within the last second (the test above) is reused: these probes need a new one.
      await delay(1_100);
      const started = Date.now();
      const probes = await Promise.all([1, 2, 3].map(() => t.app.inject({ method: 'GET', url: '/readyz' })));
      const elapsed = Date.now() - started;
      assert.deepEqual(
        probes.map((probe) => [probe.statusCode, probe.json()]),
        Array(3).fill([503, { status: 'storage unreachable' }]),
      );
      assert.ok(elapsed < 10_000, `the probes answered after the wait, not the lock: ${elapsed} ms`);
      const waiting = await t.db.pool.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%schema_migrations%' AND datname = current_database()",
      );
      assert.equal(waiting.rows[0].n, 1, 'one check waits for the database, not one per probe');
    } finally {
      await locker.query('ROLLBACK');
      locker.release();
    }
    await waitUntil(async () => {
      const response = await t.app.inject({ method: 'GET', url: '/readyz' });
      return response.statusCode === 200 && response.json().status === 'ready';
    }, 'ready again once storage answers');
  });

  it('counts requests by route template and status in /metrics', async () => {
    await t.app.inject({ method: 'GET', url: '/healthz' });
    await t.app.inject({ method: 'GET', url: '/no/such/route' });
    const response = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(response.statusCode, 200);
    assert.match(response.headers['content-type'] as string, /^text\/plain/);
    assert.match(response.body, /http_requests_total\{method="GET",route="\/healthz",status="200"\} [1-9]/);
    assert.match(response.body, /http_requests_total\{method="GET",route="unmatched",status="404"\} [1-9]/);
    assert.match(
      response.body,
      /http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/healthz",status="200"\}/,
    );
  });

  it('asks for METRICS_TOKEN on /metrics when it is set, and only there', async () => {
    const token = 'metrics-token-0123456789';
    const guarded = await startTestApp({ env: { METRICS_TOKEN: token } });
    try {
      const scrape = (authorization?: string) =>
        guarded.app.inject({
          method: 'GET',
          url: '/metrics',
          headers: authorization === undefined ? {} : { authorization },
        });
      for (const refused of [
        undefined,
        `Bearer ${token}x`,
        `Bearer ${token.slice(0, -1)}`,
        `Basic ${token}`,
      ]) {
        const response = await scrape(refused);
        assert.equal(response.statusCode, 401, `refused: ${refused}`);
        assert.equal(errorBody(response.body).code, 'UNAUTHORIZED');
        assert.doesNotMatch(response.body, /http_requests_total/);
      }
      const allowed = await scrape(`Bearer ${token}`);
      assert.equal(allowed.statusCode, 200);
      assert.match(allowed.body, /http_requests_total\{method="GET",route="\/metrics",status="401"\} 4/);
      // The probes stay open to the orchestrator (D1).
      for (const url of ['/healthz', '/readyz']) {
        assert.equal((await guarded.app.inject({ method: 'GET', url })).statusCode, 200, url);
      }
    } finally {
      await guarded.close();
    }
  });

  it('documents Idempotency-Key on the routes that honour it, and the operator key on /admin/v1', async () => {
    type Operation = {
      parameters?: { in: string; name: string }[];
      responses: Record<string, unknown>;
      security?: unknown[];
    };
    const document = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, Operation>>;
      components: { securitySchemes: Record<string, { scheme: string }> };
    };
    const idempotencyHeader = (operation: Operation | undefined) =>
      operation?.parameters?.some(
        (parameter) => parameter.in === 'header' && parameter.name === 'Idempotency-Key',
      );
    const cancel = document.paths['/api/v1/transfers/{transfer_id}/cancel']?.post;
    assert.equal(idempotencyHeader(cancel), true);
    assert.ok(cancel?.responses['409'] && cancel.responses['422'], 'cancel documents 409 and 422');
    assert.equal(idempotencyHeader(document.paths['/api/v1/transfers/quotes']?.post), true);
    // A read honours no key.
    assert.equal(idempotencyHeader(document.paths['/api/v1/transfers/{transfer_id}']?.get), false);
    const organisations = document.paths['/admin/v1/organisations']?.post;
    assert.deepEqual(organisations?.security, [{ operatorKey: [] }]);
    assert.ok(organisations?.responses['401'], 'the operator route documents 401');
    assert.equal(document.components.securitySchemes.operatorKey?.scheme, 'bearer');
  });

  it('serves an OpenAPI 3.1 document and a readable reference page', async () => {
    const spec = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(spec.statusCode, 200);
    const document = spec.json();
    assert.equal(document.openapi, '3.1.0');
    assert.ok(document.paths['/realms/{realm}/protocol/openid-connect/token']?.post);
    assert.ok(document.paths['/admin/v1/organisations']?.post);
    const docs = await t.app.inject({ method: 'GET', url: '/docs/' });
    assert.equal(docs.statusCode, 200);
    assert.match(docs.body, /swagger-ui/i);
  });
});
