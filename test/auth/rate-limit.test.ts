// Rate limits (D12, D5): per client on token-protected routes, failed token requests per client id and
// per address; in memory, and shared through Redis by several processes when REDIS_URL is set.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import { errorBody, startTestApp, type Tenant, type TestApp } from '../helpers/app.ts';
import { PROBE, postToken, probeRoutes } from './support.ts';

const GRANT = { grant_type: 'client_credentials' };

function assertRateLimited(response: LightMyRequestResponse, limit: number): void {
  assert.equal(response.statusCode, 429, response.body);
  assert.equal(errorBody(response.body).code, 'RATE_LIMIT_EXCEEDED');
  assert.equal(response.headers['ratelimit-limit'], String(limit));
  assert.equal(response.headers['ratelimit-remaining'], '0');
  const reset = Number(response.headers['ratelimit-reset']);
  assert.ok(reset >= 1 && reset <= 60, `RateLimit-Reset ${reset}`);
  assert.equal(response.headers['retry-after'], String(reset));
}

describe('API rate limit per client (in memory)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ routes: probeRoutes, env: { RATE_LIMIT_MAX: '3' } });
  });
  after(() => t.close());

  const get = (tenant: Tenant) => t.app.inject({ method: 'GET', url: PROBE, headers: tenant.auth });
  const post = (tenant: Tenant, payload: string) =>
    t.app.inject({
      method: 'POST',
      url: PROBE,
      headers: { ...tenant.auth, 'content-type': 'application/json' },
      payload,
    });

  it('counts down in RateLimit-* headers, then answers 429 RATE_LIMIT_EXCEEDED with Retry-After', async () => {
    const tenant = await t.tenant();
    for (const remaining of ['2', '1', '0']) {
      const response = await get(tenant);
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['ratelimit-limit'], '3');
      assert.equal(response.headers['ratelimit-remaining'], remaining);
      assert.ok(Number(response.headers['ratelimit-reset']) >= 1);
      assert.equal(response.headers['retry-after'], undefined);
    }
    assertRateLimited(await get(tenant), 3);
    assertRateLimited(await get(tenant), 3);
  });

  it('counts each client on its own', async () => {
    const busy = await t.tenant();
    const quiet = await t.tenant();
    for (let i = 0; i < 3; i++) assert.equal((await get(busy)).statusCode, 200);
    assertRateLimited(await get(busy), 3);
    const response = await get(quiet);
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['ratelimit-remaining'], '2');
  });

  it('counts every token-protected route of a client together', async () => {
    const tenant = await t.tenant();
    assert.equal((await get(tenant)).statusCode, 200);
    assert.equal((await post(tenant, '{"name":"a"}')).statusCode, 200);
    assert.equal((await get(tenant)).statusCode, 200);
    assertRateLimited(await post(tenant, '{"name":"b"}'), 3);
  });

  it('checks the token before the rate limit: a bad token is 401 even for a limited client', async () => {
    const tenant = await t.tenant();
    for (let i = 0; i < 4; i++) await get(tenant);
    assertRateLimited(await get(tenant), 3);
    const response = await t.app.inject({
      method: 'GET',
      url: PROBE,
      headers: { authorization: 'Bearer x' },
    });
    assert.equal(response.statusCode, 401);
    assert.deepEqual(response.json(), { message: 'Unauthorized' });
    assert.equal(response.headers['ratelimit-limit'], undefined, 'unauthenticated requests are not counted');
  });

  it('checks the rate limit before permission and body: 429 wins over 403, 400 and 422', async () => {
    const reader = await t.tenant(['webhooks:read']);
    for (let i = 0; i < 3; i++) assert.equal((await get(reader)).statusCode, 200);
    assertRateLimited(await post(reader, '{"name":"x"}'), 3); // would be 403
    const writer = await t.tenant();
    for (let i = 0; i < 3; i++) assert.equal((await get(writer)).statusCode, 200);
    assertRateLimited(await post(writer, '{"name": '), 3); // would be 400
    assertRateLimited(await post(writer, '{"unknown":1}'), 3); // would be 422
  });

  it('counts a request refused for permission (403 after the rate limit)', async () => {
    const reader = await t.tenant(['webhooks:read']);
    const forbidden = await post(reader, '{"name":"x"}');
    assert.equal(forbidden.statusCode, 403);
    assert.equal(forbidden.headers['ratelimit-remaining'], '2');
  });

  it('does not limit routes without a token (health, token endpoint, operator API)', async () => {
    for (let i = 0; i < 5; i++) {
      const health = await t.app.inject({ method: 'GET', url: '/healthz' });
      assert.equal(health.statusCode, 200);
      assert.equal(health.headers['ratelimit-limit'], undefined);
    }
    for (let i = 0; i < 5; i++) {
      const token = await postToken(t.app, {
        ...GRANT,
        client_id: 'sandbox-client',
        client_secret: 'sandbox-secret',
      });
      assert.equal(token.statusCode, 200);
      assert.equal(token.headers['ratelimit-limit'], undefined);
    }
  });
});

