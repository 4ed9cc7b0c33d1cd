// Limits under concurrency (issue 7; contract sections 7 and 8, D9, D12): the 10-subscription slot limit
// and endpoint_url uniqueness hold against 50 parallel creates, through one app and through two app
// instances on one database; the API rate limit holds against concurrent bursts from several `api`
// PROCESSES that share one Redis.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { errorBody, requestToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.ts';
import { type ServiceProcess, startService } from '../helpers/process.ts';

const SUBSCRIPTIONS = '/api/v1/webhooks/subscriptions';
const CODES = ['transfer.completed'];

type Inject = TestApp['app']['inject'];

function create(inject: Inject, tenant: Tenant, endpointUrl: string) {
  return inject({
    method: 'POST',
    url: SUBSCRIPTIONS,
    headers: { ...tenant.auth, 'content-type': 'application/json' },
    payload: JSON.stringify({ endpoint_url: endpointUrl, event_type_codes: CODES }),
  });
}

async function countNotDeleted(t: TestApp, organisationId: string, endpointUrl?: string): Promise<number> {
  const result = await t.db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_subscriptions
     WHERE organisation_id = $1 AND status <> 'deleted' AND ($2::text IS NULL OR endpoint_url_normalized = $2)`,
    [organisationId, endpointUrl ?? null],
  );
  return result.rows[0]!.n;
}

/** Status code -> count, e.g. { 201: 10, 400: 40 }. */
function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

/** Every refusal in the platform envelope with the contract's code; a 409 names no field (D5). */
function assertRefusals(responses: { statusCode: number; body: string }[]): void {
  for (const response of responses) {
    if (response.statusCode === 201) continue;
    const body = errorBody(response.body);
    if (response.statusCode === 400) assert.equal(body.code, 'BAD_REQUEST');
    else if (response.statusCode === 409) {
      assert.equal(body.code, 'CONFLICT');
      assert.equal(body.field, undefined, 'a 409 names no field');
    } else assert.fail(`unexpected ${response.statusCode}: ${response.body}`);
  }
}

describe('subscription limits under 50 parallel creates (D9)', () => {
  let first: TestApp;
  let second: TestApp;
  before(async () => {
    first = await startTestApp();
    // A second application instance on the same database, sharing no memory with the first: what a
    // second API process is.
    second = await startTestApp({ db: first.db });
  });
  after(async () => {
    await second?.close();
    await first?.close();
  });

  const both = (i: number) =>
    (i % 2 === 0 ? first : second).app.inject.bind((i % 2 === 0 ? first : second).app);

  for (const [label, pick] of [
    ['one app', (_i: number) => undefined],
    ['two app instances on one database', (i: number) => i],
  ] as const) {
    it(`${label}: 50 creates on 50 URLs make exactly 10 subscriptions, 40 are 400 BAD_REQUEST`, async () => {
      const tenant = await first.tenant();
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, i) => {
          const which = pick(i);
          const inject = which === undefined ? first.app.inject.bind(first.app) : both(which);
          return create(inject, tenant, `https://hooks.example.com/slot/${i}`);
        }),
      );
      assert.deepEqual(tally(responses.map((r) => r.statusCode)), { 201: 10, 400: 40 });
      assertRefusals(responses);
      assert.equal(await countNotDeleted(first, tenant.organisationId), 10);
    });

    it(`${label}: 50 creates of one URL (spelled differently) make exactly 1 subscription, 49 are 409 CONFLICT`, async () => {
      const tenant = await first.tenant();
      // D9: uniqueness compares the normalised URL (lower-case scheme and host, default port dropped).
      const spellings = [
        'https://hooks.example.com/same',
        'HTTPS://HOOKS.EXAMPLE.COM/same',
        'https://Hooks.Example.com:443/same',
      ];
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, i) => {
          const which = pick(i);
          const inject = which === undefined ? first.app.inject.bind(first.app) : both(which);
          return create(inject, tenant, spellings[i % spellings.length]!);
        }),
      );
      assert.deepEqual(tally(responses.map((r) => r.statusCode)), { 201: 1, 409: 49 });
      assertRefusals(responses);
      assert.equal(await countNotDeleted(first, tenant.organisationId), 1);
      assert.equal(await countNotDeleted(first, tenant.organisationId, 'https://hooks.example.com/same'), 1);
    });

    it(`${label}: 25 URLs twice each make exactly 10 distinct subscriptions; their twins are 409, the rest 400`, async () => {
      const tenant = await first.tenant();
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, i) => {
          const which = pick(i);
          const inject = which === undefined ? first.app.inject.bind(first.app) : both(which);
          return create(inject, tenant, `https://hooks.example.com/twin/${i % 25}`);
        }),
      );
      // Checks run in the D9 order (409 before the slot limit) and creates are serialised per
      // organisation: each created URL's twin sees the URL taken, every other URL sees the slots full.
      assert.deepEqual(tally(responses.map((r) => r.statusCode)), { 201: 10, 409: 10, 400: 30 });
      assertRefusals(responses);
      const urls = await first.db.pool.query<{ endpoint_url_normalized: string }>(
        `SELECT endpoint_url_normalized FROM webhook_subscriptions WHERE organisation_id = $1 AND status <> 'deleted'`,
        [tenant.organisationId],
      );
      assert.equal(new Set(urls.rows.map((row) => row.endpoint_url_normalized)).size, 10);
    });
  }

  it('pausing frees no slot; deleting one frees exactly one, even against 50 parallel creates', async () => {
    const tenant = await first.tenant();
    const created = [];
    for (let i = 0; i < 10; i++) {
      const response = await create(
        first.app.inject.bind(first.app),
        tenant,
        `https://hooks.example.com/p/${i}`,
      );
      assert.equal(response.statusCode, 201);
      created.push((response.json() as { id: string }).id);
    }
    const patch = (id: string, status: string) =>
      first.app.inject({
        method: 'PATCH',
        url: `${SUBSCRIPTIONS}/${id}`,
        headers: { ...tenant.auth, 'content-type': 'application/json' },
        payload: JSON.stringify({ status }),
      });
    assert.equal((await patch(created[0]!, 'active')).statusCode, 200);
    assert.equal((await patch(created[0]!, 'paused')).statusCode, 200);
    const whilePaused = await Promise.all(
      Array.from({ length: 50 }, (_, i) => create(both(i), tenant, `https://hooks.example.com/q/${i}`)),
    );
    assert.deepEqual(tally(whilePaused.map((r) => r.statusCode)), { 400: 50 });

    const deleted = await first.app.inject({
      method: 'DELETE',
      url: `${SUBSCRIPTIONS}/${created[1]}`,
      headers: tenant.auth,
    });
    assert.equal(deleted.statusCode, 200);
    const afterDelete = await Promise.all(
      Array.from({ length: 50 }, (_, i) => create(both(i), tenant, `https://hooks.example.com/r/${i}`)),
    );
    assert.deepEqual(tally(afterDelete.map((r) => r.statusCode)), { 201: 1, 400: 49 });
    assert.equal(await countNotDeleted(first, tenant.organisationId), 10);
  });

  it('a deleted subscription frees its URL: 50 parallel re-creates of it make exactly 1', async () => {
    const tenant = await first.tenant();
    const url = 'https://hooks.example.com/reuse';
    const original = await create(first.app.inject.bind(first.app), tenant, url);
    assert.equal(original.statusCode, 201);
    const id = (original.json() as { id: string }).id;
    assert.equal(
      (await first.app.inject({ method: 'DELETE', url: `${SUBSCRIPTIONS}/${id}`, headers: tenant.auth }))
        .statusCode,
      200,
    );
    const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => create(both(i), tenant, url)));
    assert.deepEqual(tally(responses.map((r) => r.statusCode)), { 201: 1, 409: 49 });
    assert.equal(await countNotDeleted(first, tenant.organisationId, url), 1);
  });
});

