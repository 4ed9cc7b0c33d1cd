// Bearer authentication on the API (contract sections 5 and 7, D5, D6): every 401 cause, 403 for a
// missing scope, the order token -> permission -> body, and signing-key rotation.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { keyStoreFor } from '../../src/auth/keys.ts';
import { errorBody, startTestApp, TEST_ADMIN_KEY, type Tenant, type TestApp } from '../helpers/app.ts';
import { decodeJwt, PROBE, postToken, probeRoutes } from './support.ts';

const UNAUTHORIZED = { message: 'Unauthorized' };
const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };
const json = { 'content-type': 'application/json' };

describe('bearer authentication', () => {
  let t: TestApp;
  let tenant: Tenant;
  before(async () => {
    t = await startTestApp({ routes: probeRoutes });
    tenant = await t.tenant();
  });
  after(() => t.close());

  const probe = (headers: Record<string, string>, body?: unknown) =>
    t.app.inject({
      method: body === undefined ? 'GET' : 'POST',
      url: PROBE,
      headers: body === undefined ? headers : { ...json, ...headers },
      payload: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });

  const assertUnauthorized = (response: Awaited<ReturnType<typeof probe>>): void => {
    assert.equal(response.statusCode, 401, response.body);
    assert.deepEqual(response.json(), UNAUTHORIZED);
    assert.equal(response.headers['content-type'], 'application/json; charset=utf-8');
  };

  /** A token signed with the issuer's real current key, with claims of the test's choosing. */
  const signWithIssuerKey = async (claims: JWTPayload, header: Record<string, unknown> = {}) => {
    const key = await keyStoreFor(t.deps).signingKey();
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({
      azp: tenant.clientId,
      org_id: tenant.organisationId,
      scope: 'webhooks:read webhooks:write',
      iss: 'http://localhost:80/realms/sandbox',
      sub: tenant.clientId,
      iat: now,
      exp: now + 300,
      jti: randomUUID(),
      ...claims,
    })
      .setProtectedHeader({ alg: 'RS256', kid: key.kid, ...header })
      .sign(key.privateKey);
  };

  it('accepts a token from the token endpoint and exposes the client', async () => {
    const response = await probe(tenant.auth);
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(response.json(), {
      client_id: tenant.clientId,
      organisation_id: tenant.organisationId,
    });
  });

  it('accepts the scheme in any case (RFC 6750)', async () => {
    const response = await probe({ authorization: `bearer ${tenant.token}` });
    assert.equal(response.statusCode, 200);
  });

  it('answers a missing Authorization header with 401 {"message":"Unauthorized"}', async () => {
    assertUnauthorized(await probe({}));
  });

  for (const [label, value] of [
    ['an empty header', ''],
    ['the scheme alone', 'Bearer'],
    ['a token that is not a JWT', 'Bearer not-a-jwt'],
    ['another scheme', 'Basic c2FuZGJveC1jbGllbnQ6c2FuZGJveC1zZWNyZXQ='],
    ['the token without a scheme', 'TOKEN'],
    ['two tokens', 'Bearer TOKEN TOKEN'],
  ] as const) {
    it(`answers a malformed header (${label}) with 401`, async () => {
      assertUnauthorized(await probe({ authorization: value.replaceAll('TOKEN', tenant.token) }));
    });
  }

  it('answers a well-formed but undecodable token with 401', async () => {
    assertUnauthorized(await probe({ authorization: 'Bearer aaaa.bbbb.cccc' }));
  });

  it('answers an expired token with 401', async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = await signWithIssuerKey({ iat: now - 700, exp: now - 60 });
    assertUnauthorized(await probe({ authorization: `Bearer ${token}` }));
  });

  it('accepts a token signed the same way but not expired (the test token itself is sound)', async () => {
    const token = await signWithIssuerKey({});
    assert.equal((await probe({ authorization: `Bearer ${token}` })).statusCode, 200);
  });

  it('answers a token of another realm (wrong issuer) with 401', async () => {
    const token = await signWithIssuerKey({ iss: 'http://localhost:80/realms/production' });
    assertUnauthorized(await probe({ authorization: `Bearer ${token}` }));
  });

  it('answers a token without an issuer with 401', async () => {
    const token = await signWithIssuerKey({ iss: undefined });
    assertUnauthorized(await probe({ authorization: `Bearer ${token}` }));
  });

  it('answers a token whose payload was altered (bad signature) with 401', async () => {
    const [header, payload, signature] = tenant.token.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')) as JWTPayload;
    claims.org_id = '00000000-0000-7000-8000-000000000001';
    const forged = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
    assertUnauthorized(await probe({ authorization: `Bearer ${forged}` }));
  });

  it('answers a token signed by a foreign key that claims the issuer kid with 401', async () => {
    const { privateKey } = await generateKeyPair('RS256');
    const kid = (await keyStoreFor(t.deps).signingKey()).kid;
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ azp: tenant.clientId, org_id: tenant.organisationId, scope: 'x' })
      .setProtectedHeader({ alg: 'RS256', kid })
      .setIssuer('http://localhost:80/realms/sandbox')
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(privateKey);
    assertUnauthorized(await probe({ authorization: `Bearer ${token}` }));
  });

  it('answers an unsigned token (alg: none) with 401', async () => {
    const { payload } = decodeJwt(tenant.token);
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    assertUnauthorized(await probe({ authorization: `Bearer ${header}.${body}.` }));
  });

  it('answers an HS256 token keyed with the public key (algorithm confusion) with 401', async () => {
    const jwks = (await keyStoreFor(t.deps).jwks()).keys[0]!;
    const secret = new TextEncoder().encode(JSON.stringify(jwks));
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ azp: tenant.clientId, org_id: tenant.organisationId, scope: 'x' })
      .setProtectedHeader({ alg: 'HS256', kid: jwks.kid! })
      .setIssuer('http://localhost:80/realms/sandbox')
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(secret);
    assertUnauthorized(await probe({ authorization: `Bearer ${token}` }));
  });

  it('answers a token without an organisation with 401', async () => {
    const token = await signWithIssuerKey({ org_id: undefined });
    assertUnauthorized(await probe({ authorization: `Bearer ${token}` }));
  });

  it('answers a token whose org_id is no UUID with 401', async () => {
    const token = await signWithIssuerKey({ org_id: 'acme' });
    assertUnauthorized(await probe({ authorization: `Bearer ${token}` }));
  });

  it('answers the token of a deleted client with 401', async () => {
    const doomed = await t.tenant();
    const deleted = await t.app.inject({
      method: 'DELETE',
      url: `/admin/v1/clients/${doomed.clientId}`,
      headers: admin,
    });
    assert.equal(deleted.statusCode, 200);
    assertUnauthorized(await probe(doomed.auth));
  });

  it('answers the token of a client that never existed here with 401', async () => {
    const token = await signWithIssuerKey({ azp: 'client_ghost', sub: 'client_ghost' });
    assertUnauthorized(await probe({ authorization: `Bearer ${token}` }));
  });

  it('never logs the bearer token', async () => {
    await probe(tenant.auth);
    await probe({ authorization: 'Bearer aaaa.bbbb.cccc' });
    assert.ok(!t.logs.text.includes(tenant.token));
    assert.ok(!t.logs.text.includes('aaaa.bbbb.cccc'));
  });

  describe('scopes (D6)', () => {
    it('answers a valid token without the scope with 403 AUTHORIZATION_FAILED in the envelope', async () => {
      const reader = await t.tenant(['webhooks:read']);
      assert.equal((await probe(reader.auth)).statusCode, 200);
      const response = await probe(reader.auth, { name: 'x' });
      assert.equal(response.statusCode, 403);
      const body = errorBody(response.body);
      assert.equal(body.code, 'AUTHORIZATION_FAILED');
      assert.match(body.error, /webhooks:write/);
    });

    it('answers a client with no scopes at all with 403 on every scoped route', async () => {
      const nobody = await t.tenant([]);
      const token = (await postToken(t.app, {
        grant_type: 'client_credentials',
        client_id: nobody.clientId,
        client_secret: nobody.clientSecret,
      }).then((r) => r.json())) as { scope: string };
      assert.equal(token.scope, '');
      assert.equal((await probe(nobody.auth)).statusCode, 403);
      assert.equal((await probe(nobody.auth, { name: 'x' })).statusCode, 403);
    });
  });

  describe('order of checks (D5): token, permission, body', () => {
    it('rejects a malformed header before the body is validated', async () => {
      assertUnauthorized(await probe({ authorization: 'Bearer' }, { unknown: 1 }));
    });

    it('rejects a missing token before malformed JSON is reported', async () => {
      assertUnauthorized(await probe({}, '{"name": '));
    });

    it('rejects a missing token before a wrong content type is reported', async () => {
      const response = await t.app.inject({
        method: 'POST',
        url: PROBE,
        headers: { 'content-type': 'text/plain' },
        payload: 'name=x',
      });
      assertUnauthorized(response);
    });

    it('rejects a missing scope before the body is parsed or validated', async () => {
      const reader = await t.tenant(['webhooks:read']);
      assert.equal((await probe(reader.auth, '{"name": ')).statusCode, 403);
      assert.equal((await probe(reader.auth, { unknown: 1 })).statusCode, 403);
    });

    it('validates the body once the token and scope pass', async () => {
      const bad = await probe(tenant.auth, { unknown: 1 });
      assert.equal(bad.statusCode, 422);
      assert.equal(errorBody(bad.body).code, 'VALIDATION_FAILED');
      const malformed = await probe(tenant.auth, '{"name": ');
      assert.equal(malformed.statusCode, 400);
      assert.equal(errorBody(malformed.body).code, 'BAD_REQUEST');
      const good = await probe(tenant.auth, { name: 'ok' });
      assert.equal(good.statusCode, 200);
      assert.deepEqual(good.json(), { client_id: tenant.clientId, name: 'ok' });
    });
  });

  describe('signing-key rotation (operator command)', () => {
    it('requires the operator key', async () => {
      const response = await t.app.inject({ method: 'POST', url: '/admin/v1/signing-keys/rotate' });
      assert.equal(response.statusCode, 401);
      assert.equal(errorBody(response.body).code, 'UNAUTHORIZED');
    });

    it('signs new tokens with the new kid; tokens of the old key keep working until they expire', async () => {
      const before = await t.tenant();
      const oldKid = decodeJwt(before.token).header.kid as string;

      const rotated = await t.app.inject({
        method: 'POST',
        url: '/admin/v1/signing-keys/rotate',
        headers: admin,
      });
      assert.equal(rotated.statusCode, 200, rotated.body);
      const { kid: newKid } = rotated.json() as { kid: string };
      assert.equal(typeof newKid, 'string');
      assert.notEqual(newKid, oldKid);

      const afterToken = await postToken(t.app, {
        grant_type: 'client_credentials',
        client_id: before.clientId,
        client_secret: before.clientSecret,
      });
      const newToken = (afterToken.json() as { access_token: string }).access_token;
      assert.equal(decodeJwt(newToken).header.kid, newKid);

      const certs = await t.app.inject({
        method: 'GET',
        url: '/realms/sandbox/protocol/openid-connect/certs',
      });
      const kids = (certs.json() as { keys: Array<{ kid: string }> }).keys.map((key) => key.kid);
      assert.ok(kids.includes(oldKid), 'the retired key is still published');
      assert.ok(kids.includes(newKid), 'the new key is published');

      assert.equal((await probe(before.auth)).statusCode, 200, 'a token of the old key still works');
      assert.equal((await probe({ authorization: `Bearer ${newToken}` })).statusCode, 200);
    });

    it('stops publishing a retired key once its tokens have expired', async () => {
      const first = (
        await t.app.inject({ method: 'POST', url: '/admin/v1/signing-keys/rotate', headers: admin })
      ).json() as { kid: string };
      // Age the retirement beyond token TTL + grace instead of waiting for it.
      await t.db.pool.query(
        "UPDATE signing_keys SET retired_at = now() - interval '1 hour' WHERE retired_at IS NOT NULL",
      );
      const second = (
        await t.app.inject({ method: 'POST', url: '/admin/v1/signing-keys/rotate', headers: admin })
      ).json() as { kid: string };
      const certs = await t.app.inject({
        method: 'GET',
        url: '/realms/sandbox/protocol/openid-connect/certs',
      });
      const kids = (certs.json() as { keys: Array<{ kid: string }> }).keys.map((key) => key.kid);
      // `first` was retired just now by the second rotation; everything older has expired.
      assert.deepEqual(kids.sort(), [first.kid, second.kid].sort());
    });
  });
});

