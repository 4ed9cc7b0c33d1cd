// TRUST_PROXY: behind a trusted proxy the token failure limit counts per client address from
// X-Forwarded-For, so one client's failures do not lock out everyone behind the same proxy (D12).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp } from '../helpers/app.ts';

const badToken = (app: Awaited<ReturnType<typeof startTestApp>>['app'], forwardedFor: string) =>
  app.inject({
    method: 'POST',
    url: '/realms/sandbox/protocol/openid-connect/token',
    remoteAddress: '10.0.0.5',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': forwardedFor },
    payload: `grant_type=client_credentials&client_id=nobody-${Math.random()}&client_secret=wrong`,
  });

describe('TRUST_PROXY', () => {
  it('counts failures per forwarded client address when the proxy is trusted', async () => {
    const t = await startTestApp({ env: { TRUST_PROXY: '10.0.0.0/8', TOKEN_FAILURE_LIMIT_ADDRESS: '2' } });
    try {
      assert.equal((await badToken(t.app, '203.0.113.1')).statusCode, 401);
      assert.equal((await badToken(t.app, '203.0.113.1')).statusCode, 401);
      assert.equal((await badToken(t.app, '203.0.113.1')).statusCode, 429, 'this client reached its limit');
      assert.equal(
        (await badToken(t.app, '203.0.113.2')).statusCode,
        401,
        'another client behind the proxy is not',
      );
    } finally {
      await t.close();
    }
  });

  it('ignores X-Forwarded-For when no proxy is trusted (the default)', async () => {
    const t = await startTestApp({ env: { TOKEN_FAILURE_LIMIT_ADDRESS: '2' } });
    try {
      assert.equal((await badToken(t.app, '203.0.113.1')).statusCode, 401);
      assert.equal((await badToken(t.app, '203.0.113.2')).statusCode, 401);
      assert.equal(
        (await badToken(t.app, '203.0.113.3')).statusCode,
        429,
        'all share the connecting address',
      );
    } finally {
      await t.close();
    }
  });
});
