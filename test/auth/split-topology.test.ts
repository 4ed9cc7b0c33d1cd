// Production topology as whole processes (D1, D6): `node src/main.ts auth` serves tokens, JWKS and
// discovery under its fixed AUTH_PUBLIC_URL; `node src/main.ts api` verifies tokens against
// AUTH_ISSUER / AUTH_JWKS_URL. One PostgreSQL database, two processes, real HTTP.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { generateKeyPair, SignJWT } from 'jose';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { runToExit, type ServiceProcess, startService } from '../helpers/process.ts';
import { waitUntil } from '../helpers/wait.ts';
import { decodeJwt, PROBE } from './support.ts';

const ADMIN_KEY = 'split-admin-key-0123456789abcdef';
const PUBLIC_AUTH_URL = 'https://auth.example.test';
const ISSUER = `${PUBLIC_AUTH_URL}/realms/production`;
// The api process runs with the probe routes preloaded (see fixtures/probe-preload.ts).
const PRELOAD = pathToFileURL(path.resolve(import.meta.dirname, 'fixtures/probe-preload.ts')).href;

/** Polls `probe` until it returns a value (bounded); for effects that other processes pick up later. */
async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('split topology: separate auth and api processes (production)', () => {
  let db: TestDatabase;
  let auth: ServiceProcess;
  let api: ServiceProcess;
  let client: { client_id: string; client_secret: string };
  let organisationId: string;
  const common = () => ({
    DATABASE_URL: db.url,
    APP_ENV: 'production',
    SECRETS_ENCRYPTION_KEY: 'b'.repeat(64),
    AUTH_REALM: 'production',
  });

  const tokenFrom = async (base: string, credentials = client) => {
    const response = await fetch(`${base}/realms/production/protocol/openid-connect/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'client_credentials', ...credentials }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const callApi = (token: string) =>
    fetch(`${api.baseUrl}${PROBE}`, { headers: { authorization: `Bearer ${token}` } });
  const adminPost = async (pathname: string, body?: unknown) => {
    const response = await fetch(`${api.baseUrl}${pathname}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${ADMIN_KEY}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, string> };
  };

  before(async () => {
    db = await createTestDatabase();
    auth = await startService('auth', { ...common(), AUTH_PUBLIC_URL: PUBLIC_AUTH_URL });
    api = await startService('api', {
      ...common(),
      // The API reaches the auth process on its internal address; tokens name the public one.
      AUTH_ISSUER: ISSUER,
      AUTH_JWKS_URL: `${auth.baseUrl}/realms/production/protocol/openid-connect/certs`,
      ADMIN_API_KEY: ADMIN_KEY,
      NODE_OPTIONS: `--import=${PRELOAD}`,
    });
    const organisation = await adminPost('/admin/v1/organisations', { name: 'Split Ltd' });
    assert.equal(organisation.status, 201);
    organisationId = organisation.body.id!;
    const created = await adminPost('/admin/v1/clients', { organisation_id: organisationId });
    assert.equal(created.status, 201);
    assert.equal(created.body.realm, 'production');
    client = { client_id: created.body.client_id!, client_secret: created.body.client_secret! };
  });
  after(async () => {
    await api?.stop();
    await auth?.stop();
    await db?.drop();
  });

  it('the auth process issues tokens whose iss is AUTH_PUBLIC_URL, whatever address was used', async () => {
    const { status, body } = await tokenFrom(auth.baseUrl);
    assert.equal(status, 200);
    assert.equal(decodeJwt(body.access_token as string).payload.iss, ISSUER);
    const discovery = await fetch(`${auth.baseUrl}/realms/production/.well-known/openid-configuration`);
    assert.equal(((await discovery.json()) as { issuer: string }).issuer, ISSUER);
  });

  it('the api process accepts a token of the auth process', async () => {
    const { body } = await tokenFrom(auth.baseUrl);
    const response = await callApi(body.access_token as string);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { client_id: client.client_id, organisation_id: organisationId });
    assert.equal(response.headers.get('ratelimit-limit'), '1200');
  });

  it('the api process refuses a token of another issuer signed with another key', async () => {
    const { privateKey } = await generateKeyPair('RS256');
    const now = Math.floor(Date.now() / 1000);
    const claims = { azp: client.client_id, org_id: randomUUID(), scope: 'webhooks:read webhooks:write' };
    for (const iss of [ISSUER, 'https://evil.example.test/realms/production']) {
      const token = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: 'attacker-key' })
        .setIssuer(iss)
        .setSubject(client.client_id)
        .setIssuedAt(now)
        .setExpirationTime(now + 300)
        .sign(privateKey);
      const response = await callApi(token);
      assert.equal(response.status, 401, iss);
      assert.deepEqual(await response.json(), { message: 'Unauthorized' });
    }
    assert.equal((await callApi('aaaa.bbbb.cccc')).status, 401);
  });

  it('each role serves only its own part', async () => {
    const tokenOnApi = await fetch(`${api.baseUrl}/realms/production/protocol/openid-connect/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'client_credentials', ...client }),
    });
    assert.equal(tokenOnApi.status, 404);
    const probeOnAuth = await fetch(`${auth.baseUrl}${PROBE}`);
    assert.equal(probeOnAuth.status, 404);
    const adminOnAuth = await fetch(`${auth.baseUrl}/admin/v1/organisations`, { method: 'POST' });
    assert.equal(adminOnAuth.status, 404);
  });

  it('a deleted client can get no token and its tokens stop working on the api process', async () => {
    const organisation = await adminPost('/admin/v1/organisations', { name: 'Leaving Ltd' });
    const created = await adminPost('/admin/v1/clients', { organisation_id: organisation.body.id });
    const leaving = { client_id: created.body.client_id!, client_secret: created.body.client_secret! };
    const { body } = await tokenFrom(auth.baseUrl, leaving);
    const deleted = await fetch(`${api.baseUrl}/admin/v1/clients/${leaving.client_id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    assert.equal(deleted.status, 200);
    assert.equal((await callApi(body.access_token as string)).status, 401);
    const again = await tokenFrom(auth.baseUrl, leaving);
    assert.equal(again.status, 401);
    assert.equal(again.body.error, 'invalid_client');
  });

  it('after a key rotation, old tokens keep working and the new key is accepted by the api', async () => {
    const { body: before } = await tokenFrom(auth.baseUrl);
    const oldToken = before.access_token as string;
    const oldKid = decodeJwt(oldToken).header.kid;
    const rotated = await adminPost('/admin/v1/signing-keys/rotate');
    assert.equal(rotated.status, 200);
    assert.notEqual(rotated.body.kid, oldKid);
    // The auth process notices the new key within its cache period (seconds).
    const newToken = await eventually(async () => {
      const { body } = await tokenFrom(auth.baseUrl);
      const token = body.access_token as string;
      return decodeJwt(token).header.kid === rotated.body.kid ? token : undefined;
    });
    const certs = await fetch(`${auth.baseUrl}/realms/production/protocol/openid-connect/certs`);
    const kids = ((await certs.json()) as { keys: Array<{ kid: string }> }).keys.map((key) => key.kid);
    assert.ok(kids.includes(oldKid as string) && kids.includes(rotated.body.kid!));
    assert.equal((await callApi(oldToken)).status, 200);
    // The api refetches the JWKS for the unknown kid (at most once a second).
    await eventually(async () => ((await callApi(newToken)).status === 200 ? true : undefined));
    assert.equal((await callApi(oldToken)).status, 200);
  });
});