describe('bearer authentication against an external issuer (AUTH_ISSUER / AUTH_JWKS_URL)', () => {
  it('accepts an unknown client of an organisation created here, and answers 401 for an org_id that names none', async () => {
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    const jwks = JSON.stringify({
      keys: [{ ...(await exportJWK(publicKey)), kid: 'ext-1', alg: 'RS256', use: 'sig' }],
    });
    const issuerServer = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(jwks);
    });
    await new Promise<void>((resolve) => issuerServer.listen(0, '127.0.0.1', resolve));
    const issuer = `http://127.0.0.1:${(issuerServer.address() as AddressInfo).port}/realms/external`;
    const t = await startTestApp({
      routes: probeRoutes,
      env: { AUTH_ISSUER: issuer, AUTH_JWKS_URL: `${issuer}/protocol/openid-connect/certs` },
    });
    try {
      const known = (await t.tenant()).organisationId;
      const probeAs = async (orgId: string) => {
        const now = Math.floor(Date.now() / 1000);
        const token = await new SignJWT({
          azp: 'client-of-the-issuer',
          org_id: orgId,
          scope: 'webhooks:read',
        })
          .setProtectedHeader({ alg: 'RS256', kid: 'ext-1' })
          .setIssuer(issuer)
          .setIssuedAt(now)
          .setExpirationTime(now + 60)
          .sign(privateKey);
        return t.app.inject({ method: 'GET', url: PROBE, headers: { authorization: `Bearer ${token}` } });
      };
      assert.equal((await probeAs(known)).statusCode, 200);
      for (const orgId of [randomUUID(), 'acme']) {
        const refused = await probeAs(orgId);
        assert.equal(refused.statusCode, 401, `${orgId}: ${refused.body}`);
        assert.deepEqual(refused.json(), { message: 'Unauthorized' });
      }
    } finally {
      await t.close();
      issuerServer.close();
    }
  });

  it('answers 503 SERVICE_UNAVAILABLE, not 401, when the issuer key set cannot be fetched', async () => {
    const t = await startTestApp({
      routes: probeRoutes,
      env: {
        AUTH_ISSUER: 'http://127.0.0.1:9/realms/sandbox',
        AUTH_JWKS_URL: 'http://127.0.0.1:9/realms/sandbox/protocol/openid-connect/certs',
      },
    });
    try {
      const { privateKey } = await generateKeyPair('RS256');
      const now = Math.floor(Date.now() / 1000);
      const token = await new SignJWT({ azp: 'c', org_id: 'o', scope: 'webhooks:read' })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer('http://127.0.0.1:9/realms/sandbox')
        .setIssuedAt(now)
        .setExpirationTime(now + 60)
        .sign(privateKey);
      const response = await t.app.inject({
        method: 'GET',
        url: PROBE,
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(response.statusCode, 503, response.body);
      assert.equal(errorBody(response.body).code, 'SERVICE_UNAVAILABLE');
    } finally {
      await t.close();
    }
  });
});
