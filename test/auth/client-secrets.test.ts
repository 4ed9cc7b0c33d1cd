// Client secrets at rest (D6, D13): 256 random bits, stored as a salted HMAC-SHA-256 under a sub-key
// derived from SECRETS_ENCRYPTION_KEY, compared in constant time. Stored scrypt hashes keep working and
// are replaced on the next successful token request, once even when processes race; the sandbox
// client's hash follows SANDBOX_CLIENT_SECRET.
import assert from 'node:assert/strict';
import { createHmac, randomBytes, scryptSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createClient, createOrganisation, seedSandbox } from '../../src/admin/service.ts';
import { replaceSecretHash } from '../../src/auth/repository.ts';
import { loadConfig } from '../../src/config.ts';
import { generateEncryptionKey, SecretBox } from '../../src/platform/secrets.ts';
import { startTestApp, TEST_ENCRYPTION_KEY, type TestApp, testEnv } from '../helpers/app.ts';
import { clientSecretSubKey } from '../helpers/secret-keys.ts';
import { postToken } from './support.ts';

const GRANT = { grant_type: 'client_credentials' };

/** The stored form of the scrypt scheme, computed here rather than by the code under test. */
function scryptHash(secret: string): string {
  const salt = randomBytes(16);
  return `scrypt$${salt.toString('base64url')}$${scryptSync(secret, salt, 32).toString('base64url')}`;
}

const storedHash = async (t: TestApp, clientId: string): Promise<string> =>
  (await t.db.pool.query('SELECT secret_hash FROM api_clients WHERE client_id = $1', [clientId])).rows[0]
    .secret_hash as string;

const logLines = (t: TestApp, message: string): Array<Record<string, unknown>> =>
  t.logs.lines
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.msg === message);

const REHASHED = 'client secret re-hashed from scrypt to HMAC-SHA-256';