describe('a second signal during shutdown (docs/operator/running.md)', () => {
  it('exits at once with code 1 while the first still waits for a request in flight', async () => {
    const db = await createTestDatabase();
    const blocker = await db.pool.connect();
    try {
      const api = await startService('api', {
        DATABASE_URL: db.url,
        APP_ENV: 'production',
        SECRETS_ENCRYPTION_KEY: 'c'.repeat(64),
        AUTH_REALM: 'production',
        AUTH_ISSUER: ISSUER,
        AUTH_JWKS_URL: `${PUBLIC_AUTH_URL}/realms/production/protocol/openid-connect/certs`,
        ADMIN_API_KEY: ADMIN_KEY,
      });
      // A request held in flight by a table lock keeps the first signal's shutdown waiting for it.
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE organisations IN ACCESS EXCLUSIVE MODE');
      const held = fetch(`${api.baseUrl}/admin/v1/organisations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Held Ltd' }),
      }).catch(() => undefined);
      await waitUntil(
        async () =>
          ((
            await db.pool.query(
              "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
            )
          ).rowCount ?? 0) > 0,
        'the request waits on the lock',
      );
      const exited = new Promise<number | null>((resolve) => api.child.once('exit', resolve));
      api.child.kill('SIGTERM');
      await waitUntil(async () => /shutting down/.test(api.stdout()), 'shutdown begins');
      // The same signal again, as an impatient supervisor sends it.
      api.child.kill('SIGTERM');
      assert.equal(await exited, 1, api.stdout());
      assert.match(api.stdout(), /second signal: exiting now/);
      await held;
    } finally {
      await blocker.query('ROLLBACK');
      blocker.release();
      await db.drop();
    }
  });
});

describe('the auth role in production without AUTH_PUBLIC_URL', () => {
  it('refuses to start, naming the variable', async () => {
    const db = await createTestDatabase();
    try {
      const result = await runToExit('auth', {
        DATABASE_URL: db.url,
        APP_ENV: 'production',
        SECRETS_ENCRYPTION_KEY: 'b'.repeat(64),
      });
      assert.equal(result.code, 1);
      assert.match(result.stderr, /AUTH_PUBLIC_URL/);
    } finally {
      await db.drop();
    }
  });
});
