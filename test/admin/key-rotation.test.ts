// Rotating SECRETS_ENCRYPTION_KEY while the service runs (D13; operator guide, authentication.md): the new
// key seals and hashes, previous keys only open and verify, a re-seal moves every sealed value to the new
// key, a client secret's hash moves on its next token request, and the status tells when a previous key
// can be dropped.
import assert from 'node:assert/strict';
import { createCipheriv, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { runAdminCli } from '../../src/admin/cli.ts';
import { replaceSealedValue, sealedValuesToReseal } from '../../src/admin/repository.ts';
import type { SecretsStatus } from '../../src/admin/secrets.ts';
import { createClient } from '../../src/admin/service.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { SecretBox } from '../../src/platform/secrets.ts';
import { BENEFICIARIES, type BeneficiaryJson, bodyOf, createBeneficiary } from '../beneficiaries/fixtures.ts';
import { requestToken, startTestApp, TEST_ADMIN_KEY, type TestApp } from '../helpers/app.ts';
import { apiClient } from '../helpers/http.ts';
import { keyIdOf } from '../helpers/secret-keys.ts';
import { createSubscription, SUBSCRIPTIONS } from '../webhooks/fixtures.ts';

const OLD_KEY = '1'.repeat(64);
const NEW_KEY = '2'.repeat(64);
const LOST_KEY = '3'.repeat(64);
const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };

/** A value in the form sealed before values named their key: `v1.<nonce>.<tag>.<ciphertext>`. */
function unlabelledSeal(hexKey: string, plaintext: string): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(hexKey, 'hex'), nonce);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', nonce, cipher.getAuthTag(), ciphertext].map((part) => part.toString('base64url')).join('.');
}

describe('SecretBox with previous keys (D13)', () => {
  const oldBox = new SecretBox(OLD_KEY);
  const rotated = new SecretBox(NEW_KEY, [OLD_KEY]);

  it('names the sealing key in every sealed value and opens values of the current and previous keys', () => {
    const sealed = rotated.encrypt('whsec_new');
    assert.equal(sealed.split('.').length, 5);
    assert.ok(sealed.startsWith(`v2.${keyIdOf(NEW_KEY)}.`), sealed);
    assert.equal(rotated.sealedPrefix, `v2.${keyIdOf(NEW_KEY)}.`);
    assert.equal(rotated.decrypt(sealed), 'whsec_new');
    const sealedBefore = oldBox.encrypt('whsec_old');
    assert.ok(sealedBefore.startsWith(`v2.${keyIdOf(OLD_KEY)}.`), sealedBefore);
    assert.equal(rotated.decrypt(sealedBefore), 'whsec_old');
    assert.throws(() => new SecretBox(NEW_KEY).decrypt(sealedBefore), {
      message: `sealed under key ${keyIdOf(OLD_KEY)}, which is not configured`,
    });
  });

  it('opens unlabelled values of either key by their tag, and refuses those of a key it does not hold', () => {
    assert.equal(rotated.decrypt(unlabelledSeal(OLD_KEY, 'old')), 'old');
    assert.equal(rotated.decrypt(unlabelledSeal(NEW_KEY, 'new')), 'new');
    assert.throws(() => rotated.decrypt(unlabelledSeal(LOST_KEY, 'lost')), {
      message: 'sealed under a key that is not configured',
    });
  });

  it('binds the key id to the ciphertext and takes only full 16-byte tags', () => {
    const twoKeys = new SecretBox(NEW_KEY, [OLD_KEY]);
    const [version, , nonce, tag, ciphertext] = oldBox.encrypt('x').split('.');
    // The same bytes under the other configured key's id: that key's tag check fails.
    assert.throws(() => twoKeys.decrypt([version, keyIdOf(NEW_KEY), nonce, tag, ciphertext].join('.')));
    const shortTag = Buffer.from(tag!, 'base64url').subarray(0, 4).toString('base64url');
    assert.throws(() => twoKeys.decrypt([version, keyIdOf(OLD_KEY), nonce, shortTag, ciphertext].join('.')));
  });

  it('verifies a client secret hashed under a previous key as outdated, so that it is hashed again', async () => {
    const hash = oldBox.hashClientSecret('s3cret');
    assert.equal(hash.split('$')[1], keyIdOf(OLD_KEY));
    assert.equal(await rotated.checkClientSecret('s3cret', hash), 'match-outdated');
    assert.equal(await rotated.checkClientSecret('guess', hash), 'mismatch');
    assert.equal(await rotated.checkClientSecret('s3cret', rotated.hashClientSecret('s3cret')), 'match');
    assert.equal(await new SecretBox(NEW_KEY).checkClientSecret('s3cret', hash), 'other-key');
    assert.equal(rotated.keyRole(keyIdOf(NEW_KEY)), 'current');
    assert.equal(rotated.keyRole(keyIdOf(OLD_KEY)), 'previous');
    assert.equal(rotated.keyRole(keyIdOf(LOST_KEY)), 'not_configured');
  });

  it('refuses a key given twice', () => {
    assert.throws(() => new SecretBox(NEW_KEY, [OLD_KEY, OLD_KEY]), {
      message: 'the encryption keys must differ from each other',
    });
  });
});

