// The token endpoint (contract section 4 "Token", section 7 token errors, D6): every error row,
// both client-authentication styles, the D6 success body; JWKS and discovery.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, type JWK, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { createClient, createOrganisation } from '../../src/admin/service.ts';
import { buildApp } from '../../src/app.ts';
import { CATALOGUE } from '../../src/areas.ts';
import type { Pool } from '../../src/db/pool.ts';
import { LogCapture, startTestApp, type TestApp } from '../helpers/app.ts';
import { basic, decodeJwt, FORM, form, postToken, TOKEN_PATH } from './support.ts';

const SANDBOX = { client_id: 'sandbox-client', client_secret: 'sandbox-secret' };
const GRANT = { grant_type: 'client_credentials' };

describe('token endpoint', () => {
  let t: TestApp;
  before(async () => {
    // Failure limits out of the way: this file sends many failing requests on purpose.
    t = await startTestApp({
      env: { TOKEN_FAILURE_LIMIT_CLIENT: '1000', TOKEN_FAILURE_LIMIT_ADDRESS: '1000' },
    });
  });
  after(() => t.close());

  const assertOAuthError = (
    response: Awaited<ReturnType<typeof postToken>>,
    status: number,
    error: string,
  ): void => {
    assert.equal(response.statusCode, status, response.body);
    const body = response.json() as Record<string, unknown>;
    assert.deepEqual(Object.keys(body), ['error', 'error_description']);
    assert.equal(body.error, error);
    assert.equal(typeof body.error_description, 'string');
    assert.equal(response.headers['cache-control'], 'no-store');
  };

  describe('success (D6)', () => {
    it('issues a token for form-field credentials with the D6 body and no-store', async () => {
      const response = await postToken(t.app, { ...GRANT, ...SANDBOX });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['cache-control'], 'no-store');
      assert.equal(response.headers.pragma, 'no-cache');
      const body = response.json() as Record<string, unknown>;
      assert.deepEqual(Object.keys(body).sort(), [
        'access_token',
        'expires_in',
        'not-before-policy',
        'refresh_expires_in',
        'scope',
        'token_type',
      ]);
      assert.equal(body.token_type, 'Bearer');
      assert.equal(body.expires_in, 300);
      assert.equal(body.refresh_expires_in, 0);
      assert.equal(body['not-before-policy'], 0);
      // The sandbox client holds every scope the areas declare (D6, D14).
      assert.equal(body.scope, CATALOGUE.scopes.join(' '));
      assert.ok(CATALOGUE.scopes.includes('webhooks:read') && CATALOGUE.scopes.includes('crypto:write'));
    });

    it('issues a token for HTTP Basic credentials (client_secret_basic)', async () => {
      const response = await postToken(t.app, GRANT, {
        authorization: basic(SANDBOX.client_id, SANDBOX.client_secret),
      });
      assert.equal(response.statusCode, 200, response.body);
      const { payload } = decodeJwt((response.json() as { access_token: string }).access_token);
      assert.equal(payload.azp, 'sandbox-client');
    });

    it('decodes form-urlencoded Basic credentials (RFC 6749 section 2.3.1)', async () => {
      const organisation = await createOrganisation(t.deps, 'Basic encoding');
      const created = await createClient(t.deps, { organisation_id: organisation.id });
      // The generated secret is base64url; encodeURIComponent leaves it as is, so also try %-escapes.
      const escaped = `${encodeURIComponent(created.client_id)}:${created.client_secret!.replace(/-/g, '%2D')}`;
      const response = await postToken(t.app, GRANT, {
        authorization: `Basic ${Buffer.from(escaped).toString('base64')}`,
      });
      assert.equal(response.statusCode, 200, response.body);
    });

    it('signs an RS256 JWT with kid, iss, sub, azp, org_id, scope, iat, exp, jti (D6)', async () => {
      const response = await postToken(t.app, { ...GRANT, ...SANDBOX }, { host: 'api.example.test' });
      const token = (response.json() as { access_token: string }).access_token;
      const { header, payload } = decodeJwt(token);
      assert.equal(header.alg, 'RS256');
      assert.equal(typeof header.kid, 'string');
      // Without AUTH_PUBLIC_URL the issuer is the scheme and host the request came to.
      assert.equal(payload.iss, 'http://api.example.test/realms/sandbox');
      assert.equal(payload.sub, 'sandbox-client');
      assert.equal(payload.azp, 'sandbox-client');
      assert.equal(payload.org_id, '00000000-0000-7000-8000-000000000001');
      assert.equal(payload.scope, CATALOGUE.scopes.join(' '));
      assert.equal((payload.exp as number) - (payload.iat as number), 300);
      assert.match(payload.jti as string, /^[0-9a-f-]{36}$/);
    });

    it('issues a token that verifies against the published JWKS with jose', async () => {
      const host = { host: 'sandbox.example.test' };
      const response = await postToken(t.app, { ...GRANT, ...SANDBOX }, host);
      const token = (response.json() as { access_token: string }).access_token;
      const certs = await t.app.inject({
        method: 'GET',
        url: '/realms/sandbox/protocol/openid-connect/certs',
        headers: host,
      });
      assert.equal(certs.statusCode, 200);
      const jwks = certs.json() as { keys: JWK[] };
      assert.ok(jwks.keys.length >= 1);
      for (const key of jwks.keys) {
        assert.equal(key.kty, 'RSA');
        assert.equal(key.use, 'sig');
        assert.equal(key.alg, 'RS256');
        assert.equal(key.d, undefined, 'no private parts are published');
      }
      const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(jwks), {
        issuer: 'http://sandbox.example.test/realms/sandbox',
        algorithms: ['RS256'],
      });
      assert.equal(protectedHeader.kid, jwks.keys[0]!.kid);
      assert.equal(payload.sub, 'sandbox-client');
    });

    it('uses AUTH_PUBLIC_URL for iss and discovery when it is set', async () => {
      const fixed = await startTestApp({ env: { AUTH_PUBLIC_URL: 'https://auth.example.test/' } });
      try {
        const response = await postToken(fixed.app, { ...GRANT, ...SANDBOX }, { host: 'internal:8080' });
        const { payload } = decodeJwt((response.json() as { access_token: string }).access_token);
        assert.equal(payload.iss, 'https://auth.example.test/realms/sandbox');
        const discovery = await fixed.app.inject({
          method: 'GET',
          url: '/realms/sandbox/.well-known/openid-configuration',
          headers: { host: 'internal:8080' },
        });
        assert.equal(
          (discovery.json() as { issuer: string }).issuer,
          'https://auth.example.test/realms/sandbox',
        );
      } finally {
        await fixed.close();
      }
    });
  });

  describe('errors (contract section 7 token table)', () => {
    for (const field of ['grant_type', 'client_id', 'client_secret'] as const) {
      it(`answers a missing ${field} with 400 invalid_request`, async () => {
        const fields: Record<string, string> = { ...GRANT, ...SANDBOX };
        delete fields[field];
        const response = await postToken(t.app, fields);
        assertOAuthError(response, 400, 'invalid_request');
        assert.match((response.json() as { error_description: string }).error_description, new RegExp(field));
      });

      it(`answers an empty ${field} with 400 invalid_request`, async () => {
        const response = await postToken(t.app, { ...GRANT, ...SANDBOX, [field]: '' });
        assertOAuthError(response, 400, 'invalid_request');
      });
    }

    it('answers a request with no body at all with 400 invalid_request', async () => {
      const response = await t.app.inject({ method: 'POST', url: TOKEN_PATH });
      assertOAuthError(response, 400, 'invalid_request');
    });

    it('answers a repeated parameter with 400 invalid_request', async () => {
      const response = await t.app.inject({
        method: 'POST',
        url: TOKEN_PATH,
        headers: FORM,
        payload: `${form({ ...GRANT, ...SANDBOX })}&client_id=other`,
      });
      assertOAuthError(response, 400, 'invalid_request');
    });

    for (const grant of ['password', 'authorization_code', 'refresh_token', 'CLIENT_CREDENTIALS']) {
      it(`answers grant_type=${grant} with 400 unsupported_grant_type`, async () => {
        const response = await postToken(t.app, { ...SANDBOX, grant_type: grant });
        assertOAuthError(response, 400, 'unsupported_grant_type');
      });
    }

    it('answers an unknown client id with 401 invalid_client', async () => {
      const response = await postToken(t.app, { ...GRANT, client_id: 'nobody', client_secret: 'x' });
      assertOAuthError(response, 401, 'invalid_client');
    });

    it('answers an unknown client id sent with Basic with 401 invalid_client', async () => {
      const response = await postToken(t.app, GRANT, { authorization: basic('nobody', 'x') });
      assertOAuthError(response, 401, 'invalid_client');
    });

    it('answers a deleted client with 401 invalid_client', async () => {
      const tenant = await t.tenant();
      const deleted = await t.app.inject({
        method: 'DELETE',
        url: `/admin/v1/clients/${tenant.clientId}`,
        headers: { authorization: `Bearer ${t.config.adminApiKey}` },
      });
      assert.equal(deleted.statusCode, 200);
      const response = await postToken(t.app, {
        ...GRANT,
        client_id: tenant.clientId,
        client_secret: tenant.clientSecret,
      });
      assertOAuthError(response, 401, 'invalid_client');
    });

    it('answers a wrong secret with 401 unauthorized_clientclient, spelled as the contract spells it', async () => {
      const response = await postToken(t.app, { ...GRANT, ...SANDBOX, client_secret: 'wrong-secret' });
      assertOAuthError(response, 401, 'unauthorized_clientclient');
    });

    it('answers a wrong secret sent with Basic with 401 unauthorized_clientclient', async () => {
      const response = await postToken(t.app, GRANT, { authorization: basic('sandbox-client', 'nope') });
      assertOAuthError(response, 401, 'unauthorized_clientclient');
    });

    it('answers a malformed Basic header with 400 invalid_request', async () => {
      for (const authorization of ['Basic !!!', `Basic ${Buffer.from('no-colon').toString('base64')}`]) {
        const response = await postToken(t.app, GRANT, { authorization });
        assertOAuthError(response, 400, 'invalid_request');
      }
    });

    it('answers a Basic identity that differs from the form client_id with 400 invalid_request', async () => {
      const response = await postToken(
        t.app,
        { ...GRANT, client_id: 'someone-else' },
        { authorization: basic('sandbox-client', 'sandbox-secret') },
      );
      assertOAuthError(response, 400, 'invalid_request');
    });

    it('answers a JSON body with 400 invalid_request (form-encoded only)', async () => {
      const response = await t.app.inject({
        method: 'POST',
        url: TOKEN_PATH,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ ...GRANT, ...SANDBOX }),
      });
      assertOAuthError(response, 400, 'invalid_request');
      assert.match((response.json() as { error_description: string }).error_description, /form-encoded/);
    });

    it('answers any other content type with 400 invalid_request', async () => {
      const response = await t.app.inject({
        method: 'POST',
        url: TOKEN_PATH,
        headers: { 'content-type': 'text/plain' },
        payload: form({ ...GRANT, ...SANDBOX }),
      });
      assertOAuthError(response, 400, 'invalid_request');
    });

    it('answers an oversized form with 400 invalid_request', async () => {
      const response = await postToken(t.app, { ...GRANT, ...SANDBOX, padding: 'x'.repeat(70 * 1024) });
      assertOAuthError(response, 400, 'invalid_request');
    });

    it('answers an unknown realm with 404 {"error":"Realm does not exist"}', async () => {
      for (const url of [
        '/realms/production/protocol/openid-connect/token',
        '/realms/nope/protocol/openid-connect/certs',
        '/realms/nope/.well-known/openid-configuration',
      ]) {
        const response = await t.app.inject({
          method: url.endsWith('/token') ? 'POST' : 'GET',
          url,
          headers: FORM,
          payload: url.endsWith('/token') ? form({ ...GRANT, ...SANDBOX }) : undefined,
        });
        assert.equal(response.statusCode, 404, url);
        assert.deepEqual(response.json(), { error: 'Realm does not exist' });
      }
    });

    it('answers an unexpected failure with 500 server_error, no internals, the cause logged', async () => {
      const logs = new LogCapture();
      const failingPool = {
        query: async () => {
          throw new Error('connection refused: password hunter2');
        },
      } as unknown as Pool;
      const pino = (await import('pino')).default;
      const broken = await buildApp(
        { ...t.deps, pool: failingPool },
        { components: { api: false, auth: true }, logger: pino({ level: 'info' }, logs) },
      );
      await broken.ready();
      try {
        const response = await postToken(broken, { ...GRANT, ...SANDBOX });
        assertOAuthError(response, 500, 'server_error');
        assert.ok(!response.body.includes('hunter2'));
        const errorId = /err_[0-9A-Z]{26}/.exec(response.body)?.[0];
        assert.ok(errorId, 'the description names an error id');
        assert.ok(logs.lines.some((line) => line.includes(errorId) && line.includes('hunter2')));
      } finally {
        await broken.close();
      }
    });

    it('never logs the client secret', async () => {
      await postToken(t.app, { ...GRANT, ...SANDBOX });
      await postToken(t.app, GRANT, { authorization: basic('sandbox-client', 'sandbox-secret') });
      assert.ok(!t.logs.text.includes('sandbox-secret'));
    });
  });

  describe('JWKS and discovery', () => {
    it('publishes the discovery document of the realm', async () => {
      const response = await t.app.inject({
        method: 'GET',
        url: '/realms/sandbox/.well-known/openid-configuration',
        headers: { host: 'sandbox.example.test' },
      });
      assert.equal(response.statusCode, 200);
      const body = response.json() as Record<string, unknown>;
      assert.equal(body.issuer, 'http://sandbox.example.test/realms/sandbox');
      assert.equal(
        body.token_endpoint,
        'http://sandbox.example.test/realms/sandbox/protocol/openid-connect/token',
      );
      assert.equal(body.jwks_uri, 'http://sandbox.example.test/realms/sandbox/protocol/openid-connect/certs');
      assert.deepEqual(body.grant_types_supported, ['client_credentials']);
      assert.deepEqual(body.token_endpoint_auth_methods_supported, [
        'client_secret_post',
        'client_secret_basic',
      ]);
      assert.deepEqual(body.scopes_supported, [...CATALOGUE.scopes]);
    });
  });
});