describe('API rate limit shared through Redis by three api PROCESSES (D12)', () => {
  const redisUrl = process.env.REDIS_URL;
  const skip = redisUrl ? false : 'REDIS_URL is not set: the shared rate-limit tests need a Redis server';
  const LIMIT = 20;
  const prefix = `pstest-limits-${process.pid}-${randomBytes(4).toString('hex')}:`;
  let issuer: TestApp | undefined;
  const apis: ServiceProcess[] = [];
  let redis: Redis | undefined;

  before(async () => {
    if (!redisUrl) return;
    // Tokens come from an in-process app on the same database (the built-in issuer's keys are shared
    // through storage); the three api processes verify them and count requests in Redis.
    issuer = await startTestApp();
    const env = {
      DATABASE_URL: issuer.db.url,
      APP_ENV: 'sandbox',
      SECRETS_ENCRYPTION_KEY: 'a'.repeat(64),
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: prefix,
      RATE_LIMIT_MAX: String(LIMIT),
      RATE_LIMIT_WINDOW_MS: '60000',
      DATABASE_POOL_SIZE: '4',
    };
    apis.push(...(await Promise.all([0, 1, 2].map(() => startService('api', env)))));
    redis = new Redis(redisUrl);
  });
  after(async () => {
    for (const api of apis) await api.stop('SIGTERM');
    if (redis) {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
    await issuer?.close();
  });

  /** One request to one of the processes, through a real socket. */
  const call = async (api: ServiceProcess, token: string, i: number) => {
    // Every token-protected route counts against the same per-client budget.
    const request =
      i % 3 === 0
        ? fetch(`${api.baseUrl}/api/v1/webhooks/event-types`, {
            headers: { authorization: `Bearer ${token}` },
          })
        : fetch(`${api.baseUrl}/api/v1/webhooks/${i % 3 === 1 ? 'subscriptions' : 'events'}/search`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: '{}',
          });
    const response = await request;
    return { status: response.status, headers: response.headers, body: await response.text() };
  };

  const burst = (token: string, size: number) =>
    Promise.all(Array.from({ length: size }, (_, i) => call(apis[i % apis.length]!, token, i)));

  it('concurrent bursts across three processes: exactly RATE_LIMIT_MAX answers are not 429', {
    skip,
  }, async () => {
    const tenant = await issuer!.tenant();
    // Two bursts of 45 fired at once, spread over the three processes.
    const results = (await Promise.all([burst(tenant.token, 45), burst(tenant.token, 45)])).flat();
    const allowed = results.filter((r) => r.status !== 429);
    assert.equal(allowed.length, LIMIT, `allowed ${allowed.length} of 90`);
    assert.ok(
      allowed.every((r) => r.status === 200),
      'the allowed requests succeeded',
    );
    const limited = results.filter((r) => r.status === 429);
    assert.equal(limited.length, 90 - LIMIT);
    for (const response of limited) {
      assert.equal(errorBody(response.body).code, 'RATE_LIMIT_EXCEEDED');
      assert.ok(Number(response.headers.get('retry-after')) >= 1, 'Retry-After');
      assert.equal(response.headers.get('ratelimit-limit'), String(LIMIT));
      assert.equal(response.headers.get('ratelimit-remaining'), '0');
    }
    // The window is spent: a later burst is refused in full, by every process.
    const later = await burst(tenant.token, 9);
    assert.deepEqual(tally(later.map((r) => r.status)), { 429: 9 });
  });

  it('each client has its own budget, also when their bursts interleave across processes', {
    skip,
  }, async () => {
    const [a, b] = [await issuer!.tenant(), await issuer!.tenant()];
    const results = await Promise.all([burst(a.token, 40), burst(b.token, 40)]);
    for (const [i, responses] of results.entries()) {
      const allowed = responses.filter((r) => r.status !== 429).length;
      assert.equal(allowed, LIMIT, `client ${i}: ${allowed} allowed of 40`);
    }
  });

  it('a second token of the same client shares the client budget', { skip }, async () => {
    const tenant = await issuer!.tenant();
    const another = await requestToken(issuer!.app, tenant.clientId, tenant.clientSecret);
    assert.notEqual(another, tenant.token);
    const results = await Promise.all([burst(tenant.token, 30), burst(another, 30)]);
    assert.equal(results.flat().filter((r) => r.status !== 429).length, LIMIT);
  });
});
