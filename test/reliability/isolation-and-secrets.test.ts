// Isolation and secrets (issue 7). Two organisations, with events and attempts made by the real delivery
// engine: every endpoint that takes an id answers another organisation's id exactly as an id that does not
// exist, and changes nothing; no search shows another organisation's rows whatever the filter or free
// text; tokens of a deleted client, of another realm, forged with another key, expired, or `alg: none`
// are 401 on every endpoint; signing and client secrets appear only in the responses that return them,
// never in an error, and never in clear text in any column of any table.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { generateKeyPair, SignJWT } from 'jose';
import { keyStoreFor } from '../../src/auth/keys.ts';
import { newUuid } from '../../src/platform/ids.ts';
import { startTestWorker, waitForEventStatus } from '../delivery/fixtures.ts';
import {
  errorBody,
  recordIssuedSecret,
  requestToken,
  startTestApp,
  TEST_ADMIN_KEY,
  type Tenant,
  type TestApp,
} from '../helpers/app.ts';
import { columnsHolding, textColumns } from '../helpers/column-scan.ts';
import { answer, type HttpsReceiver, startHttpsReceiver } from '../helpers/https-receiver.ts';
import {
  ATTEMPTS,
  activeSubscription,
  type Client,
  client,
  EVENT_TYPES_URL,
  EVENTS,
  type EventJson,
  type Method,
  publishTestEvent,
  SANDBOX_EVENTS,
  SUBSCRIPTIONS,
  type SubscriptionJson,
} from '../webhooks/fixtures.ts';

const SIGNING_SECRET = /whsec_[0-9a-f]{64}/;

interface World {
  subscription: SubscriptionJson;
  event: EventJson;
  attemptId: number;
}