describe('client secrets at rest', () => {
  let t: TestApp;
  let organisationId: string;
  before(async () => {
    t = await startTestApp({
      env: { TOKEN_FAILURE_LIMIT_CLIENT: '1000', TOKEN_FAILURE_LIMIT_ADDRESS: '1000' },
    });
    organisationId = (await createOrganisation(t.deps, 'Secrets')).id;
  });
  after(() => t.close());

  /** A client stored with `hash` as is: a scrypt hash, as stored clients may still have. */
  const clientWithHash = async (hash: string): Promise<string> => {
    const clientId = `client_${randomBytes(12).toString('hex')}`;
    await t.db.pool.query(
      `INSERT INTO api_clients (client_id, organisation_id, realm, name, secret_hash, scopes)
       VALUES ($1, $2, 'sandbox', NULL, $3, ARRAY['webhooks:read'])`,
      [clientId, organisationId, hash],
    );
    return clientId;
  };

  it('issues 256-bit secrets and stores each as a salted HMAC-SHA-256 under a sub-key of the encryption key', async () => {
    const key = clientSecretSubKey(TEST_ENCRYPTION_KEY);
    const keyId = createHmac('sha256', key).update('key id').digest('base64url').slice(0, 8);
    const salts = new Set<string>();
    for (let index = 0; index < 5; index++) {
      const client = await createClient(t.deps, { organisation_id: organisationId });
      const secret = client.client_secret!;
      assert.match(secret, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(Buffer.from(secret, 'base64url').length, 32, '256 random bits');
      const stored = await storedHash(t, client.client_id);
      const [scheme, storedKeyId, salt, mac] = stored.split('$');
      assert.equal(scheme, 'hmac-sha256', stored);
      assert.equal(storedKeyId, keyId);
      assert.equal(Buffer.from(salt!, 'base64url').length, 16);
      const saltBytes = Buffer.from(salt!, 'base64url');
      const expected = createHmac('sha256', key).update(saltBytes).update(secret).digest('base64url');
      assert.equal(mac, expected);
      // The AES key itself never keys the HMAC.
      const withAesKey = createHmac('sha256', Buffer.from(TEST_ENCRYPTION_KEY, 'hex'))
        .update(saltBytes)
        .update(secret)
        .digest('base64url');
      assert.notEqual(mac, withAesKey);
      salts.add(salt!);
      const response = await postToken(t.app, {
        ...GRANT,
        client_id: client.client_id,
        client_secret: secret,
      });
      assert.equal(response.statusCode, 200, response.body);
    }
    assert.equal(salts.size, 5, 'a fresh salt per client');
  });

  it('refuses a wrong secret against the keyed hash, whatever its length', async () => {
    const client = await createClient(t.deps, { organisation_id: organisationId });
    const secret = client.client_secret!;
    // The last character changed (to one it is not: a secret ending in A would otherwise stay right).
    const oneOff = `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    for (const wrong of [oneOff, 'x', secret.repeat(2)]) {
      const response = await postToken(t.app, {
        ...GRANT,
        client_id: client.client_id,
        client_secret: wrong,
      });
      assert.equal(response.statusCode, 401, response.body);
      assert.equal(response.json().error, 'unauthorized_clientclient');
    }
  });

  it('accepts a secret stored as scrypt and replaces that hash with the keyed one on the same request', async () => {
    const secret = randomBytes(32).toString('base64url');
    const clientId = await clientWithHash(scryptHash(secret));
    const first = await postToken(t.app, { ...GRANT, client_id: clientId, client_secret: secret });
    assert.equal(first.statusCode, 200, first.body);
    const upgraded = await storedHash(t, clientId);
    assert.match(upgraded, /^hmac-sha256\$/);
    assert.equal(await t.deps.secretBox.checkClientSecret(secret, upgraded), 'match');
    assert.equal(logLines(t, REHASHED).filter((line) => line.client_id === clientId).length, 1);

    const second = await postToken(t.app, { ...GRANT, client_id: clientId, client_secret: secret });
    assert.equal(second.statusCode, 200, second.body);
    assert.equal(await storedHash(t, clientId), upgraded, 'an up-to-date hash is left as it is');
  });

  it('refuses a wrong secret against a scrypt hash and leaves that hash as it is', async () => {
    const hash = scryptHash('the-right-secret');
    const clientId = await clientWithHash(hash);
    const response = await postToken(t.app, {
      ...GRANT,
      client_id: clientId,
      client_secret: 'a-wrong-secret',
    });
    assert.equal(response.statusCode, 401, response.body);
    assert.equal(response.json().error, 'unauthorized_clientclient');
    assert.equal(await storedHash(t, clientId), hash);
  });

  it('replaces a scrypt hash once when two processes upgrade the same client at the same moment', async () => {
    const secret = randomBytes(32).toString('base64url');
    const clientId = await clientWithHash(scryptHash(secret));
    const other = await startTestApp({ db: t.db });
    try {
      const answers = await Promise.all(
        [t, other, t, other].map((app) =>
          postToken(app.app, { ...GRANT, client_id: clientId, client_secret: secret }),
        ),
      );
      assert.deepEqual(
        answers.map((answer) => answer.statusCode),
        [200, 200, 200, 200],
      );
      const writes = [...logLines(t, REHASHED), ...logLines(other, REHASHED)].filter(
        (line) => line.client_id === clientId,
      );
      assert.equal(writes.length, 1, 'one process wrote the new hash; the others changed nothing');
      assert.equal(await t.deps.secretBox.checkClientSecret(secret, await storedHash(t, clientId)), 'match');
    } finally {
      await other.close();
    }
  });

  it('replaces a hash only while it is still the one that was read', async () => {
    const clientId = await clientWithHash(scryptHash('s'));
    const current = await storedHash(t, clientId);
    assert.equal(
      await replaceSecretHash(t.db.pool, clientId, 'scrypt$stale$hash', 'hmac-sha256$x$y$z'),
      false,
    );
    assert.equal(await storedHash(t, clientId), current);
    assert.equal(await replaceSecretHash(t.db.pool, clientId, current, 'hmac-sha256$x$y$z'), true);
    assert.equal(await storedHash(t, clientId), 'hmac-sha256$x$y$z');
  });

  it('refuses a secret whose hash was keyed with another SECRETS_ENCRYPTION_KEY, and says so in the log', async () => {
    const otherBox = new SecretBox(generateEncryptionKey());
    const client = await createClient(
      { ...t.deps, secretBox: otherBox },
      { organisation_id: organisationId },
    );
    const response = await postToken(t.app, {
      ...GRANT,
      client_id: client.client_id,
      client_secret: client.client_secret!,
    });
    assert.equal(response.statusCode, 401, response.body);
    assert.equal(response.json().error, 'unauthorized_clientclient');
    const [warning] = logLines(
      t,
      'client secret hash was keyed with another SECRETS_ENCRYPTION_KEY; restore that key or re-issue the client',
    ).filter((line) => line.client_id === client.client_id);
    assert.equal(warning?.level, 40, 'a warning');
    assert.equal(warning?.stored_key_id, otherBox.keyId);
  });
});

describe('sandbox credentials follow SANDBOX_CLIENT_SECRET', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const sandboxHash = async (): Promise<string> => storedHash(t, 'sandbox-client');
  const sandboxToken = async (secret: string) =>
    postToken(t.app, { ...GRANT, client_id: 'sandbox-client', client_secret: secret });
  const depsWith = (env: Record<string, string>) => {
    const config = loadConfig(testEnv({ DATABASE_URL: t.db.url, ...env }));
    return { ...t.deps, config, secretBox: new SecretBox(config.secretsEncryptionKey!) };
  };

  it('seeds the sandbox client with the keyed hash of the configured secret', async () => {
    assert.match(await sandboxHash(), /^hmac-sha256\$/);
    assert.equal((await sandboxToken('sandbox-secret')).statusCode, 200);
  });

  it('re-hashes a scrypt hash of the sandbox secret on start', async () => {
    await t.db.pool.query("UPDATE api_clients SET secret_hash = $1 WHERE client_id = 'sandbox-client'", [
      scryptHash('sandbox-secret'),
    ]);
    await seedSandbox(t.deps);
    assert.equal(await t.deps.secretBox.checkClientSecret('sandbox-secret', await sandboxHash()), 'match');
  });

  it('stores a changed SANDBOX_CLIENT_SECRET on start: the new secret works, the old one no longer does', async () => {
    await seedSandbox(depsWith({ SANDBOX_CLIENT_SECRET: 'another-sandbox-secret' }));
    assert.equal((await sandboxToken('another-sandbox-secret')).statusCode, 200);
    assert.equal((await sandboxToken('sandbox-secret')).statusCode, 401);
    await seedSandbox(t.deps);
    assert.equal((await sandboxToken('sandbox-secret')).statusCode, 200);
  });

  it('re-hashes the sandbox secret when SECRETS_ENCRYPTION_KEY has changed', async () => {
    const rekeyed = depsWith({ SECRETS_ENCRYPTION_KEY: 'b'.repeat(64) });
    await seedSandbox(rekeyed);
    const hash = await sandboxHash();
    assert.equal(await rekeyed.secretBox.checkClientSecret('sandbox-secret', hash), 'match');
    assert.equal(await t.deps.secretBox.checkClientSecret('sandbox-secret', hash), 'other-key');
    await seedSandbox(t.deps);
    assert.equal((await sandboxToken('sandbox-secret')).statusCode, 200);
  });
});