describe('SECRETS_ENCRYPTION_KEYS_PREVIOUS (configuration)', () => {
  const rejects = (env: Record<string, string>, reason: RegExp) =>
    assert.throws(
      () => loadConfig(env),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.variable === 'SECRETS_ENCRYPTION_KEYS_PREVIOUS' &&
        reason.test(error.message),
    );

  it('is empty by default, and a comma-separated list of keys otherwise', () => {
    assert.deepEqual(loadConfig({}).secretsEncryptionKeysPrevious, []);
    const config = loadConfig({
      SECRETS_ENCRYPTION_KEY: NEW_KEY,
      SECRETS_ENCRYPTION_KEYS_PREVIOUS: ` ${OLD_KEY}, ${LOST_KEY.toUpperCase()}`,
    });
    assert.deepEqual(config.secretsEncryptionKeysPrevious, [OLD_KEY, LOST_KEY]);
  });
  it('refuses a key that is not 32 bytes of hex', () =>
    rejects(
      { SECRETS_ENCRYPTION_KEY: NEW_KEY, SECRETS_ENCRYPTION_KEYS_PREVIOUS: `${OLD_KEY},abc` },
      /64 hex/,
    ));
  it('refuses the current key among them', () =>
    rejects(
      { SECRETS_ENCRYPTION_KEY: NEW_KEY, SECRETS_ENCRYPTION_KEYS_PREVIOUS: NEW_KEY.toUpperCase() },
      /must not hold SECRETS_ENCRYPTION_KEY/,
    ));
  it('refuses a key named twice', () =>
    rejects(
      { SECRETS_ENCRYPTION_KEY: NEW_KEY, SECRETS_ENCRYPTION_KEYS_PREVIOUS: `${OLD_KEY},${OLD_KEY}` },
      /twice/,
    ));
  it('needs SECRETS_ENCRYPTION_KEY', () =>
    rejects({ SECRETS_ENCRYPTION_KEYS_PREVIOUS: OLD_KEY }, /needs SECRETS_ENCRYPTION_KEY/));
});

