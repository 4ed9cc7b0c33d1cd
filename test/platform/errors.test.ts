// Generic errors of D5 on the real app: status, code, `error` first and `error_id` last.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { buildApp } from '../../src/app.ts';
import {
  errorBody,
  LogCapture,
  startTestApp,
  TEST_ADMIN_KEY,
  type Tenant,
  type TestApp,
} from '../helpers/app.ts';

const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };

describe('generic errors (D5)', () => {
  let t: TestApp;
  let tenant: Tenant;
  before(async () => {
    t = await startTestApp();
    tenant = await t.tenant();
  });
  after(() => t.close());

  it('answers an unknown route with 404 NOT_FOUND in the envelope', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/v1/nothing-here' });
    assert.equal(response.statusCode, 404);
    const body = errorBody(response.body);
    assert.equal(body.code, 'NOT_FOUND');
    assert.equal(body.field, undefined);
    assert.equal(response.headers['content-type'], 'application/json; charset=utf-8');
  });

  it('answers a wrong method on a known path with 405 and an Allow header', async () => {
    const response = await t.app.inject({ method: 'DELETE', url: '/healthz' });
    assert.equal(response.statusCode, 405);
    assert.equal(errorBody(response.body).code, 'METHOD_NOT_ALLOWED');
    assert.equal(response.headers.allow, 'GET');
  });

  it('answers a wrong method on a fixed path that a path with an id would also match with 405, not 404', async () => {
    const cases: [string, string, string][] = [
      ['GET', '/api/v1/banks/search', 'POST'],
      ['DELETE', '/api/v1/banks/search', 'POST'],
      ['GET', '/api/v1/banks/validate', 'POST'],
      ['GET', '/api/v1/bank-branches/search', 'POST'],
      ['GET', '/api/v1/corridors/search', 'POST'],
      ['GET', '/api/v1/sanctions/screenings/search?x=1', 'POST'],
      ['PATCH', '/api/v1/beneficiaries/search', 'POST'],
      ['GET', '/api/v1/webhooks/subscriptions/search', 'POST'],
      ['HEAD', '/api/v1/transfers/search', 'POST'],
      // The router decodes the path: so does the check.
      ['GET', '/api/v1/banks/%73earch', 'POST'],
    ];
    for (const [method, url, allow] of cases) {
      const response = await t.app.inject({ method: method as 'GET', url, headers: tenant.auth });
      assert.equal(response.statusCode, 405, `${method} ${url}: ${response.body}`);
      assert.equal(response.headers.allow, allow, `${method} ${url}`);
      if (method !== 'HEAD') assert.equal(errorBody(response.body).code, 'METHOD_NOT_ALLOWED');
    }
    // An id that is no fixed path is still looked up: 404 in the area's words.
    const unknown = await t.app.inject({
      method: 'GET',
      url: '/api/v1/banks/searching',
      headers: tenant.auth,
    });
    assert.equal(unknown.statusCode, 404);
    assert.equal(errorBody(unknown.body).error, 'No bank matches the id');
  });

  it('answers malformed JSON with 400 BAD_REQUEST', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/organisations',
      headers: { ...admin, 'content-type': 'application/json' },
      payload: '{"name": "Acme",',
    });
    assert.equal(response.statusCode, 400);
    assert.equal(errorBody(response.body).code, 'BAD_REQUEST');
  });

  it('treats an empty JSON body as no body: 422 where a body is required', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/organisations',
      headers: { ...admin, 'content-type': 'application/json' },
      payload: '',
    });
    assert.equal(response.statusCode, 422);
    assert.equal(errorBody(response.body).code, 'VALIDATION_FAILED');
  });

  it('answers a body that repeats a key with 400 BAD_REQUEST naming the key', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/organisations',
      headers: { ...admin, 'content-type': 'application/json' },
      payload: '{"name":"first","name":"second"}',
    });
    assert.equal(response.statusCode, 400);
    const body = errorBody(response.body);
    assert.equal(body.code, 'BAD_REQUEST');
    assert.match(body.error, /repeats the key "name"/);
  });

  it('answers absurdly deep nesting with 400 BAD_REQUEST, not 500', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/organisations',
      headers: { ...admin, 'content-type': 'application/json' },
      payload: `${'['.repeat(500_000)}${']'.repeat(500_000)}`,
    });
    assert.ok([400, 422].includes(response.statusCode), `status ${response.statusCode}`);
    assert.notEqual(errorBody(response.body).code, 'INTERNAL_ERROR');
  });

  it('answers a body nested deeper than 64 levels with 400 BAD_REQUEST, and reads one of 64', async () => {
    const post = (depth: number) =>
      t.app.inject({
        method: 'POST',
        url: '/admin/v1/organisations',
        headers: { ...admin, 'content-type': 'application/json' },
        payload: `{"name":"x","deep":${'['.repeat(depth - 1)}"]"${']'.repeat(depth - 1)}}`,
      });
    const deep = await post(65);
    assert.equal(deep.statusCode, 400);
    assert.deepEqual(
      [errorBody(deep.body).code, errorBody(deep.body).error],
      ['BAD_REQUEST', 'The request body nests arrays and objects deeper than 64 levels'],
    );
    // 64 levels are read: the route then refuses the unknown key, naming it.
    const read = await post(64);
    assert.equal(read.statusCode, 422);
    assert.equal(errorBody(read.body).field, 'deep');
  });

  it('answers a prototype-poisoning body with 400 BAD_REQUEST', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/organisations',
      headers: { ...admin, 'content-type': 'application/json' },
      payload: '{"name":"x","__proto__":{"admin":true}}',
    });
    assert.equal(response.statusCode, 400);
    assert.equal(errorBody(response.body).code, 'BAD_REQUEST');
  });

  it('answers a wrong content type with 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/organisations',
      headers: { ...admin, 'content-type': 'text/plain' },
      payload: 'name=Acme',
    });
    assert.equal(response.statusCode, 415);
    assert.equal(errorBody(response.body).code, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers a body over 1 MiB with 413 PAYLOAD_TOO_LARGE', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/organisations',
      headers: { ...admin, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'x'.repeat(1024 * 1024) }),
    });
    assert.equal(response.statusCode, 413);
    assert.equal(errorBody(response.body).code, 'PAYLOAD_TOO_LARGE');
  });

  it('answers a body that is not an object with 422 VALIDATION_FAILED', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/organisations',
      headers: { ...admin, 'content-type': 'application/json' },
      payload: '[1,2]',
    });
    assert.equal(response.statusCode, 422);
    assert.equal(errorBody(response.body).code, 'VALIDATION_FAILED');
  });

  it('keeps a request id on every response log line and reuses a given X-Request-Id', async () => {
    await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-abc-123' } });
    assert.ok(t.logs.lines.some((line) => line.includes('"request_id":"trace-abc-123"')));
  });

  it('logs the error_id of every error it returns', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/v1/missing' });
    const { error_id } = errorBody(response.body);
    assert.ok(t.logs.lines.some((line) => line.includes(error_id)));
  });

  it('never logs the Authorization header', async () => {
    await t.app.inject({ method: 'GET', url: '/healthz', headers: tenant.auth });
    assert.ok(!t.logs.text.includes(tenant.token));
  });

  it('answers storage that cannot be reached with 503 SERVICE_UNAVAILABLE and Retry-After, and anything else with 500', async () => {
    const { createPool } = await import('../../src/db/pool.ts');
    const unreachable = createPool('postgres://nobody@127.0.0.1:1/none', 1, 'unreachable');
    const app = await buildApp(t.deps, {
      components: { api: false, auth: false },
      logger: pino({ level: 'silent' }),
    });
    app.get('/refused', async () => unreachable.query('SELECT 1'));
    app.get('/shutting-down', async () => {
      throw Object.assign(new Error('terminating connection due to administrator command'), {
        code: '57P01',
      });
    });
    app.get('/other-sql', async () => {
      throw Object.assign(new Error('division by zero'), { code: '22012' });
    });
    await app.ready();
    try {
      for (const url of ['/refused', '/shutting-down']) {
        const response = await app.inject({ method: 'GET', url });
        assert.equal(response.statusCode, 503, url);
        assert.equal(response.headers['retry-after'], '1');
        const body = errorBody(response.body);
        assert.equal(body.code, 'SERVICE_UNAVAILABLE');
        assert.equal(
          body.error,
          'The service is temporarily unavailable; retry after the Retry-After interval',
        );
      }
      const other = await app.inject({ method: 'GET', url: '/other-sql' });
      assert.equal(other.statusCode, 500);
      assert.equal(errorBody(other.body).code, 'INTERNAL_ERROR');
      assert.equal(other.headers['retry-after'], undefined);
    } finally {
      await app.close();
      await unreachable.end();
    }
  });

  it('answers an unexpected failure with 500 INTERNAL_ERROR and no internals, logging the cause', async () => {
    const logs = new LogCapture();
    const app = await buildApp(t.deps, {
      components: { api: false, auth: false },
      logger: pino({ level: 'info' }, logs),
    });
    app.get('/boom', async () => {
      throw new Error('database password is hunter2');
    });
    await app.ready();
    try {
      const response = await app.inject({ method: 'GET', url: '/boom' });
      assert.equal(response.statusCode, 500);
      const body = errorBody(response.body);
      assert.equal(body.code, 'INTERNAL_ERROR');
      assert.ok(!response.body.includes('hunter2'));
      const logged = logs.lines.find((line) => line.includes(body.error_id));
      assert.ok(logged?.includes('hunter2'), 'the log line with the error_id carries the cause');
    } finally {
      await app.close();
    }
  });
});