describe('isolation and secrets (issue 7)', () => {
  let t: TestApp;
  let receiver: HttpsReceiver;
  let owner: Client;
  let other: Client;
  let mine: World;
  let theirs: World;
  /** Every secret issued during the file: signing secrets (create, rotate) and client secrets. */
  const issued = new Set<string>();
  const remember = (secret: string | undefined) => {
    assert.ok(secret, 'a secret was returned');
    issued.add(secret);
    recordIssuedSecret(secret);
  };

  /** A tenant whose client secret is remembered for the scans. */
  const tenant = async (app: TestApp = t): Promise<Tenant> => {
    const created = await app.tenant();
    remember(created.clientSecret);
    return created;
  };

  /** An active subscription on the receiver, one dead_letter event, one failed attempt by the real engine. */
  async function world(api: Client, path: string): Promise<World> {
    const subscription = await activeSubscription(api, {
      endpoint_url: `${receiver.origin}${path}`,
      max_retries: 0,
    });
    remember(subscription.signing_secret);
    const event = await publishTestEvent(api);
    await waitForEventStatus(t.db.pool, event.id, ['dead_letter'], 30_000);
    const attempt = await t.db.pool.query<{ id: number }>(
      'SELECT id FROM webhook_delivery_attempts WHERE event_id = $1',
      [event.id],
    );
    assert.equal(attempt.rows.length, 1);
    return { subscription, event, attemptId: attempt.rows[0]!.id };
  }

  before(async () => {
    t = await startTestApp();
    receiver = await startHttpsReceiver(answer(500, 'no'));
    owner = client(t, await tenant());
    other = client(t, await tenant());
    const worker = startTestWorker(t.deps);
    try {
      mine = await world(owner, '/mine');
      theirs = await world(other, '/theirs');
    } finally {
      await worker.stop();
    }
  });
  after(async () => {
    await receiver?.close();
    await t?.close();
  });

  /** Every row of the organisation that an endpoint could change, to prove that nothing changed. */
  const snapshot = async (organisationId: string) => {
    const rows = await Promise.all(
      ['webhook_subscriptions', 'webhook_events', 'webhook_deliveries', 'webhook_delivery_attempts'].map(
        async (table) =>
          (
            await t.db.pool.query(`SELECT * FROM ${table} WHERE organisation_id = $1 ORDER BY id`, [
              organisationId,
            ])
          ).rows,
      ),
    );
    return JSON.stringify(rows);
  };

  it("answers another organisation's id exactly as an id that does not exist (404), and changes nothing", async () => {
    const before = await snapshot(owner.tenant.organisationId);
    const cases: [Method, (w: { sub: string; event: string; attempt: string }) => string, unknown?][] = [
      ['GET', (w) => `${SUBSCRIPTIONS}/${w.sub}`],
      ['PATCH', (w) => `${SUBSCRIPTIONS}/${w.sub}`, { status: 'paused' }],
      ['PATCH', (w) => `${SUBSCRIPTIONS}/${w.sub}`, { endpoint_url: 'https://attacker.example/x' }],
      ['POST', (w) => `${SUBSCRIPTIONS}/${w.sub}/rotate-secret`],
      ['DELETE', (w) => `${SUBSCRIPTIONS}/${w.sub}`],
      ['GET', (w) => `${EVENTS}/${w.event}`],
      ['POST', (w) => `${EVENTS}/${w.event}/replay`],
      ['GET', (w) => `${ATTEMPTS}/${w.attempt}`],
    ];
    const foreign = {
      sub: mine.subscription.id,
      event: String(mine.event.id),
      attempt: String(mine.attemptId),
    };
    const missing = { sub: newUuid(), event: '999999999', attempt: '999999999' };
    for (const [method, url, body] of cases) {
      const probe = await other.request(method, url(foreign), body);
      const control = await other.request(method, url(missing), body);
      const label = `${method} ${url(foreign)}`;
      assert.equal(probe.statusCode, 404, `${label}: ${probe.body}`);
      assert.equal(control.statusCode, 404, `${label} (missing id): ${control.body}`);
      const { error_id: _a, ...seen } = errorBody(probe.body);
      const { error_id: _b, ...expected } = errorBody(control.body);
      assert.deepEqual(seen, expected, `${label}: indistinguishable from a missing id`);
      assert.equal(seen.code, 'NOT_FOUND');
      for (const secret of [
        mine.subscription.endpoint_url,
        owner.tenant.organisationId,
        mine.event.public_id,
      ])
        assert.ok(!probe.body.includes(secret), `${label} leaks nothing`);
    }
    assert.equal(await snapshot(owner.tenant.organisationId), before, "the owner's rows are untouched");
    // The owner still reaches all of it.
    assert.equal((await owner.get(`${SUBSCRIPTIONS}/${mine.subscription.id}`)).statusCode, 200);
    assert.equal((await owner.get(`${EVENTS}/${mine.event.id}`)).statusCode, 200);
    assert.equal((await owner.get(`${ATTEMPTS}/${mine.attemptId}`)).statusCode, 200);
  });

  it("never returns another organisation's rows in a search, whatever the filter or free text", async () => {
    const page = async (url: string, body: unknown) => {
      const response = await other.post(url, body);
      assert.equal(response.statusCode, 200, `${url} ${JSON.stringify(body)}: ${response.body}`);
      return response.json() as { items: { id: string | number }[]; total: number };
    };
    const only = (result: { items: { id: string | number }[]; total: number }, ids: (string | number)[]) => {
      assert.deepEqual(
        result.items.map((item) => item.id),
        ids,
      );
      assert.equal(result.total, ids.length);
    };
    const ownSub = [theirs.subscription.id];
    only(await page(`${SUBSCRIPTIONS}/search`, {}), ownSub);
    only(await page(`${SUBSCRIPTIONS}/search`, { filters: { status: ['active'] } }), ownSub);
    only(
      await page(`${SUBSCRIPTIONS}/search`, { filters: { endpoint_url: [mine.subscription.endpoint_url] } }),
      [],
    );
    only(await page(`${SUBSCRIPTIONS}/search`, { search: '/mine' }), []);
    only(
      await page(`${SUBSCRIPTIONS}/search`, { filters: { event_type_codes: ['transfer.completed'] } }),
      ownSub,
    );

    const ownEvent = [theirs.event.id];
    only(await page(`${EVENTS}/search`, {}), ownEvent);
    only(await page(`${EVENTS}/search`, { filters: { id: [mine.event.id] } }), []);
    only(await page(`${EVENTS}/search`, { filters: { public_id: [mine.event.public_id] } }), []);
    only(await page(`${EVENTS}/search`, { filters: { status: ['dead_letter'] } }), ownEvent);
    only(await page(`${EVENTS}/search`, { search: mine.event.public_id }), []);
    // The owner's numeric id as free text: it may match the other's public_id as a substring, never the
    // owner's event.
    const byId = await page(`${EVENTS}/search`, { search: String(mine.event.id) });
    assert.ok(byId.items.every((item) => item.id === theirs.event.id));
    only(await page(`${EVENTS}/search`, { search: 'transfer' }), ownEvent);

    const ownAttempt = [theirs.attemptId];
    only(await page(`${ATTEMPTS}/search`, {}), ownAttempt);
    only(await page(`${ATTEMPTS}/search`, { filters: { webhook_event_ids: [mine.event.id] } }), []);
    only(
      await page(`${ATTEMPTS}/search`, { filters: { webhook_subscription_ids: [mine.subscription.id] } }),
      [],
    );
    only(
      await page(`${ATTEMPTS}/search`, { filters: { webhook_event_ids: [mine.event.id, theirs.event.id] } }),
      ownAttempt,
    );
    only(await page(`${ATTEMPTS}/search`, { filters: { status: ['failed'] } }), ownAttempt);
  });

  describe('tokens that must not authenticate', () => {
    /** Every endpoint that takes a bearer token, with a body where it needs one. */
    const endpoints = (): [Method, string, unknown?][] => [
      ['GET', EVENT_TYPES_URL],
      ['POST', SUBSCRIPTIONS, { endpoint_url: 'https://hooks.example.com/x', event_type_codes: [] }],
      ['POST', `${SUBSCRIPTIONS}/search`, {}],
      ['GET', `${SUBSCRIPTIONS}/${mine.subscription.id}`],
      ['PATCH', `${SUBSCRIPTIONS}/${mine.subscription.id}`, { status: 'paused' }],
      ['POST', `${SUBSCRIPTIONS}/${mine.subscription.id}/rotate-secret`],
      ['DELETE', `${SUBSCRIPTIONS}/${mine.subscription.id}`],
      ['POST', `${EVENTS}/search`, {}],
      ['GET', `${EVENTS}/${mine.event.id}`],
      ['POST', `${EVENTS}/${mine.event.id}/replay`],
      ['POST', `${ATTEMPTS}/search`, {}],
      ['GET', `${ATTEMPTS}/${mine.attemptId}`],
      ['POST', SANDBOX_EVENTS, { event_type_code: 'transfer.completed' }],
    ];
    const send = (token: string, method: Method, url: string, body?: unknown) =>
      t.app.inject({
        method,
        url,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
    const assertRefusedEverywhere = async (label: string, token: string) => {
      const before = await snapshot(owner.tenant.organisationId);
      for (const [method, url, body] of endpoints()) {
        const response = await send(token, method, url, body);
        assert.equal(response.statusCode, 401, `${label}: ${method} ${url}: ${response.body}`);
        assert.deepEqual(response.json(), { message: 'Unauthorized' });
      }
      assert.equal(await snapshot(owner.tenant.organisationId), before, `${label} changed nothing`);
    };
    /** Claims of a real token of the owner, to copy into forgeries. */
    const claimsOf = (token: string) =>
      JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    const headerOf = (token: string) =>
      JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString('utf8')) as Record<string, unknown>;

    it('the same requests with a valid token are not 401 (control)', async () => {
      for (const [method, url, body] of endpoints().filter(
        ([method]) => method === 'GET' || method === 'POST',
      )) {
        if (url.endsWith('/replay') || url.endsWith('/rotate-secret') || url === SUBSCRIPTIONS) continue;
        if (url === SANDBOX_EVENTS) continue;
        const response = await send(owner.tenant.token, method, url, body);
        assert.notEqual(response.statusCode, 401, `${method} ${url}`);
      }
    });

    it('a token of a deleted client is 401 on every endpoint', async () => {
      const doomed = await tenant();
      const deleted = await t.app.inject({
        method: 'DELETE',
        url: `/admin/v1/clients/${doomed.clientId}`,
        headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` },
      });
      assert.equal(deleted.statusCode, 200);
      await assertRefusedEverywhere('deleted client', doomed.token);
    });

    it('a token of another realm (production) is 401 on every endpoint', async () => {
      const production = await startTestApp({
        db: t.db,
        env: { APP_ENV: 'production', AUTH_REALM: 'production' },
      });
      try {
        const { createClient } = await import('../../src/admin/service.ts');
        const created = await createClient(production.deps, { organisation_id: owner.tenant.organisationId });
        remember(created.client_secret);
        const token = await requestToken(
          production.app,
          created.client_id,
          created.client_secret!,
          'production',
        );
        assert.equal(claimsOf(token).org_id, owner.tenant.organisationId);
        await assertRefusedEverywhere('another realm', token);
      } finally {
        await production.close();
      }
    });

    it('a token forged with another key (same kid, same claims) is 401 on every endpoint', async () => {
      const { privateKey } = await generateKeyPair('RS256');
      const forged = await new SignJWT(claimsOf(owner.tenant.token))
        .setProtectedHeader(headerOf(owner.tenant.token) as { alg: string })
        .sign(privateKey);
      await assertRefusedEverywhere('forged', forged);
    });

    it('an expired token signed with the real key is 401 on every endpoint', async () => {
      const key = await keyStoreFor(t.deps).signingKey();
      const now = Math.floor(Date.now() / 1000);
      const expired = await new SignJWT({ ...claimsOf(owner.tenant.token), iat: now - 600, exp: now - 60 })
        .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' })
        .sign(key.privateKey);
      await assertRefusedEverywhere('expired', expired);
    });

    it('an unsigned token (alg: none) is 401 on every endpoint', async () => {
      const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const unsigned = `${encode({ alg: 'none', typ: 'JWT' })}.${encode(claimsOf(owner.tenant.token))}.`;
      await assertRefusedEverywhere('alg none', unsigned);
      const stripped = owner.tenant.token.split('.').slice(0, 2).join('.');
      await assertRefusedEverywhere('signature stripped', `${stripped}.`);
    });
  });

  it('returns signing secrets only on create and rotate, client secrets only on client creation, and never in an error', async () => {
    const responses: { label: string; response: LightMyRequestResponse; mayHold?: string }[] = [];
    const note = (label: string, response: LightMyRequestResponse, mayHold?: string) => {
      responses.push({ label, response, ...(mayHold ? { mayHold } : {}) });
      return response;
    };
    const url = `${receiver.origin}/secrets`;
    const created = note(
      'create',
      await owner.post(SUBSCRIPTIONS, { endpoint_url: url, event_type_codes: [] }),
    );
    assert.equal(created.statusCode, 201);
    const first = (created.json() as SubscriptionJson).signing_secret!;
    assert.match(first, /^whsec_[0-9a-f]{64}$/);
    remember(first);
    responses.at(-1)!.mayHold = first;
    const id = (created.json() as SubscriptionJson).id;
    note('read', await owner.get(`${SUBSCRIPTIONS}/${id}`));
    note('update', await owner.patch(`${SUBSCRIPTIONS}/${id}`, { status: 'active', max_retries: 3 }));
    note('search', await owner.post(`${SUBSCRIPTIONS}/search`, { filters: { endpoint_url: [url] } }));
    const rotated = await owner.post(`${SUBSCRIPTIONS}/${id}/rotate-secret`);
    assert.equal(rotated.statusCode, 200);
    const second = (rotated.json() as SubscriptionJson).signing_secret!;
    assert.match(second, /^whsec_[0-9a-f]{64}$/);
    assert.notEqual(second, first);
    remember(second);
    note('rotate', rotated, second);
    note('read after rotate', await owner.get(`${SUBSCRIPTIONS}/${id}`));
    // Errors: duplicate URL, forbidden status, a client-supplied secret, another organisation's rotate.
    note('409', await owner.post(SUBSCRIPTIONS, { endpoint_url: url, event_type_codes: [] }));
    note('422 status', await owner.patch(`${SUBSCRIPTIONS}/${id}`, { status: 'deleted' }));
    note(
      '422 supplied secret',
      await owner.post(SUBSCRIPTIONS, {
        endpoint_url: `${url}/2`,
        event_type_codes: [],
        signing_secret: first,
      }),
    );
    note(
      '422 supplied secret on update',
      await owner.patch(`${SUBSCRIPTIONS}/${id}`, { signing_secret: second }),
    );
    note('404 rotate', await other.post(`${SUBSCRIPTIONS}/${id}/rotate-secret`));
    note('delete', await owner.del(`${SUBSCRIPTIONS}/${id}`));
    note('400 rotate deleted', await owner.post(`${SUBSCRIPTIONS}/${id}/rotate-secret`));
    note('400 update deleted', await owner.patch(`${SUBSCRIPTIONS}/${id}`, { status: 'active' }));
    note('read deleted', await owner.get(`${SUBSCRIPTIONS}/${id}`));
    // Events and attempts: the attempt holds the signature headers, never the key.
    note('event', await owner.get(`${EVENTS}/${mine.event.id}`));
    note('attempt', await owner.get(`${ATTEMPTS}/${mine.attemptId}`));
    note('attempt search', await owner.post(`${ATTEMPTS}/search`, {}));

    // Client secrets: returned by the operator API's create, never by the token endpoint or its errors.
    const organisation = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/organisations',
      headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'Secrets Ltd' }),
    });
    const clientCreated = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/clients',
      headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ organisation_id: (organisation.json() as { id: string }).id }),
    });
    assert.equal(clientCreated.statusCode, 201);
    const { client_id: clientId, client_secret: clientSecret } = clientCreated.json() as {
      client_id: string;
      client_secret: string;
    };
    remember(clientSecret);
    note('client create', clientCreated, clientSecret);
    const token = (fields: Record<string, string>) =>
      t.app.inject({
        method: 'POST',
        url: '/realms/sandbox/protocol/openid-connect/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ grant_type: 'client_credentials', ...fields }).toString(),
      });
    note('token', await token({ client_id: clientId, client_secret: clientSecret }));
    note('token, wrong secret', await token({ client_id: clientId, client_secret: `${clientSecret}x` }));
    note('token, unknown client', await token({ client_id: 'nobody', client_secret: clientSecret }));
    note(
      'token, bad grant',
      await token({ client_id: clientId, client_secret: clientSecret, grant_type: 'password' }),
    );

    for (const { label, response, mayHold } of responses) {
      const text = `${JSON.stringify(response.headers)}\n${response.body}`;
      for (const secret of issued) {
        if (secret === mayHold) continue;
        assert.ok(!text.includes(secret), `${label} (${response.statusCode}) holds an issued secret`);
        assert.ok(!text.includes(secret.replace(/^whsec_/, '')), `${label} holds a secret's key`);
      }
      if (mayHold === undefined || !mayHold.startsWith('whsec_')) {
        assert.ok(!SIGNING_SECRET.test(text), `${label} holds a signing secret`);
        if (response.statusCode < 300)
          assert.ok(!/"signing_secret"/.test(response.body), `${label} has a signing_secret field`);
      }
      if (response.statusCode >= 400 && !label.startsWith('token')) errorBody(response.body);
    }
  });

  it('stores no issued secret in clear text: every text, json and array column of every table is scanned', async () => {
    assert.ok(issued.size >= 8, `secrets issued during the file: ${issued.size}`);
    const columns = await textColumns(t.db.pool);
    const scanned = columns.map(({ table, column }) => `${table}.${column}`);
    for (const expected of [
      'api_clients.secret_hash',
      'webhook_subscriptions.signing_secret_sealed',
      'webhook_delivery_attempts.request_headers',
      'webhook_events.payload',
      'signing_keys.private_key_sealed',
    ])
      assert.ok(scanned.includes(expected), `${expected} is scanned`);
    // Each secret as issued, and a signing secret's key text without its prefix.
    const needles = [...issued].flatMap((secret) =>
      secret.startsWith('whsec_') ? [secret, secret.slice('whsec_'.length)] : [secret],
    );
    // Where, not what: a failure must not print the secret.
    const found = (await columnsHolding(t.db.pool, columns, needles)).map((entry) => entry.split(':')[0]);
    assert.deepEqual(found, [], 'columns holding a secret in clear text');
    // The scan is not vacuous: the sealed column holds the current secret, encrypted.
    const sealed = await t.db.pool.query<{ signing_secret_sealed: string }>(
      'SELECT signing_secret_sealed FROM webhook_subscriptions WHERE id = $1',
      [mine.subscription.id],
    );
    assert.equal(
      t.deps.secretBox.decrypt(sealed.rows[0]!.signing_secret_sealed),
      mine.subscription.signing_secret,
    );
    assert.ok(scanned.length >= 20, `${scanned.length} columns scanned`);
  });
});