describe('rotating SECRETS_ENCRYPTION_KEY while the service runs (D13)', () => {
  let before_: TestApp;
  let during: TestApp;
  let tenantClient: { id: string; secret: string };
  let idleClient: { id: string; secret: string };
  let beneficiary: BeneficiaryJson;
  let subscriptionId: string;
  let signingSecret: string;
  const createKey = { 'idempotency-key': 'rotation-create-1' };

  before(async () => {
    before_ = await startTestApp({ env: { SECRETS_ENCRYPTION_KEY: OLD_KEY } });
    const tenant = await before_.tenant();
    tenantClient = { id: tenant.clientId, secret: tenant.clientSecret };
    const idle = await createClient(before_.deps, { organisation_id: tenant.organisationId });
    idleClient = { id: idle.client_id, secret: idle.client_secret! };
    const api = apiClient(before_, tenant);
    beneficiary = await createBeneficiary(api, bodyOf('DE'), createKey);
    const subscription = await createSubscription(api, { event_type_codes: ['transfer.completed'] });
    subscriptionId = subscription.id;
    signingSecret = subscription.signing_secret!;
    // Every process now holds the new key, and the old one as previous.
    during = await startTestApp({
      db: before_.db,
      env: { SECRETS_ENCRYPTION_KEY: NEW_KEY, SECRETS_ENCRYPTION_KEYS_PREVIOUS: OLD_KEY },
    });
  });
  after(async () => {
    await during?.close();
    await before_?.close();
  });

  const status = async (t: TestApp): Promise<SecretsStatus> => {
    const response = await t.app.inject({ method: 'GET', url: '/admin/v1/secrets', headers: admin });
    assert.equal(response.statusCode, 200, response.body);
    return response.json() as SecretsStatus;
  };
  const sealedUnder = (current: SecretsStatus, key: string) =>
    current.sealed
      .filter((entry) => entry.key === key)
      .map((entry) => `${entry.table}.${entry.column}`)
      .sort();
  const tokenFor = (t: TestApp, client: { id: string; secret: string }) =>
    t.app.inject({
      method: 'POST',
      url: '/realms/sandbox/protocol/openid-connect/token',
      payload: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: client.id,
        client_secret: client.secret,
      }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });

  it('1. opens, verifies and replays what the previous key sealed and hashed', async () => {
    const current = await status(during);
    assert.equal(current.key_id, keyIdOf(NEW_KEY));
    assert.deepEqual(current.previous_key_ids, [keyIdOf(OLD_KEY)]);
    assert.deepEqual(sealedUnder(current, 'previous'), [
      'beneficiaries.account_sealed',
      'idempotency_keys.response_body',
      'signing_keys.private_key_sealed',
      'webhook_subscriptions.signing_secret_sealed',
    ]);
    assert.deepEqual(sealedUnder(current, 'current'), []);
    const underOld = current.client_secrets.find((entry) => entry.key_id === keyIdOf(OLD_KEY));
    assert.equal(underOld?.key, 'previous');
    assert.ok(underOld?.client_ids?.includes(tenantClient.id) && underOld.client_ids.includes(idleClient.id));

    // A token for a client hashed under the old key; its hash then names the new one.
    const token = await requestToken(during.app, tenantClient.id, tenantClient.secret);
    const stored = await during.db.pool.query<{ secret_hash: string }>(
      'SELECT secret_hash FROM api_clients WHERE client_id = $1',
      [tenantClient.id],
    );
    assert.equal(stored.rows[0]!.secret_hash.split('$')[1], keyIdOf(NEW_KEY));
    const rehashed = during.logs.lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find(
        (line) =>
          line.msg === 'client secret re-hashed under the current SECRETS_ENCRYPTION_KEY' &&
          line.client_id === tenantClient.id,
      );
    assert.equal(rehashed?.stored_key_id, keyIdOf(OLD_KEY));
    assert.equal(rehashed?.key_id, keyIdOf(NEW_KEY));

    const auth = { authorization: `Bearer ${token}` };
    const read = await during.app.inject({
      method: 'GET',
      url: `${BENEFICIARIES}/${beneficiary.id}`,
      headers: auth,
    });
    assert.equal(read.statusCode, 200, read.body);
    assert.deepEqual((read.json() as BeneficiaryJson).account, beneficiary.account);
    const replay = await during.app.inject({
      method: 'POST',
      url: BENEFICIARIES,
      payload: bodyOf('DE'),
      headers: { ...auth, ...createKey },
    });
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.deepEqual(replay.json(), beneficiary);
    // A secret rotated now is sealed under the new key; the previous secret it reports opened with the old.
    const rotated = await during.app.inject({
      method: 'POST',
      url: `${SUBSCRIPTIONS}/${subscriptionId}/rotate-secret`,
      headers: auth,
    });
    assert.equal(rotated.statusCode, 200, rotated.body);
    signingSecret = (rotated.json() as { signing_secret: string }).signing_secret;
    const sealed = await during.db.pool.query<{ signing_secret_sealed: string }>(
      'SELECT signing_secret_sealed FROM webhook_subscriptions WHERE id = $1',
      [subscriptionId],
    );
    assert.ok(sealed.rows[0]!.signing_secret_sealed.startsWith(`v2.${keyIdOf(NEW_KEY)}.`));
  });

  it('2. re-seals, a limited number at a time, every value under the new key, and logs the action', async () => {
    const reseal = (payload: Record<string, unknown>) =>
      during.app.inject({ method: 'POST', url: '/admin/v1/secrets/reseal', headers: admin, payload });
    const first = await reseal({ limit: 1 });
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(first.json(), { key_id: keyIdOf(NEW_KEY), resealed: 1, unreadable: 0, done: false });
    const rest = await reseal({});
    // The beneficiary, its stored response and the token signing key (the first call took one of these).
    assert.deepEqual(rest.json(), { key_id: keyIdOf(NEW_KEY), resealed: 2, unreadable: 0, done: true });
    assert.deepEqual(sealedUnder(await status(during), 'previous'), []);
    const again = await reseal({});
    assert.deepEqual(again.json(), { key_id: keyIdOf(NEW_KEY), resealed: 0, unreadable: 0, done: true });

    const actions = during.logs.lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.operator_action === 'secrets.reseal');
    assert.deepEqual(
      actions.map((line) => [line.outcome, line.resealed, line.unreadable]),
      [
        ['succeeded', 1, 0],
        ['succeeded', 2, 0],
        ['succeeded', 0, 0],
      ],
    );
    for (const limit of [0, 100_001, 'ten']) {
      const refused = await reseal({ limit });
      assert.equal(refused.statusCode, 422, `${limit}: ${refused.body}`);
    }
  });

  it('3. leaves a value sealed under a key it does not hold, and counts it', async () => {
    const lost = new SecretBox(LOST_KEY).encrypt('whsec_lost');
    await during.db.pool.query('UPDATE webhook_subscriptions SET signing_secret_sealed = $1 WHERE id = $2', [
      lost,
      subscriptionId,
    ]);
    try {
      const response = await during.app.inject({
        method: 'POST',
        url: '/admin/v1/secrets/reseal',
        headers: admin,
        payload: {},
      });
      assert.deepEqual(response.json(), { key_id: keyIdOf(NEW_KEY), resealed: 0, unreadable: 1, done: true });
      const lostEntry = (await status(during)).sealed.find((entry) => entry.key === 'not_configured');
      assert.deepEqual(lostEntry, {
        table: 'webhook_subscriptions',
        column: 'signing_secret_sealed',
        key_id: keyIdOf(LOST_KEY),
        key: 'not_configured',
        count: 1,
      });
      const stored = await during.db.pool.query<{ signing_secret_sealed: string }>(
        'SELECT signing_secret_sealed FROM webhook_subscriptions WHERE id = $1',
        [subscriptionId],
      );
      assert.equal(stored.rows[0]!.signing_secret_sealed, lost);
    } finally {
      await during.db.pool.query(
        'UPDATE webhook_subscriptions SET signing_secret_sealed = $1 WHERE id = $2',
        [during.deps.secretBox.encrypt(signingSecret), subscriptionId],
      );
    }
  });

  it('4. does not overwrite a value that changed after it was read', async () => {
    const column = { table: 'webhook_subscriptions', key: ['id'], column: 'signing_secret_sealed' };
    await during.db.pool.query('UPDATE webhook_subscriptions SET signing_secret_sealed = $1 WHERE id = $2', [
      new SecretBox(OLD_KEY).encrypt(signingSecret),
      subscriptionId,
    ]);
    const [read] = await sealedValuesToReseal(
      during.db.pool,
      column,
      during.deps.secretBox.sealedPrefix,
      null,
      10,
    );
    assert.deepEqual(read?.key, [subscriptionId]);
    const written = during.deps.secretBox.encrypt(signingSecret);
    await during.db.pool.query('UPDATE webhook_subscriptions SET signing_secret_sealed = $1 WHERE id = $2', [
      written,
      subscriptionId,
    ]);
    assert.equal(
      await replaceSealedValue(during.db.pool, column, read!, during.deps.secretBox.encrypt('stale')),
      false,
    );
    const stored = await during.db.pool.query<{ signing_secret_sealed: string }>(
      'SELECT signing_secret_sealed FROM webhook_subscriptions WHERE id = $1',
      [subscriptionId],
    );
    assert.equal(stored.rows[0]!.signing_secret_sealed, written);
  });

  it('5. without the previous key, everything re-sealed still opens; a client not re-hashed since cannot get a token', async () => {
    const afterwards = await startTestApp({ db: before_.db, env: { SECRETS_ENCRYPTION_KEY: NEW_KEY } });
    try {
      const current = await status(afterwards);
      assert.deepEqual(current.previous_key_ids, []);
      assert.deepEqual(
        current.sealed.filter((entry) => entry.key !== 'current'),
        [],
      );
      // The status named the idle client before the old key was dropped; it now needs re-issuing.
      const stranded = current.client_secrets.find((entry) => entry.key_id === keyIdOf(OLD_KEY));
      assert.equal(stranded?.key, 'not_configured');
      assert.deepEqual(stranded?.client_ids, [idleClient.id]);
      assert.equal((await tokenFor(afterwards, idleClient)).statusCode, 401);

      const token = await requestToken(afterwards.app, tenantClient.id, tenantClient.secret);
      const auth = { authorization: `Bearer ${token}` };
      const read = await afterwards.app.inject({
        method: 'GET',
        url: `${BENEFICIARIES}/${beneficiary.id}`,
        headers: auth,
      });
      assert.deepEqual((read.json() as BeneficiaryJson).account, beneficiary.account);
      const replay = await afterwards.app.inject({
        method: 'POST',
        url: BENEFICIARIES,
        payload: bodyOf('DE'),
        headers: { ...auth, ...createKey },
      });
      assert.deepEqual(replay.json(), beneficiary);
    } finally {
      await afterwards.close();
    }
  });

  it('6. `admin reseal-secrets` re-seals until done, and fails on values of a key that is not configured', async () => {
    await during.db.pool.query('UPDATE beneficiaries SET account_sealed = $1 WHERE id = $2', [
      new SecretBox(OLD_KEY).encrypt(JSON.stringify(beneficiary.account)),
      beneficiary.id,
    ]);
    const address = await during.app.listen({ port: 0, host: '127.0.0.1' });
    const env = { ADMIN_API_KEY: TEST_ADMIN_KEY, ADMIN_URL: address };
    const printed: string[] = [];
    const errors: string[] = [];
    const [write, writeError] = [process.stdout.write, process.stderr.write];
    process.stdout.write = ((chunk: string) =>
      printed.push(String(chunk)) > 0) as typeof process.stdout.write;
    process.stderr.write = ((chunk: string) => errors.push(String(chunk)) > 0) as typeof process.stderr.write;
    let codes: number[];
    try {
      codes = [await runAdminCli(['reseal-secrets', '--limit', '1'], env)];
      await during.db.pool.query('UPDATE beneficiaries SET account_sealed = $1 WHERE id = $2', [
        new SecretBox(LOST_KEY).encrypt('{}'),
        beneficiary.id,
      ]);
      codes.push(await runAdminCli(['reseal-secrets'], env));
      codes.push(await runAdminCli(['reseal-secrets', '--limit', 'all'], env));
    } finally {
      process.stdout.write = write;
      process.stderr.write = writeError;
      await during.db.pool.query('UPDATE beneficiaries SET account_sealed = $1 WHERE id = $2', [
        during.deps.secretBox.encrypt(JSON.stringify(beneficiary.account)),
        beneficiary.id,
      ]);
    }
    assert.deepEqual(codes, [0, 1, 2]);
    assert.deepEqual(
      printed.map((line) => JSON.parse(line)),
      [
        { key_id: keyIdOf(NEW_KEY), resealed: 1, unreadable: 0, done: false },
        { key_id: keyIdOf(NEW_KEY), resealed: 0, unreadable: 0, done: true },
        { key_id: keyIdOf(NEW_KEY), resealed: 0, unreadable: 1, done: true },
      ],
    );
    assert.match(errors[0]!, /sealed under a key that is not configured/);
    assert.match(errors[1]!, /--limit must be a whole number/);
  });
});
