// The operator API (D7): admin key, organisations, clients with secrets returned once, deletion.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SANDBOX_ORGANISATION_ID } from '../../src/admin/service.ts';
import { errorBody, requestToken, startTestApp, TEST_ADMIN_KEY, type TestApp } from '../helpers/app.ts';

const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };

describe('operator API (D7)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const createOrganisation = async (name = 'Acme Payments Ltd') => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/organisations',
      headers: admin,
      payload: { name },
    });
    assert.equal(response.statusCode, 201, response.body);
    return response.json() as { id: string; name: string; created_at: string };
  };

  it('rejects a missing admin key with 401 in the platform envelope', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/organisations',
      payload: { name: 'x' },
    });
    assert.equal(response.statusCode, 401);
    assert.equal(errorBody(response.body).code, 'UNAUTHORIZED');
  });

  it('rejects a wrong admin key with 401 before reading the body', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/organisations',
      headers: { authorization: `Bearer ${TEST_ADMIN_KEY}x`, 'content-type': 'application/json' },
      payload: '{not json',
    });
    assert.equal(response.statusCode, 401);
    assert.equal(errorBody(response.body).code, 'UNAUTHORIZED');
  });

  it('does not accept an API access token as the admin key', async () => {
    const token = await requestToken(t.app, 'sandbox-client', 'sandbox-secret');
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/organisations',
      headers: { authorization: `Bearer ${token}` },
      payload: { name: 'x' },
    });
    assert.equal(response.statusCode, 401);
  });

  it('creates an organisation with a UUID id and ISO timestamp', async () => {
    const organisation = await createOrganisation();
    assert.match(organisation.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(organisation.name, 'Acme Payments Ltd');
    assert.match(organisation.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('rejects an organisation without a name, naming the field', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/organisations',
      headers: admin,
      payload: {},
    });
    assert.equal(response.statusCode, 422);
    assert.equal(errorBody(response.body).field, 'name');
  });

  it('issues a client whose secret is returned once, stored only as a salted hash, and obtains a token', async () => {
    const organisation = await createOrganisation();
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/clients',
      headers: admin,
      payload: { organisation_id: organisation.id, name: 'ERP integration' },
    });
    assert.equal(response.statusCode, 201, response.body);
    const client = response.json();
    assert.equal(client.organisation_id, organisation.id);
    assert.equal(client.realm, 'sandbox');
    assert.deepEqual(client.scopes, [...t.deps.catalogue.scopes], 'default scopes: all');
    assert.ok(client.scopes.includes('webhooks:write'));
    assert.equal(typeof client.client_secret, 'string');
    assert.ok(client.client_secret.length >= 40);

    const stored = await t.db.pool.query('SELECT secret_hash FROM api_clients WHERE client_id = $1', [
      client.client_id,
    ]);
    assert.match(stored.rows[0].secret_hash, /^hmac-sha256\$/);
    assert.ok(!stored.rows[0].secret_hash.includes(client.client_secret));
    assert.ok(!t.logs.text.includes(client.client_secret), 'the secret is never logged');

    const token = await requestToken(t.app, client.client_id, client.client_secret);
    assert.equal(token.split('.').length, 3);
  });

  it('hashes the same secret differently each time (salted)', async () => {
    const rows = await t.db.pool.query('SELECT secret_hash FROM api_clients');
    const hashes = rows.rows.map((row) => row.secret_hash as string);
    assert.equal(new Set(hashes).size, hashes.length);
  });

  it('limits a client to the scopes it was given', async () => {
    const organisation = await createOrganisation();
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/clients',
      headers: admin,
      payload: { organisation_id: organisation.id, scopes: ['webhooks:read'] },
    });
    assert.equal(response.statusCode, 201);
    assert.deepEqual(response.json().scopes, ['webhooks:read']);
  });

  it('rejects an unknown scope, naming its index', async () => {
    const organisation = await createOrganisation();
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/clients',
      headers: admin,
      payload: { organisation_id: organisation.id, scopes: ['webhooks:read', 'root'] },
    });
    assert.equal(response.statusCode, 422);
    assert.equal(errorBody(response.body).field, 'scopes[1]');
  });

  it('answers an unknown organisation with 404 NOT_FOUND', async () => {
    for (const organisationId of ['0190a0a0-0000-7000-8000-000000000000', 'not-a-uuid']) {
      const response = await t.app.inject({
        method: 'POST',
        url: '/admin/v1/clients',
        headers: admin,
        payload: { organisation_id: organisationId },
      });
      assert.equal(response.statusCode, 404);
      assert.equal(errorBody(response.body).code, 'NOT_FOUND');
    }
  });

  it('deletes a client: 200 without the secret, no new token, repeatable, unknown id 404', async () => {
    const organisation = await createOrganisation();
    const created = (
      await t.app.inject({
        method: 'POST',
        url: '/admin/v1/clients',
        headers: admin,
        payload: { organisation_id: organisation.id },
      })
    ).json();
    const deleted = await t.app.inject({
      method: 'DELETE',
      url: `/admin/v1/clients/${created.client_id}`,
      headers: admin,
    });
    assert.equal(deleted.statusCode, 200);
    assert.equal(deleted.json().client_id, created.client_id);
    assert.equal(deleted.json().client_secret, undefined);
    assert.match(deleted.json().deleted_at, /Z$/);

    await assert.rejects(() => requestToken(t.app, created.client_id, created.client_secret), /401/);

    const again = await t.app.inject({
      method: 'DELETE',
      url: `/admin/v1/clients/${created.client_id}`,
      headers: admin,
    });
    assert.equal(again.statusCode, 200);
    assert.equal(again.json().deleted_at, deleted.json().deleted_at);

    const unknown = await t.app.inject({
      method: 'DELETE',
      url: '/admin/v1/clients/client_nope',
      headers: admin,
    });
    assert.equal(unknown.statusCode, 404);
    assert.equal(errorBody(unknown.body).code, 'NOT_FOUND');
  });

  it('logs each credential action with its actor, outcome and what it acted on, refusals included, never the secret (D23)', async () => {
    const LOGGED = [
      ...['operator_action', 'actor', 'outcome', 'status', 'error_code'],
      ...['organisation_id', 'client_id', 'scopes', 'realm', 'kid'],
    ];
    const before = t.logs.lines.length;
    const send = (method: 'POST' | 'DELETE', url: string, payload?: object, key = TEST_ADMIN_KEY) =>
      t.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${key}` },
        ...(payload ? { payload } : {}),
      });
    const organisation = (await send('POST', '/admin/v1/organisations', { name: 'Logged Ltd' })).json();
    await send('POST', '/admin/v1/organisations', {});
    await send('POST', '/admin/v1/organisations', { name: 'Nobody Ltd' }, 'wrong-key');
    const client = (
      await send('POST', '/admin/v1/clients', { organisation_id: organisation.id, scopes: ['webhooks:read'] })
    ).json();
    const unknownOrganisation = '0190a0a0-0000-7000-8000-000000000000';
    await send('POST', '/admin/v1/clients', { organisation_id: unknownOrganisation });
    await send('DELETE', `/admin/v1/clients/${client.client_id}`);
    await send('DELETE', '/admin/v1/clients/client_nope');
    const rotated = (await send('POST', '/admin/v1/signing-keys/rotate')).json();
    const lines = t.logs.lines.slice(before);
    const actions = lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.operator_action !== undefined)
      .map((line) => Object.fromEntries(LOGGED.map((key) => [key, line[key]])));
    const operator = { credential: 'ADMIN_API_KEY', address: '127.0.0.1' };
    const none = { ...Object.fromEntries(LOGGED.map((key) => [key, undefined])), actor: operator };
    assert.deepEqual(actions, [
      {
        ...none,
        operator_action: 'organisation.create',
        outcome: 'succeeded',
        status: 201,
        organisation_id: organisation.id,
      },
      {
        ...none,
        operator_action: 'organisation.create',
        outcome: 'refused',
        status: 422,
        error_code: 'VALIDATION_FAILED',
      },
      {
        ...none,
        operator_action: 'organisation.create',
        actor: { credential: 'none', address: '127.0.0.1' },
        outcome: 'refused',
        status: 401,
        error_code: 'UNAUTHORIZED',
      },
      {
        ...none,
        operator_action: 'client.create',
        outcome: 'succeeded',
        status: 201,
        organisation_id: organisation.id,
        client_id: client.client_id,
        scopes: ['webhooks:read'],
      },
      {
        ...none,
        operator_action: 'client.create',
        outcome: 'refused',
        status: 404,
        error_code: 'NOT_FOUND',
        organisation_id: unknownOrganisation,
      },
      {
        ...none,
        operator_action: 'client.delete',
        outcome: 'succeeded',
        status: 200,
        organisation_id: organisation.id,
        client_id: client.client_id,
      },
      {
        ...none,
        operator_action: 'client.delete',
        outcome: 'refused',
        status: 404,
        error_code: 'NOT_FOUND',
        client_id: 'client_nope',
      },
      {
        ...none,
        operator_action: 'signing_key.rotate',
        outcome: 'succeeded',
        status: 200,
        realm: 'sandbox',
        kid: rotated.kid,
      },
    ]);
    assert.ok(client.client_secret.length >= 40);
    assert.ok(!lines.join('\n').includes(client.client_secret), 'the secret is never logged');
  });

  it('seeds the sandbox organisation and shared credentials once (D1)', async () => {
    const rows = await t.db.pool.query('SELECT organisation_id FROM api_clients WHERE client_id = $1', [
      'sandbox-client',
    ]);
    assert.equal(rows.rowCount, 1);
    assert.equal(rows.rows[0].organisation_id, SANDBOX_ORGANISATION_ID);
  });
});

describe('operator API disabled', () => {
  it('answers 404 on every operator route when ADMIN_API_KEY is unset (D7)', async () => {
    const t = await startTestApp({ env: { ADMIN_API_KEY: '' } });
    try {
      const response = await t.app.inject({
        method: 'POST',
        url: '/admin/v1/organisations',
        headers: admin,
        payload: { name: 'x' },
      });
      assert.equal(response.statusCode, 404);
      assert.equal(errorBody(response.body).code, 'NOT_FOUND');
    } finally {
      await t.close();
    }
  });
});
