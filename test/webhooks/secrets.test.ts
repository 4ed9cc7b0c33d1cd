// Signing secrets (contract section 2, D13): returned by create and rotate only; never in read, search,
// update, delete, error responses or log lines; stored encrypted, never as plaintext.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { recordIssuedSecret, startTestApp, type TestApp } from '../helpers/app.ts';
import {
  ATTEMPTS,
  client,
  EVENTS,
  insertAttempt,
  publishTestEvent,
  SANDBOX_EVENTS,
  SUBSCRIPTIONS,
  type SubscriptionJson,
  setSubscriptionState,
  uniqueUrl,
} from './fixtures.ts';

const SECRET_PATTERN = /whsec_[0-9a-f]{64}/;

describe('signing secrets never leak', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ env: { LOG_LEVEL: 'debug' } });
  });
  after(() => t.close());

  it('appear only in create and rotate responses; nowhere in other responses, errors or logs', async () => {
    const api = client(t, await t.tenant());
    const secrets: string[] = [];
    const otherBodies: string[] = [];
    const keep = (response: { body: string }) => {
      otherBodies.push(response.body);
      return response;
    };

    const createResponse = await api.post(SUBSCRIPTIONS, {
      endpoint_url: uniqueUrl(),
      event_type_codes: ['transfer.completed'],
    });
    const created = createResponse.json() as SubscriptionJson;
    secrets.push(created.signing_secret!);
    const rotated = (
      await api.post(`${SUBSCRIPTIONS}/${created.id}/rotate-secret`)
    ).json() as SubscriptionJson;
    secrets.push(rotated.signing_secret!);
    for (const secret of secrets) recordIssuedSecret(secret);
    assert.equal(new Set(secrets).size, 2);

    const url = `${SUBSCRIPTIONS}/${created.id}`;
    keep(await api.get(url));
    keep(await api.patch(url, { status: 'active' }));
    keep(await api.patch(url, { max_retries: 3, event_type_codes: ['transfer.completed', 'payout.failed'] }));
    keep(await api.post(`${SUBSCRIPTIONS}/search`, {}));
    keep(await api.post(`${SUBSCRIPTIONS}/search`, { search: 'hooks' }));
    const event = await publishTestEvent(api);
    await insertAttempt(t, { eventId: event.id, subscriptionId: created.id });
    keep(await api.get(`${EVENTS}/${event.id}`));
    keep(await api.post(`${EVENTS}/search`, {}));
    keep(await api.post(`${ATTEMPTS}/search`, {}));
    keep(await api.post(SANDBOX_EVENTS, { event_type_code: 'transfer.completed' }));
    // Errors, including ones that echo the request: validation, conflict, state, limit.
    keep(await api.patch(url, { status: 'deleted' }));
    keep(await api.patch(url, { signing_secret: secrets[1] }));
    keep(await api.post(SUBSCRIPTIONS, { endpoint_url: created.endpoint_url, event_type_codes: [] }));
    keep(await api.post(SUBSCRIPTIONS, { endpoint_url: 'http://x', event_type_codes: [] }));
    keep(await api.patch(url, { status: 'paused' }));
    keep(await api.patch(url, { status: 'paused' }));
    await setSubscriptionState(t, created.id, 'auto_disabled', 50);
    // The probe fails (nothing listens on hooks.example.com here) and the 400 names the outcome only.
    keep(await api.patch(url, { status: 'active', endpoint_url: 'https://127.0.0.1:9/unreachable' }));
    keep(await api.del(url));
    keep(await api.del(url));
    keep(await api.patch(url, { max_retries: 1 }));
    keep(await api.post(`${url}/rotate-secret`));

    for (const body of otherBodies) {
      assert.doesNotMatch(body, SECRET_PATTERN, body);
      assert.doesNotMatch(body, /signing_secret"\s*:/, body);
      for (const secret of secrets) assert.ok(!body.includes(secret.slice(6)), body);
    }
    const logs = t.logs.text;
    assert.ok(logs.length > 0);
    assert.doesNotMatch(logs, SECRET_PATTERN);
    for (const secret of secrets) assert.ok(!logs.includes(secret.slice(6)), 'a log line holds a secret');

    // Stored sealed (AES-256-GCM, D13): no plaintext in the column, and it opens to the current secret.
    const stored = await t.db.pool.query<Record<string, unknown>>(
      'SELECT * FROM webhook_subscriptions WHERE id = $1',
      [created.id],
    );
    const row = JSON.stringify(stored.rows[0]);
    for (const secret of secrets) assert.ok(!row.includes(secret.slice(6)));
    assert.doesNotMatch(row, /whsec_/);
    const sealed = stored.rows[0]!.signing_secret_sealed as string;
    assert.match(sealed, /^v1\./);
    assert.equal(t.deps.secretBox.decrypt(sealed), secrets[1]);
  });
});