describe('failed token requests (D12)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ env: { TOKEN_FAILURE_LIMIT_CLIENT: '3', TOKEN_FAILURE_LIMIT_ADDRESS: '5' } });
  });
  after(() => t.close());

  let addresses = 0;
  /** Each test uses addresses of its own, so address counts do not leak between tests. */
  const newAddress = (): string => `10.0.0.${++addresses}`;
  const attempt = (address: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: '/realms/sandbox/protocol/openid-connect/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload: new URLSearchParams(fields).toString(),
      remoteAddress: address,
    });

  function assertTooMany(response: LightMyRequestResponse): void {
    assert.equal(response.statusCode, 429, response.body);
    const body = response.json() as Record<string, string>;
    assert.deepEqual(Object.keys(body), ['error', 'error_description']);
    assert.equal(body.error, 'invalid_request');
    assert.match(body.error_description!, /retry later/);
    const retryAfter = Number(response.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    assert.equal(response.headers['cache-control'], 'no-store');
  }

  it('refuses a client id after TOKEN_FAILURE_LIMIT_CLIENT failures, even with the right secret', async () => {
    const tenant = await t.tenant();
    // Spread over addresses so that only the client count can trip.
    for (let i = 0; i < 3; i++) {
      const response = await attempt(newAddress(), {
        ...GRANT,
        client_id: tenant.clientId,
        client_secret: 'wrong',
      });
      assert.equal(response.statusCode, 401);
    }
    assertTooMany(
      await attempt(newAddress(), {
        ...GRANT,
        client_id: tenant.clientId,
        client_secret: tenant.clientSecret,
      }),
    );
    // Basic authentication presents the same client id.
    const basic = Buffer.from(`${tenant.clientId}:${tenant.clientSecret}`).toString('base64');
    assertTooMany(await attempt(newAddress(), GRANT, { authorization: `Basic ${basic}` }));
    // Another client is unaffected.
    const other = await t.tenant();
    const ok = await attempt(newAddress(), {
      ...GRANT,
      client_id: other.clientId,
      client_secret: other.clientSecret,
    });
    assert.equal(ok.statusCode, 200);
  });

  it('refuses an address after TOKEN_FAILURE_LIMIT_ADDRESS failures of any kind', async () => {
    const address = newAddress();
    const failures = [
      { ...GRANT, client_id: 'nobody-1', client_secret: 'x' }, // 401 invalid_client
      { ...GRANT, client_id: 'nobody-2', client_secret: 'x' },
      { grant_type: 'password', client_id: 'nobody-3', client_secret: 'x' }, // 400 unsupported
      { client_id: 'nobody-4', client_secret: 'x' }, // 400 invalid_request
      { ...GRANT, client_id: 'sandbox-client', client_secret: 'x' }, // 401 unauthorized_clientclient
    ];
    for (const fields of failures) {
      const response = await attempt(address, fields);
      assert.ok([400, 401].includes(response.statusCode), response.body);
    }
    // Even correct credentials, and even a JSON body, get 429 from this address now.
    assertTooMany(
      await attempt(address, { ...GRANT, client_id: 'sandbox-client', client_secret: 'sandbox-secret' }),
    );
    const json = await t.app.inject({
      method: 'POST',
      url: '/realms/sandbox/protocol/openid-connect/token',
      headers: { 'content-type': 'application/json' },
      payload: '{}',
      remoteAddress: address,
    });
    assertTooMany(json);
    // Another address is unaffected.
    const ok = await attempt(newAddress(), {
      ...GRANT,
      client_id: 'sandbox-client',
      client_secret: 'sandbox-secret',
    });
    assert.equal(ok.statusCode, 200);
  });

  it('counts a JSON body as a failed request', async () => {
    const address = newAddress();
    for (let i = 0; i < 5; i++) {
      const response = await t.app.inject({
        method: 'POST',
        url: '/realms/sandbox/protocol/openid-connect/token',
        headers: { 'content-type': 'application/json' },
        payload: '{}',
        remoteAddress: address,
      });
      assert.equal(response.statusCode, 400);
    }
    assertTooMany(
      await attempt(address, { ...GRANT, client_id: 'sandbox-client', client_secret: 'sandbox-secret' }),
    );
  });

  it('does not count successful requests', async () => {
    const address = newAddress();
    for (let i = 0; i < 8; i++) {
      const response = await attempt(address, {
        ...GRANT,
        client_id: 'sandbox-client',
        client_secret: 'sandbox-secret',
      });
      assert.equal(response.statusCode, 200);
    }
  });
});

