// Rotating SECRETS_ENCRYPTION_KEY while the service runs (D13; operator guide, authentication.md): the new
// key seals and hashes, previous keys only open and verify, a re-seal sweep moves every sealed value to the
// new key, a client secret's hash moves on its next token request, and the status names the clients that
// still need a previous key.
import assert from 'node:assert/strict';
import { createCipheriv, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { runAdminCli } from '../../src/admin/cli.ts';
import { replaceSealedValue, sealedValuesAfter } from '../../src/admin/repository.ts';
import type { SecretsStatus } from '../../src/admin/secrets.ts';
import { createClient } from '../../src/admin/service.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { SecretBox } from '../../src/platform/secrets.ts';
import { BENEFICIARIES, type BeneficiaryJson, bodyOf, createBeneficiary } from '../beneficiaries/fixtures.ts';
import { errorBody, requestToken, startTestApp, TEST_ADMIN_KEY, type TestApp } from '../helpers/app.ts';
import { apiClient } from '../helpers/http.ts';
import { keyIdOf } from '../helpers/secret-keys.ts';
import {
  activeSubscription,
  createSubscription,
  publishTestEvent,
  SUBSCRIPTIONS,
} from '../webhooks/fixtures.ts';

const OLD_KEY = '1'.repeat(64);
const NEW_KEY = '2'.repeat(64);
const LOST_KEY = '3'.repeat(64);
const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };

/** A sealed value in the form of the operator guide: `v1.<nonce>.<tag>.<ciphertext>`, AES-256-GCM. */
function sealedByHand(hexKey: string, plaintext: string): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(hexKey, 'hex'), nonce);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', nonce, cipher.getAuthTag(), ciphertext].map((part) => part.toString('base64url')).join('.');
}