describe('token endpoint through openid-client (discovery, real HTTP)', () => {
  let t: TestApp;
  let base: string;
  before(async () => {
    t = await startTestApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(() => t.close());

  for (const method of ['client_secret_post', 'client_secret_basic'] as const) {
    it(`discovers the issuer and obtains a token with ${method}`, async () => {
      const issuer = new URL(`${base}/realms/sandbox`);
      const auth =
        method === 'client_secret_post'
          ? client.ClientSecretPost('sandbox-secret')
          : client.ClientSecretBasic('sandbox-secret');
      const config = await client.discovery(issuer, 'sandbox-client', undefined, auth, {
        execute: [client.allowInsecureRequests],
      });
      // The issuer a client discovers is exactly the address it used (D6).
      assert.equal(config.serverMetadata().issuer, `${base}/realms/sandbox`);
      const tokens = await client.clientCredentialsGrant(config);
      assert.equal(tokens.token_type, 'bearer');
      assert.equal(tokens.expires_in, 300);
      assert.equal(decodeJwt(tokens.access_token).payload.iss, `${base}/realms/sandbox`);
    });
  }

  it('surfaces the OAuth error of a wrong secret to openid-client', async () => {
    const config = await client.discovery(
      new URL(`${base}/realms/sandbox`),
      'sandbox-client',
      'not-the-secret',
      undefined,
      { execute: [client.allowInsecureRequests] },
    );
    await assert.rejects(client.clientCredentialsGrant(config), (error: client.ResponseBodyError) => {
      assert.equal(error.error, 'unauthorized_clientclient');
      assert.equal(error.status, 401);
      return true;
    });
  });
});