describe('rate limits shared through Redis by two API processes', () => {
  const redisUrl = process.env.REDIS_URL;
  const skip = redisUrl ? false : 'REDIS_URL is not set: the shared-count test needs a Redis server';
  const prefix = `pstest-${process.pid}-${randomBytes(4).toString('hex')}:`;
  let first: TestApp | undefined;
  let second: TestApp | undefined;
  let redis: Redis | undefined;

  before(async () => {
    if (!redisUrl) return;
    const env = {
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: prefix,
      RATE_LIMIT_MAX: '5',
      TOKEN_FAILURE_LIMIT_CLIENT: '2',
    };
    first = await startTestApp({ routes: probeRoutes, env });
    // A second application instance on the same database, with its own Redis connection and no
    // memory shared with the first: what a second API process is.
    second = await startTestApp({ routes: probeRoutes, env, db: first.db });
    redis = new Redis(redisUrl);
  });
  after(async () => {
    if (redis) {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
    await second?.close();
    await first?.close();
  });

  it('keeps the sum of allowed requests across both processes at RATE_LIMIT_MAX', { skip }, async () => {
    const tenant = await first!.tenant();
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const app = i % 2 === 0 ? first!.app : second!.app;
      const response = await app.inject({ method: 'GET', url: PROBE, headers: tenant.auth });
      statuses.push(response.statusCode);
      if (response.statusCode === 200) assert.equal(response.headers['ratelimit-remaining'], String(4 - i));
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429, 429, 429, 429]);
    const keys = await redis!.keys(`${prefix}*`);
    assert.ok(
      keys.some((key) => key.includes(tenant.clientId)),
      `counted in Redis under ${prefix}`,
    );
  });

  it('keeps the sum of concurrent allowed requests at RATE_LIMIT_MAX', { skip }, async () => {
    const tenant = await first!.tenant();
    const responses = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        (i % 2 === 0 ? first! : second!).app.inject({ method: 'GET', url: PROBE, headers: tenant.auth }),
      ),
    );
    const allowed = responses.filter((response) => response.statusCode === 200).length;
    const limited = responses.filter((response) => response.statusCode === 429).length;
    assert.equal(allowed, 5);
    assert.equal(limited, 11);
  });

  it('shares the failed-token counts too', { skip }, async () => {
    const tenant = await first!.tenant();
    const fields = { ...GRANT, client_id: tenant.clientId, client_secret: 'wrong' };
    assert.equal((await postToken(first!.app, fields)).statusCode, 401);
    assert.equal((await postToken(second!.app, fields)).statusCode, 401);
    const blocked = await postToken(first!.app, { ...fields, client_secret: tenant.clientSecret });
    assert.equal(blocked.statusCode, 429);
    assert.equal((blocked.json() as { error: string }).error, 'invalid_request');
    assert.ok(Number(blocked.headers['retry-after']) >= 1);
  });
});

describe('an unreachable Redis', () => {
  it('does not take the API or the token endpoint down: requests pass unlimited', async () => {
    const t = await startTestApp({
      routes: probeRoutes,
      env: { REDIS_URL: 'redis://127.0.0.1:9', RATE_LIMIT_MAX: '1', TOKEN_FAILURE_LIMIT_CLIENT: '1' },
    });
    try {
      const tenant = await t.tenant();
      for (let i = 0; i < 3; i++) {
        const response = await t.app.inject({ method: 'GET', url: PROBE, headers: tenant.auth });
        assert.equal(response.statusCode, 200);
      }
      for (let i = 0; i < 3; i++) {
        const response = await postToken(t.app, { ...GRANT, client_id: tenant.clientId, client_secret: 'x' });
        assert.equal(response.statusCode, 401);
      }
      assert.ok(t.logs.text.includes('rate-limit store (Redis)'), 'the outage is logged');
    } finally {
      await t.close();
    }
  });
});