describe('SecretBox with previous keys (D13)', () => {
  const oldBox = new SecretBox(OLD_KEY);
  const rotated = new SecretBox(NEW_KEY, [OLD_KEY]);
  const NOT_OPENED = { message: 'sealed under a key that is not configured, or damaged' };

  it('seals in the one form every release reads, and opens what the current or a previous key sealed', () => {
    const sealed = rotated.encrypt('whsec_new');
    assert.match(sealed, /^v1\.[\w-]{16}\.[\w-]{22}\.[\w-]+$/);
    assert.equal(rotated.decrypt(sealed), 'whsec_new');
    assert.equal(new SecretBox(NEW_KEY).decrypt(sealed), 'whsec_new');
    assert.equal(rotated.decrypt(oldBox.encrypt('whsec_old')), 'whsec_old');
    // Sealed by hand in that form, as another release seals it.
    assert.equal(rotated.decrypt(sealedByHand(OLD_KEY, 'by hand')), 'by hand');
    assert.throws(() => new SecretBox(NEW_KEY).decrypt(oldBox.encrypt('whsec_old')), NOT_OPENED);
    assert.throws(() => rotated.decrypt(sealedByHand(LOST_KEY, 'lost')), NOT_OPENED);
  });

  it('re-seals under the current key what a previous key sealed, and leaves what the current key sealed', () => {
    const resealed = rotated.reseal(oldBox.encrypt('account'));
    assert.equal(new SecretBox(NEW_KEY).decrypt(resealed!), 'account');
    assert.equal(rotated.reseal(rotated.encrypt('account')), null);
    assert.throws(() => rotated.reseal(sealedByHand(LOST_KEY, 'lost')), NOT_OPENED);
  });

  it('takes only full 16-byte tags', () => {
    const [version, nonce, tag, ciphertext] = rotated.encrypt('x').split('.');
    const shortTag = Buffer.from(tag!, 'base64url').subarray(0, 4).toString('base64url');
    assert.throws(() => rotated.decrypt([version, nonce, shortTag, ciphertext].join('.')), NOT_OPENED);
  });

  it('verifies a client secret hashed under a previous key as outdated, so that it is hashed again', async () => {
    const hash = oldBox.hashClientSecret('s3cret');
    assert.equal(hash.split('$')[1], keyIdOf(OLD_KEY));
    assert.equal(await rotated.checkClientSecret('s3cret', hash), 'match-outdated');
    assert.equal(await rotated.checkClientSecret('guess', hash), 'mismatch');
    assert.equal(await rotated.checkClientSecret('s3cret', rotated.hashClientSecret('s3cret')), 'match');
    assert.equal(await new SecretBox(NEW_KEY).checkClientSecret('s3cret', hash), 'other-key');
    assert.equal(rotated.keyId, keyIdOf(NEW_KEY));
    assert.deepEqual(rotated.previousKeyIds, [keyIdOf(OLD_KEY)]);
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
  const reseal = (query = '') =>
    during.app.inject({ method: 'POST', url: `/admin/v1/secrets/reseal${query}`, headers: admin });
  /** Every sealed value of the four sealed columns, in the order a sweep reads them. */
  const sealedValues = async (): Promise<string[]> =>
    (
      await during.db.pool.query<{ sealed: string }>(
        `(SELECT private_key_sealed AS sealed FROM signing_keys ORDER BY kid)
         UNION ALL (SELECT response_body FROM idempotency_keys WHERE response_body IS NOT NULL ORDER BY organisation_id, key)
         UNION ALL (SELECT signing_secret_sealed FROM webhook_subscriptions ORDER BY id)
         UNION ALL (SELECT account_sealed FROM beneficiaries ORDER BY id)`,
      )
    ).rows.map((row) => row.sealed);
  const subscriptionSealed = async (): Promise<string> =>
    (
      await during.db.pool.query<{ signing_secret_sealed: string }>(
        'SELECT signing_secret_sealed FROM webhook_subscriptions WHERE id = $1',
        [subscriptionId],
      )
    ).rows[0]!.signing_secret_sealed;
  const setSubscriptionSealed = (sealed: string) =>
    during.db.pool.query('UPDATE webhook_subscriptions SET signing_secret_sealed = $1 WHERE id = $2', [
      sealed,
      subscriptionId,
    ]);
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
    const underOld = current.client_secrets.find((entry) => entry.key_id === keyIdOf(OLD_KEY));
    assert.equal(underOld?.key, 'previous');
    assert.deepEqual(underOld?.client_ids, [tenantClient.id, idleClient.id].sort());
    // Everything sealed so far opens with the old key only.
    const sealed = await sealedValues();
    assert.equal(sealed.length, 4);
    for (const value of sealed) assert.throws(() => new SecretBox(NEW_KEY).decrypt(value));

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
    // A secret rotated now is sealed under the new key.
    const rotated = await during.app.inject({
      method: 'POST',
      url: `${SUBSCRIPTIONS}/${subscriptionId}/rotate-secret`,
      headers: auth,
    });
    assert.equal(rotated.statusCode, 200, rotated.body);
    signingSecret = (rotated.json() as { signing_secret: string }).signing_secret;
    assert.equal(new SecretBox(NEW_KEY).decrypt(await subscriptionSealed()), signingSecret);
  });

  it('2. sweeps every sealed value, a limited number per call, re-sealing what the old key sealed', async () => {
    const answers: Array<Record<string, unknown>> = [];
    let next: string | null = null;
    do {
      const response = await reseal(`?limit=1${next === null ? '' : `&after=${next}`}`);
      assert.equal(response.statusCode, 200, response.body);
      const answer = response.json() as Record<string, unknown> & { next: string | null };
      answers.push(answer);
      next = answer.next;
    } while (next !== null && answers.length < 10);
    // The token signing key, the stored response, the subscription (sealed under the new key in test 1)
    // and the beneficiary's account; then a call that finds the end.
    assert.deepEqual(
      answers.map(({ visited, resealed, unreadable, unreadable_rows, key_id }) => [
        key_id,
        visited,
        resealed,
        unreadable,
        unreadable_rows,
      ]),
      [
        [keyIdOf(NEW_KEY), 1, 1, 0, []],
        [keyIdOf(NEW_KEY), 1, 1, 0, []],
        [keyIdOf(NEW_KEY), 1, 0, 0, []],
        [keyIdOf(NEW_KEY), 1, 1, 0, []],
        [keyIdOf(NEW_KEY), 0, 0, 0, []],
      ],
    );
    for (const value of await sealedValues())
      assert.doesNotThrow(() => new SecretBox(NEW_KEY).decrypt(value));
    const again = await reseal();
    assert.deepEqual(again.json(), {
      key_id: keyIdOf(NEW_KEY),
      visited: 4,
      resealed: 0,
      unreadable: 0,
      unreadable_rows: [],
      next: null,
    });

    const actions = during.logs.lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.operator_action === 'secrets.reseal');
    assert.deepEqual(
      actions.map((line) => [line.outcome, line.visited, line.resealed, line.unreadable]),
      [
        ['succeeded', 1, 1, 0],
        ['succeeded', 1, 1, 0],
        ['succeeded', 1, 0, 0],
        ['succeeded', 1, 1, 0],
        ['succeeded', 0, 0, 0],
        ['succeeded', 4, 0, 0],
      ],
    );
  });

  it('3. refuses a limit out of range and a cursor it did not give, naming the parameter', async () => {
    const foreign = Buffer.from(JSON.stringify(['api_clients.secret_hash', null])).toString('base64url');
    const shortKey = Buffer.from(JSON.stringify(['idempotency_keys.response_body', ['x']])).toString(
      'base64url',
    );
    for (const [query, field] of [
      ['?limit=0', 'limit'],
      ['?limit=100001', 'limit'],
      ['?limit=ten', 'limit'],
      ['?after=not-a-cursor', 'after'],
      [`?after=${foreign}`, 'after'],
      [`?after=${shortKey}`, 'after'],
      ['?from=1', 'from'],
    ]) {
      const response = await reseal(query);
      assert.equal(response.statusCode, 422, `${query}: ${response.body}`);
      assert.equal(errorBody(response.body).field, field, query);
      assert.equal(errorBody(response.body).code, 'VALIDATION_FAILED');
    }
  });

  it('4. leaves a value no configured key opens, and names its row', async () => {
    const lost = new SecretBox(LOST_KEY).encrypt('whsec_lost');
    await setSubscriptionSealed(lost);
    try {
      const response = await reseal();
      assert.deepEqual(response.json(), {
        key_id: keyIdOf(NEW_KEY),
        visited: 4,
        resealed: 0,
        unreadable: 1,
        unreadable_rows: [
          { table: 'webhook_subscriptions', column: 'signing_secret_sealed', key: [subscriptionId] },
        ],
        next: null,
      });
      assert.equal(await subscriptionSealed(), lost);
    } finally {
      await setSubscriptionSealed(during.deps.secretBox.encrypt(signingSecret));
    }
  });

  it('5. does not overwrite a value that changed after it was read', async () => {
    const column = { table: 'webhook_subscriptions', key: ['id'], column: 'signing_secret_sealed' };
    await setSubscriptionSealed(new SecretBox(OLD_KEY).encrypt(signingSecret));
    const [read] = await sealedValuesAfter(during.db.pool, column, null, 10);
    assert.deepEqual(read?.key, [subscriptionId]);
    const written = during.deps.secretBox.encrypt(signingSecret);
    await setSubscriptionSealed(written);
    assert.equal(
      await replaceSealedValue(during.db.pool, column, read!, during.deps.secretBox.encrypt('stale')),
      false,
    );
    assert.equal(await subscriptionSealed(), written);
  });

  it('6. without the previous key, everything re-sealed still opens; a client not re-hashed since cannot get a token', async () => {
    const afterwards = await startTestApp({ db: before_.db, env: { SECRETS_ENCRYPTION_KEY: NEW_KEY } });
    try {
      const current = await status(afterwards);
      assert.deepEqual(current.previous_key_ids, []);
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

  it('7. `admin reseal-secrets` sweeps to the end, and fails on values no configured key opens', async () => {
    await setSubscriptionSealed(new SecretBox(OLD_KEY).encrypt(signingSecret));
    const address = await during.app.listen({ port: 0, host: '127.0.0.1' });
    const env = { ADMIN_API_KEY: TEST_ADMIN_KEY, ADMIN_URL: address };
    const { codes, printed, errors } = await capturing(async () => {
      const codes = [await runAdminCli(['reseal-secrets', '--limit', '2'], env)];
      await setSubscriptionSealed(new SecretBox(LOST_KEY).encrypt('whsec_lost'));
      codes.push(await runAdminCli(['reseal-secrets'], env));
      codes.push(await runAdminCli(['reseal-secrets', '--limit', '0'], env));
      return codes;
    }).finally(() => setSubscriptionSealed(during.deps.secretBox.encrypt(signingSecret)));
    assert.deepEqual(codes, [0, 1, 2]);
    const answers = printed.map(
      (line) => JSON.parse(line) as { visited: number; resealed: number; unreadable: number },
    );
    assert.deepEqual(
      answers.map(({ visited, resealed, unreadable }) => [visited, resealed, unreadable]),
      [
        [2, 0, 0],
        [2, 1, 0],
        [0, 0, 0],
        [4, 0, 1],
      ],
    );
    assert.match(errors[0]!, /^1 values no configured key opens/);
    assert.match(errors[1]!, /--limit must be a whole number of at least 1/);
  });

  it('8. `admin reseal-secrets` stops when the current key changes during the sweep', async () => {
    let calls = 0;
    const server = createServer((_request, response) => {
      calls += 1;
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({
          key_id: calls === 1 ? 'keyA' : 'keyB',
          visited: 1,
          resealed: 1,
          unreadable: 0,
          unreadable_rows: [],
          next: 'cursor',
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const { codes, errors } = await capturing(async () => [
        await runAdminCli(['reseal-secrets'], {
          ADMIN_API_KEY: TEST_ADMIN_KEY,
          ADMIN_URL: `http://127.0.0.1:${port}`,
        }),
      ]);
      assert.deepEqual(codes, [1]);
      assert.equal(calls, 2);
      assert.match(errors[0]!, /^The current key changed during the sweep \(keyA, then keyB\)/);
    } finally {
      server.close();
    }
  });
});

describe('event payloads in a key rotation (D13)', () => {
  let before_: TestApp;
  let during: TestApp;
  let organisationId: string;
  /** Event id -> the envelope it was published with. */
  const envelopes = new Map<string, string>();
  let inClear: string;
  let damaged: string;

  before(async () => {
    before_ = await startTestApp({ env: { SECRETS_ENCRYPTION_KEY: OLD_KEY } });
    const tenant = await before_.tenant();
    organisationId = tenant.organisationId;
    const api = apiClient(before_, tenant);
    await activeSubscription(api, { event_type_codes: ['beneficiary.created', 'transfer.completed'] });
    await createBeneficiary(api, bodyOf('DE'));
    for (let n = 0; n < 2; n++) await publishTestEvent(api, { data: { n } });
    const stored = await before_.db.pool.query<{ id: string; payload: string }>(
      'SELECT id::text, payload FROM webhook_events WHERE organisation_id = $1 ORDER BY id',
      [organisationId],
    );
    assert.equal(stored.rows.length, 3);
    for (const row of stored.rows) envelopes.set(row.id, new SecretBox(OLD_KEY).decrypt(row.payload));
    // One event's payload stored in clear, another's damaged (neither sealed nor in clear).
    [, inClear, damaged] = stored.rows.map((row) => row.id) as [string, string, string];
    await before_.db.pool.query('UPDATE webhook_events SET payload = $2 WHERE id = $1', [
      inClear,
      envelopes.get(inClear),
    ]);
    await before_.db.pool.query("UPDATE webhook_events SET payload = 'damaged' WHERE id = $1", [damaged]);
    during = await startTestApp({
      db: before_.db,
      env: { SECRETS_ENCRYPTION_KEY: NEW_KEY, SECRETS_ENCRYPTION_KEYS_PREVIOUS: OLD_KEY },
    });
  });
  after(async () => {
    await during?.close();
    await before_?.close();
  });

  const payloads = async () =>
    new Map(
      (
        await during.db.pool.query<{ id: string; payload: string }>(
          'SELECT id::text, payload FROM webhook_events WHERE organisation_id = $1',
          [organisationId],
        )
      ).rows.map((row) => [row.id, row.payload]),
    );
  const sweep = async () => {
    const response = await during.app.inject({
      method: 'POST',
      url: '/admin/v1/secrets/reseal',
      headers: admin,
    });
    assert.equal(response.statusCode, 200, response.body);
    return response.json() as {
      resealed: number;
      unreadable: number;
      unreadable_rows: unknown[];
      next: null;
    };
  };

  it('re-seals the payloads the old key sealed, seals the one stored in clear, and names the damaged one', async () => {
    const first = await sweep();
    assert.deepEqual(first.unreadable_rows, [{ table: 'webhook_events', column: 'payload', key: [damaged] }]);
    assert.equal(first.next, null);
    const stored = await payloads();
    const newBox = new SecretBox(NEW_KEY);
    for (const [id, envelope] of envelopes) {
      if (id === damaged) assert.equal(stored.get(id), 'damaged', 'left as it is');
      else assert.equal(newBox.decrypt(stored.get(id)!), envelope, `event ${id} under the new key`);
    }
    const again = await sweep();
    assert.equal(again.resealed, 0, 'nothing left to re-seal');
    assert.equal(again.unreadable, 1);
  });

  it('serves every re-sealed payload with the new key alone', async () => {
    const afterwards = await startTestApp({ db: before_.db, env: { SECRETS_ENCRYPTION_KEY: NEW_KEY } });
    try {
      // A client of the events' organisation, issued under the new key.
      const { client_id: clientId, client_secret: clientSecret } = await createClient(afterwards.deps, {
        organisation_id: organisationId,
      });
      const token = await requestToken(afterwards.app, clientId, clientSecret!);
      for (const [id, envelope] of envelopes) {
        if (id === damaged) continue;
        const read = await afterwards.app.inject({
          method: 'GET',
          url: `/api/v1/webhooks/events/${id}`,
          headers: { authorization: `Bearer ${token}` },
        });
        assert.equal(read.statusCode, 200, read.body);
        assert.equal(JSON.stringify((read.json() as { payload: unknown }).payload), envelope);
      }
    } finally {
      await afterwards.close();
    }
  });
});

/** Runs `work` with the process's standard output and error captured. */
async function capturing(
  work: () => Promise<number[]>,
): Promise<{ codes: number[]; printed: string[]; errors: string[] }> {
  const printed: string[] = [];
  const errors: string[] = [];
  const [write, writeError] = [process.stdout.write, process.stderr.write];
  process.stdout.write = ((chunk: string) => printed.push(String(chunk)) > 0) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string) => errors.push(String(chunk)) > 0) as typeof process.stderr.write;
  try {
    return { codes: await work(), printed, errors };
  } finally {
    process.stdout.write = write;
    process.stderr.write = writeError;
  }
}
