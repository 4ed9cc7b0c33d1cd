// The verified-token cache of the bearer check: a token that verified is reused until it expires, and
// never past its expiry.
import assert from 'node:assert/strict';
import { after, before, describe, it, mock } from 'node:test';
import { startTestApp, type Tenant, type TestApp } from '../helpers/app.ts';

describe('verified-token cache', () => {
  let t: TestApp;
  let tenant: Tenant;
  before(async () => {
    t = await startTestApp({ env: { TOKEN_TTL_SECONDS: '60' } });
    tenant = await t.tenant();
  });
  after(async () => {
    mock.timers.reset();
    await t.close();
  });

  const eventTypes = () =>
    t.app.inject({ method: 'GET', url: '/api/v1/webhooks/event-types', headers: tenant.auth });

  it('accepts the same token on every request while it is valid', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await eventTypes()).statusCode, 200);
  });

  it('refuses a token that verified earlier once its expiry has passed', async () => {
    assert.equal((await eventTypes()).statusCode, 200, 'verified and cached');
    mock.timers.enable({ apis: ['Date'], now: Date.now() + 120_000 });
    const response = await eventTypes();
    mock.timers.reset();
    assert.equal(response.statusCode, 401);
    assert.deepEqual(response.json(), { message: 'Unauthorized' });
  });
});
