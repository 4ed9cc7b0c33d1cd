// Tenant isolation and permissions on every webhook endpoint: another organisation's resources are
// 404 and never appear in search; webhooks:read reads, webhooks:write changes; no token is 401.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { errorBody, startTestApp, type TestApp } from '../helpers/app.ts';
import {
  ATTEMPTS,
  activeSubscription,
  type Client,
  client,
  EVENT_TYPES_URL,
  EVENTS,
  type EventJson,
  insertAttempt,
  type Method,
  publishTestEvent,
  SANDBOX_EVENTS,
  SUBSCRIPTIONS,
  type SubscriptionJson,
  setEventStatus,
} from './fixtures.ts';

describe('tenant isolation and scopes', () => {
  let t: TestApp;
  let owner: Client;
  let other: Client;
  let subscription: SubscriptionJson;
  let event: EventJson;
  let attemptId: number;

  before(async () => {
    t = await startTestApp();
    owner = client(t, await t.tenant());
    other = client(t, await t.tenant());
    subscription = await activeSubscription(owner);
    event = await publishTestEvent(owner);
    await setEventStatus(t, event.id, 'dead_letter');
    attemptId = await insertAttempt(t, {
      eventId: event.id,
      subscriptionId: subscription.id,
      status: 'failed',
    });
    // The other organisation has data of its own, so that its searches are not trivially empty.
    await activeSubscription(other);
    await publishTestEvent(other);
  });
  after(() => t.close());

  it("answers 404 for every endpoint addressing another organisation's resource, and changes nothing", async () => {
    const cases: [Method, string, unknown?][] = [
      ['GET', `${SUBSCRIPTIONS}/${subscription.id}`],
      ['PATCH', `${SUBSCRIPTIONS}/${subscription.id}`, { status: 'paused' }],
      ['PATCH', `${SUBSCRIPTIONS}/${subscription.id}`, {}],
      ['POST', `${SUBSCRIPTIONS}/${subscription.id}/rotate-secret`],
      ['DELETE', `${SUBSCRIPTIONS}/${subscription.id}`],
      ['GET', `${EVENTS}/${event.id}`],
      ['POST', `${EVENTS}/${event.id}/replay`],
      ['GET', `${ATTEMPTS}/${attemptId}`],
    ];
    for (const [method, url, body] of cases) {
      const response = await other.request(method, url, body);
      assert.equal(response.statusCode, 404, `${method} ${url}: ${response.body}`);
      assert.equal(errorBody(response.body).code, 'NOT_FOUND');
    }
    const still = (await owner.get(`${SUBSCRIPTIONS}/${subscription.id}`)).json() as SubscriptionJson;
    assert.equal(still.status, 'active');
    assert.equal(still.updated_at, subscription.updated_at);
    assert.equal(((await owner.get(`${EVENTS}/${event.id}`)).json() as EventJson).status, 'dead_letter');
  });

  it("never shows another organisation's resources in search, whatever the filters", async () => {
    const searches: [string, unknown][] = [
      [`${SUBSCRIPTIONS}/search`, {}],
      [`${SUBSCRIPTIONS}/search`, { filters: { endpoint_url: [subscription.endpoint_url] } }],
      [`${SUBSCRIPTIONS}/search`, { search: subscription.endpoint_url }],
      [`${EVENTS}/search`, { filters: { id: [event.id] } }],
      [`${EVENTS}/search`, { filters: { public_id: [event.public_id] } }],
      [`${EVENTS}/search`, { search: event.public_id }],
      [`${EVENTS}/search`, { search: String(event.id) }],
      [`${ATTEMPTS}/search`, {}],
      [`${ATTEMPTS}/search`, { filters: { webhook_event_ids: [event.id] } }],
      [`${ATTEMPTS}/search`, { filters: { webhook_subscription_ids: [subscription.id] } }],
    ];
    for (const [url, body] of searches) {
      const response = await other.post(url, body);
      assert.equal(response.statusCode, 200);
      const page = response.json() as { items: { id: unknown }[] };
      const foreign = url.startsWith(SUBSCRIPTIONS)
        ? subscription.id
        : url.startsWith(EVENTS)
          ? event.id
          : attemptId;
      assert.ok(
        page.items.every((item) => item.id !== foreign),
        `${url} ${JSON.stringify(body)}`,
      );
      assert.doesNotMatch(response.body, new RegExp(`${subscription.id}|${event.public_id}`));
    }
    const attempts = await other.post(`${ATTEMPTS}/search`, {});
    assert.equal((attempts.json() as { total: number }).total, 0);
    const owned = await owner.post(`${ATTEMPTS}/search`, {});
    assert.equal((owned.json() as { total: number }).total, 1);
  });

  it('keeps URL uniqueness per organisation', async () => {
    const created = await other.post(SUBSCRIPTIONS, {
      endpoint_url: subscription.endpoint_url,
      event_type_codes: ['transfer.completed'],
    });
    assert.equal(created.statusCode, 201);
  });

  describe('scopes and tokens', () => {
    const endpoints: [Method, string, 'read' | 'write', unknown?][] = [
      ['GET', EVENT_TYPES_URL, 'read'],
      ['POST', `${SUBSCRIPTIONS}/search`, 'read', {}],
      ['GET', `${SUBSCRIPTIONS}/{sub}`, 'read'],
      ['POST', SUBSCRIPTIONS, 'write', { endpoint_url: 'https://scope.example.com/x', event_type_codes: [] }],
      ['PATCH', `${SUBSCRIPTIONS}/{sub}`, 'write', {}],
      ['POST', `${SUBSCRIPTIONS}/{sub}/rotate-secret`, 'write'],
      ['DELETE', `${SUBSCRIPTIONS}/{sub}`, 'write'],
      ['POST', `${EVENTS}/search`, 'read', {}],
      ['GET', `${EVENTS}/{event}`, 'read'],
      ['POST', `${EVENTS}/{event}/replay`, 'write'],
      ['POST', `${ATTEMPTS}/search`, 'read', {}],
      ['GET', `${ATTEMPTS}/{attempt}`, 'read'],
      ['POST', SANDBOX_EVENTS, 'write', { event_type_code: 'transfer.completed' }],
    ];
    const fill = (url: string) =>
      url
        .replace('{sub}', subscription.id)
        .replace('{event}', String(event.id))
        .replace('{attempt}', String(attemptId));

    it('answers 403 AUTHORIZATION_FAILED without the scope the endpoint needs', async () => {
      const readOnly = client(t, await t.tenant(['webhooks:read']));
      const writeOnly = client(t, await t.tenant(['webhooks:write']));
      for (const [method, url, scope, body] of endpoints) {
        const lacking = scope === 'read' ? writeOnly : readOnly;
        const response = await lacking.request(method, fill(url), body);
        assert.equal(response.statusCode, 403, `${method} ${url}: ${response.body}`);
        assert.equal(errorBody(response.body).code, 'AUTHORIZATION_FAILED');
      }
      // And the scope is enough on its own: read endpoints with a read-only token.
      for (const [method, url, scope, body] of endpoints) {
        if (scope !== 'read' || url.includes('{')) continue;
        assert.equal((await readOnly.request(method, url, body)).statusCode, 200, url);
      }
    });

    it('answers 401 {"message":"Unauthorized"} without a token, before validating the body', async () => {
      for (const [method, url] of endpoints) {
        const response = await t.app.inject({
          method,
          url: fill(url),
          headers: { 'content-type': 'application/json' },
          payload: '{"not":"valid"}',
        });
        assert.equal(response.statusCode, 401, `${method} ${url}`);
        assert.deepEqual(response.json(), { message: 'Unauthorized' });
      }
    });
  });
});
