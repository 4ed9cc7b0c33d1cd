// Generic errors of D5 on the real app: status, code, `error` first and `error_id` last.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { errorBody, startTestApp, type Tenant, type TestApp } from './helpers/app.ts';

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
  });

  it('answers a wrong method on a known path with 405 and an Allow header', async () => {
    const response = await t.app.inject({ method: 'DELETE', url: '/healthz' });
    assert.equal(response.statusCode, 405);
    assert.equal(errorBody(response.body).code, 'METHOD_NOT_ALLOWED');
    assert.equal(response.headers.allow, 'GET');
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
});
