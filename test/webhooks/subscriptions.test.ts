// Subscriptions over HTTP: create, read, update (the state table of contract section 3 with D9),
// rotate, delete, search (D4), and every error row of the contract's subscription table.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { errorBody, startTestApp, type TestApp } from '../helpers/app.ts';
import {
  type Client,
  client,
  createSubscription,
  SANDBOX_EVENTS,
  SUBSCRIPTIONS,
  type SubscriptionJson,
  setSubscriptionState,
  uniqueUrl,
} from './fixtures.ts';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function expectError(
  response: { statusCode: number; body: string },
  status: number,
  code: string,
  field?: string,
): { error: string; field?: string } {
  assert.equal(response.statusCode, status, response.body);
  const body = errorBody(response.body);
  assert.equal(body.code, code);
  assert.equal(body.field, field, `field of ${response.body}`);
  return body;
}

describe('webhook subscriptions', () => {
  let t: TestApp;
  let api: Client;
  before(async () => {
    t = await startTestApp();
  });
  // An organisation per test, so that slot counts start at zero.
  beforeEach(async () => {
    api = client(t, await t.tenant());
  });
  after(() => t.close());

  /** A fresh organisation, so that slot counts start at zero. */
  const freshClient = async () => client(t, await t.tenant());

  describe('create', () => {
    it('answers 201 with the subscription in pending_verification and its signing secret', async () => {
      const endpoint = uniqueUrl();
      const response = await api.post(SUBSCRIPTIONS, {
        endpoint_url: endpoint,
        event_type_codes: ['transfer.completed', 'payout.failed'],
      });
      assert.equal(response.statusCode, 201);
      assert.equal(response.headers['cache-control'], 'no-store');
      const body = response.json() as SubscriptionJson;
      assert.deepEqual(Object.keys(body).sort(), [
        'consecutive_failures',
        'created_at',
        'endpoint_url',
        'event_type_codes',
        'id',
        'last_delivery_at',
        'max_retries',
        'signing_secret',
        'status',
        'updated_at',
      ]);
      assert.match(body.id, UUID_V7);
      assert.equal(body.endpoint_url, endpoint);
      assert.deepEqual(body.event_type_codes, ['transfer.completed', 'payout.failed']);
      assert.equal(body.status, 'pending_verification');
      assert.equal(body.consecutive_failures, 0);
      assert.equal(body.last_delivery_at, null);
      assert.equal(body.max_retries, 8);
      assert.match(body.signing_secret!, /^whsec_[0-9a-f]{64}$/);
      assert.match(body.created_at, ISO);
      assert.match(body.updated_at, ISO);
    });

    it('takes max_retries from 0 to 15', async () => {
      for (const maxRetries of [0, 15]) {
        const created = await createSubscription(api, { max_retries: maxRetries });
        assert.equal(created.max_retries, maxRetries);
      }
    });

    it('rejects max_retries outside 0..15 or not an integer with 422 on max_retries', async () => {
      for (const maxRetries of [-1, 16, 1.5, '8', null]) {
        const response = await api.post(SUBSCRIPTIONS, {
          endpoint_url: uniqueUrl(),
          event_type_codes: [],
          max_retries: maxRetries,
        });
        expectError(response, 422, 'VALIDATION_FAILED', 'max_retries');
      }
    });

    it('accepts an empty event_type_codes: the subscription matches no event', async () => {
      const own = await freshClient();
      const created = await createSubscription(own, { event_type_codes: [] });
      assert.deepEqual(created.event_type_codes, []);
      const activated = await own.patch(`${SUBSCRIPTIONS}/${created.id}`, { status: 'active' });
      assert.equal(activated.statusCode, 200);
      const published = await own.post(SANDBOX_EVENTS, { event_type_code: 'transfer.completed' });
      expectError(published, 400, 'BAD_REQUEST');
    });

    it('collapses repeated codes', async () => {
      const created = await createSubscription(api, {
        event_type_codes: ['payout.failed', 'payout.failed', 'transfer.completed'],
      });
      assert.deepEqual(created.event_type_codes, ['payout.failed', 'transfer.completed']);
    });

    it('requires endpoint_url and event_type_codes (422 naming the field)', async () => {
      expectError(
        await api.post(SUBSCRIPTIONS, { event_type_codes: [] }),
        422,
        'VALIDATION_FAILED',
        'endpoint_url',
      );
      expectError(
        await api.post(SUBSCRIPTIONS, { endpoint_url: uniqueUrl() }),
        422,
        'VALIDATION_FAILED',
        'event_type_codes',
      );
    });

    it('rejects a single code instead of a list', async () => {
      const response = await api.post(SUBSCRIPTIONS, {
        endpoint_url: uniqueUrl(),
        event_type_codes: 'transfer.completed',
      });
      expectError(response, 422, 'VALIDATION_FAILED', 'event_type_codes');
    });

    it('rejects a code the platform does not publish, naming its index; webhook.ping included', async () => {
      const unknown = await api.post(SUBSCRIPTIONS, {
        endpoint_url: uniqueUrl(),
        event_type_codes: ['transfer.completed', 'transfer.unknown'],
      });
      expectError(unknown, 422, 'VALIDATION_FAILED', 'event_type_codes[1]');
      const ping = await api.post(SUBSCRIPTIONS, {
        endpoint_url: uniqueUrl(),
        event_type_codes: ['webhook.ping'],
      });
      expectError(ping, 422, 'VALIDATION_FAILED', 'event_type_codes[0]');
      const notString = await api.post(SUBSCRIPTIONS, { endpoint_url: uniqueUrl(), event_type_codes: [3] });
      expectError(notString, 422, 'VALIDATION_FAILED', 'event_type_codes[0]');
    });

    it('enforces the endpoint_url rules of D9 with 422 on endpoint_url', async () => {
      const invalid = [
        'http://hooks.example.com/x',
        'ftp://hooks.example.com/x',
        'https://',
        'https:///path',
        'https://user:password@hooks.example.com/x',
        'https://user@hooks.example.com/x',
        'https://@hooks.example.com/x',
        'hooks.example.com/x',
        '/relative/path',
        'not a url',
        'https://hooks.example.com/a b',
        'https://hooks.example.com/\u0000',
        ' https://hooks.example.com/x',
        '',
        `https://hooks.example.com/${'a'.repeat(2048 - 'https://hooks.example.com/'.length + 1)}`,
      ];
      for (const endpoint of invalid) {
        const response = await api.post(SUBSCRIPTIONS, { endpoint_url: endpoint, event_type_codes: [] });
        expectError(response, 422, 'VALIDATION_FAILED', 'endpoint_url');
      }
      const longest = `https://hooks.example.com/${'a'.repeat(2048 - 'https://hooks.example.com/'.length)}`;
      assert.equal(longest.length, 2048);
      const accepted = await api.post(SUBSCRIPTIONS, { endpoint_url: longest, event_type_codes: [] });
      assert.equal(accepted.statusCode, 201, accepted.body);
      // 1,026 characters as typed, 9,026 percent-encoded as requests carry them: over 2048.
      const encoded = `https://hooks.example.com/${'\u4e2d'.repeat(1000)}`;
      const refused = await api.post(SUBSCRIPTIONS, { endpoint_url: encoded, event_type_codes: [] });
      assert.equal(
        expectError(refused, 422, 'VALIDATION_FAILED', 'endpoint_url').error,
        'endpoint_url is 9026 characters long percent-encoded, as requests carry it; at most 2048',
      );
      const patched = await api.patch(`${SUBSCRIPTIONS}/${accepted.json().id}`, { endpoint_url: encoded });
      expectError(patched, 422, 'VALIDATION_FAILED', 'endpoint_url');
    });

    it('rejects unknown keys, a client-supplied secret and a status with 422 naming the key', async () => {
      for (const key of ['signing_secret', 'status', 'colour']) {
        const response = await api.post(SUBSCRIPTIONS, {
          endpoint_url: uniqueUrl(),
          event_type_codes: [],
          [key]: key === 'signing_secret' ? `whsec_${'0'.repeat(64)}` : 'active',
        });
        expectError(response, 422, 'VALIDATION_FAILED', key);
      }
    });

    it('rejects a body that is not an object', async () => {
      const response = await api.post(SUBSCRIPTIONS, [uniqueUrl()]);
      expectError(response, 422, 'VALIDATION_FAILED');
    });

    it('answers 409 with no field for a URL the organisation already uses, after normalisation', async () => {
      const own = await freshClient();
      await createSubscription(own, { endpoint_url: 'https://hooks.example.com/orders?x=1' });
      for (const same of [
        'https://hooks.example.com/orders?x=1',
        'HTTPS://Hooks.EXAMPLE.com/orders?x=1',
        'https://hooks.example.com:443/orders?x=1',
      ]) {
        const response = await own.post(SUBSCRIPTIONS, { endpoint_url: same, event_type_codes: [] });
        expectError(response, 409, 'CONFLICT', undefined);
      }
      // The path is case-sensitive, and another port is another endpoint.
      for (const other of [
        'https://hooks.example.com/Orders?x=1',
        'https://hooks.example.com:8443/orders?x=1',
      ]) {
        const response = await own.post(SUBSCRIPTIONS, { endpoint_url: other, event_type_codes: [] });
        assert.equal(response.statusCode, 201, response.body);
      }
    });

    it('lets another organisation use the same URL', async () => {
      const endpoint = uniqueUrl();
      await createSubscription(await freshClient(), { endpoint_url: endpoint });
      await createSubscription(await freshClient(), { endpoint_url: endpoint });
    });

    it('frees the URL when its subscription is deleted', async () => {
      const own = await freshClient();
      const endpoint = uniqueUrl();
      const first = await createSubscription(own, { endpoint_url: endpoint });
      assert.equal((await own.del(`${SUBSCRIPTIONS}/${first.id}`)).statusCode, 200);
      const second = await createSubscription(own, { endpoint_url: endpoint });
      assert.notEqual(second.id, first.id);
    });

    it('holds 10 subscriptions that are not deleted: paused and auto_disabled count, deleting frees a slot', async () => {
      const own = await freshClient();
      const created: SubscriptionJson[] = [];
      for (let i = 0; i < 10; i++) created.push(await createSubscription(own));
      await own.patch(`${SUBSCRIPTIONS}/${created[0]!.id}`, { status: 'active' });
      await own.patch(`${SUBSCRIPTIONS}/${created[0]!.id}`, { status: 'paused' });
      await setSubscriptionState(t, created[1]!.id, 'auto_disabled', 50);

      const eleventh = await own.post(SUBSCRIPTIONS, { endpoint_url: uniqueUrl(), event_type_codes: [] });
      const body = expectError(eleventh, 400, 'BAD_REQUEST');
      assert.match(body.error, /10 subscriptions/);

      // Order of checks (D9): 422 before 409 before the slot limit.
      expectError(
        await own.post(SUBSCRIPTIONS, { endpoint_url: created[2]!.endpoint_url, event_type_codes: [] }),
        409,
        'CONFLICT',
      );
      expectError(
        await own.post(SUBSCRIPTIONS, { endpoint_url: created[2]!.endpoint_url, event_type_codes: ['nope'] }),
        422,
        'VALIDATION_FAILED',
        'event_type_codes[0]',
      );

      assert.equal((await own.del(`${SUBSCRIPTIONS}/${created[3]!.id}`)).statusCode, 200);
      await createSubscription(own);
      expectError(
        await own.post(SUBSCRIPTIONS, { endpoint_url: uniqueUrl(), event_type_codes: [] }),
        400,
        'BAD_REQUEST',
      );
    });
  });

  describe('read', () => {
    it('returns the subscription without the secret', async () => {
      const created = await createSubscription(api);
      const response = await api.get(`${SUBSCRIPTIONS}/${created.id}`);
      assert.equal(response.statusCode, 200);
      const { signing_secret: _secret, ...expected } = created;
      assert.deepEqual(response.json(), expected);
      assert.doesNotMatch(response.body, /whsec_/);
    });

    it('answers 404 for an unknown id and for a malformed one', async () => {
      for (const id of ['0193a5c4-7b2e-7c1d-9f3a-5e6b7c8d9e0f', 'not-a-uuid', '123', 'search%00']) {
        expectError(await api.get(`${SUBSCRIPTIONS}/${id}`), 404, 'NOT_FOUND');
      }
    });
  });

  describe('update (state table, D9)', () => {
    const patch = (id: string, body: unknown) => api.patch(`${SUBSCRIPTIONS}/${id}`, body);

    it('follows pending_verification -> active -> paused -> active', async () => {
      const created = await createSubscription(api);
      for (const status of ['active', 'paused', 'active']) {
        const response = await patch(created.id, { status });
        assert.equal(response.statusCode, 200, response.body);
        assert.equal((response.json() as SubscriptionJson).status, status);
        assert.doesNotMatch(response.body, /whsec_/);
      }
    });

    it('treats the same status again as a no-op 200', async () => {
      const created = await createSubscription(api);
      const active = (await patch(created.id, { status: 'active' })).json() as SubscriptionJson;
      const again = await patch(created.id, { status: 'active' });
      assert.equal(again.statusCode, 200);
      assert.deepEqual(again.json(), active);
      await patch(created.id, { status: 'paused' });
      const pausedAgain = await patch(created.id, { status: 'paused' });
      assert.equal(pausedAgain.statusCode, 200);
      assert.equal((pausedAgain.json() as SubscriptionJson).status, 'paused');
    });

    it('answers 400 for a transition the table does not have', async () => {
      const created = await createSubscription(api);
      expectError(await patch(created.id, { status: 'paused' }), 400, 'BAD_REQUEST');
      const disabled = await createSubscription(api);
      await setSubscriptionState(t, disabled.id, 'auto_disabled', 50);
      expectError(await patch(disabled.id, { status: 'paused' }), 400, 'BAD_REQUEST');
    });

    it('answers 422 on status for platform-managed statuses, whatever the current state', async () => {
      const subscription = await createSubscription(api);
      for (const current of ['pending_verification', 'active', 'paused', 'auto_disabled']) {
        await setSubscriptionState(t, subscription.id, current);
        for (const status of ['pending_verification', 'auto_disabled', 'deleted', 'Active', 'bogus', 1]) {
          expectError(await patch(subscription.id, { status }), 422, 'VALIDATION_FAILED', 'status');
        }
      }
      await api.del(`${SUBSCRIPTIONS}/${subscription.id}`);
      expectError(await patch(subscription.id, { status: 'deleted' }), 422, 'VALIDATION_FAILED', 'status');
    });

    it('answers 400 to any PATCH of a deleted subscription', async () => {
      const created = await createSubscription(api);
      await api.del(`${SUBSCRIPTIONS}/${created.id}`);
      for (const body of [
        {},
        { status: 'active' },
        { max_retries: 3 },
        { event_type_codes: ['payout.failed'] },
      ]) {
        expectError(await patch(created.id, body), 400, 'BAD_REQUEST');
      }
    });

    it('ignores an empty event_type_codes and replaces the list otherwise', async () => {
      const created = await createSubscription(api, {
        event_type_codes: ['transfer.completed', 'payout.failed'],
      });
      const ignored = await patch(created.id, { event_type_codes: [] });
      assert.equal(ignored.statusCode, 200);
      assert.deepEqual((ignored.json() as SubscriptionJson).event_type_codes, [
        'transfer.completed',
        'payout.failed',
      ]);
      assert.equal((ignored.json() as SubscriptionJson).updated_at, created.updated_at);
      const replaced = await patch(created.id, { event_type_codes: ['payout.failed'] });
      assert.deepEqual((replaced.json() as SubscriptionJson).event_type_codes, ['payout.failed']);
      expectError(
        await patch(created.id, { event_type_codes: ['payout.failed', 'payout.nope'] }),
        422,
        'VALIDATION_FAILED',
        'event_type_codes[1]',
      );
    });

    it('changes endpoint_url and max_retries, with the create rules', async () => {
      const created = await createSubscription(api);
      const endpoint = uniqueUrl();
      const response = await patch(created.id, { endpoint_url: endpoint, max_retries: 0 });
      assert.equal(response.statusCode, 200);
      const updated = response.json() as SubscriptionJson;
      assert.equal(updated.endpoint_url, endpoint);
      assert.equal(updated.max_retries, 0);
      assert.ok(updated.updated_at >= created.updated_at);
      expectError(await patch(created.id, { max_retries: 16 }), 422, 'VALIDATION_FAILED', 'max_retries');
      expectError(
        await patch(created.id, { endpoint_url: 'http://hooks.example.com/' }),
        422,
        'VALIDATION_FAILED',
        'endpoint_url',
      );
      expectError(
        await patch(created.id, { signing_secret: 'x' }),
        422,
        'VALIDATION_FAILED',
        'signing_secret',
      );
      expectError(
        await patch(created.id, { consecutive_failures: 0 }),
        422,
        'VALIDATION_FAILED',
        'consecutive_failures',
      );
    });

    it('answers 409 when the new endpoint_url is another subscription of the organisation', async () => {
      const first = await createSubscription(api);
      const second = await createSubscription(api);
      expectError(await patch(second.id, { endpoint_url: first.endpoint_url }), 409, 'CONFLICT');
      // Its own URL in another spelling is not a conflict.
      const own = second.endpoint_url.replace('https://hooks.example.com', 'HTTPS://HOOKS.example.com:443');
      const response = await patch(second.id, { endpoint_url: own });
      assert.equal(response.statusCode, 200, response.body);
      assert.equal((response.json() as SubscriptionJson).endpoint_url, own);
    });

    it('answers 404 for an unknown or malformed id', async () => {
      expectError(
        await patch('0193a5c4-7b2e-7c1d-9f3a-5e6b7c8d9e0f', { status: 'active' }),
        404,
        'NOT_FOUND',
      );
      expectError(await patch('nope', { status: 'active' }), 404, 'NOT_FOUND');
    });
  });

  describe('rotate-secret', () => {
    it('answers 200 with the subscription and a new secret that replaces the stored one', async () => {
      const created = await createSubscription(api);
      const response = await api.post(`${SUBSCRIPTIONS}/${created.id}/rotate-secret`);
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['cache-control'], 'no-store');
      const rotated = response.json() as SubscriptionJson;
      assert.match(rotated.signing_secret!, /^whsec_[0-9a-f]{64}$/);
      assert.notEqual(rotated.signing_secret, created.signing_secret);
      assert.equal(rotated.id, created.id);
      assert.equal(rotated.status, created.status);
      const stored = await t.db.pool.query<{ signing_secret_sealed: string }>(
        'SELECT signing_secret_sealed FROM webhook_subscriptions WHERE id = $1',
        [created.id],
      );
      assert.equal(t.deps.secretBox.decrypt(stored.rows[0]!.signing_secret_sealed), rotated.signing_secret);
      assert.doesNotMatch((await api.get(`${SUBSCRIPTIONS}/${created.id}`)).body, /whsec_/);
    });

    it('works in every state but deleted (400), and answers 404 for an unknown id', async () => {
      const created = await createSubscription(api);
      for (const status of ['active', 'paused', 'auto_disabled']) {
        await setSubscriptionState(t, created.id, status);
        assert.equal((await api.post(`${SUBSCRIPTIONS}/${created.id}/rotate-secret`)).statusCode, 200);
      }
      await api.del(`${SUBSCRIPTIONS}/${created.id}`);
      expectError(await api.post(`${SUBSCRIPTIONS}/${created.id}/rotate-secret`), 400, 'BAD_REQUEST');
      expectError(
        await api.post(`${SUBSCRIPTIONS}/0193a5c4-7b2e-7c1d-9f3a-5e6b7c8d9e0f/rotate-secret`),
        404,
        'NOT_FOUND',
      );
      expectError(await api.post(`${SUBSCRIPTIONS}/x/rotate-secret`), 404, 'NOT_FOUND');
    });
  });

  describe('delete', () => {
    it('answers 200 with status deleted, repeatably; the record stays readable by id', async () => {
      const created = await createSubscription(api);
      const first = await api.del(`${SUBSCRIPTIONS}/${created.id}`);
      assert.equal(first.statusCode, 200);
      const deleted = first.json() as SubscriptionJson;
      assert.equal(deleted.status, 'deleted');
      assert.doesNotMatch(first.body, /whsec_/);
      const second = await api.del(`${SUBSCRIPTIONS}/${created.id}`);
      assert.equal(second.statusCode, 200);
      assert.deepEqual(second.json(), deleted);
      const read = await api.get(`${SUBSCRIPTIONS}/${created.id}`);
      assert.equal(read.statusCode, 200);
      assert.deepEqual(read.json(), deleted);
    });

    it('deletes from every state', async () => {
      for (const status of ['pending_verification', 'active', 'paused', 'auto_disabled']) {
        const created = await createSubscription(api);
        await setSubscriptionState(t, created.id, status);
        const response = await api.del(`${SUBSCRIPTIONS}/${created.id}`);
        assert.equal((response.json() as SubscriptionJson).status, 'deleted');
      }
    });

    it('answers 404 for an unknown or malformed id', async () => {
      expectError(await api.del(`${SUBSCRIPTIONS}/0193a5c4-7b2e-7c1d-9f3a-5e6b7c8d9e0f`), 404, 'NOT_FOUND');
      expectError(await api.del(`${SUBSCRIPTIONS}/zzz`), 404, 'NOT_FOUND');
    });
  });

  describe('search (D4)', () => {
    let own: Client;
    const made: SubscriptionJson[] = [];
    before(async () => {
      own = await freshClient();
      made.push(
        await createSubscription(own, {
          endpoint_url: 'https://alpha.example.com/Orders',
          event_type_codes: ['transfer.completed'],
        }),
        await createSubscription(own, {
          endpoint_url: 'https://beta.example.com/payouts',
          event_type_codes: ['payout.failed', 'payout.completed'],
        }),
        await createSubscription(own, {
          endpoint_url: 'https://gamma.example.com/orders',
          event_type_codes: ['deposit.received'],
        }),
        await createSubscription(own, { endpoint_url: 'https://deleted.example.com/orders' }),
      );
      await own.patch(`${SUBSCRIPTIONS}/${made[1]!.id}`, { status: 'active' });
      await own.del(`${SUBSCRIPTIONS}/${made[3]!.id}`);
    });
    const search = (body?: unknown) => own.post(`${SUBSCRIPTIONS}/search`, body);
    const ids = (response: { json(): unknown }) =>
      (response.json() as { items: SubscriptionJson[] }).items.map((item) => item.id);

    it('pages the non-deleted subscriptions, newest first by default, never with the secret', async () => {
      const response = await search({});
      assert.equal(response.statusCode, 200);
      const page = response.json() as {
        items: SubscriptionJson[];
        total: number;
        page: number;
        page_size: number;
      };
      assert.deepEqual(Object.keys(page), ['items', 'total', 'page', 'page_size']);
      assert.equal(page.total, 3);
      assert.equal(page.page, 1);
      assert.equal(page.page_size, 20);
      assert.deepEqual(ids(response), [made[2]!.id, made[1]!.id, made[0]!.id]);
      assert.doesNotMatch(response.body, /whsec_|signing_secret/);
      // No body at all is the same as an empty one.
      assert.deepEqual(ids(await own.post(`${SUBSCRIPTIONS}/search`)), ids(response));
    });

    it('never returns deleted subscriptions, whatever the filter', async () => {
      const response = await search({ filters: { status: ['deleted'] } });
      assert.equal(response.statusCode, 200);
      assert.deepEqual(response.json(), { items: [], total: 0, page: 1, page_size: 20 });
      assert.deepEqual(ids(await search({ search: 'deleted.example' })), []);
    });

    it('filters by status, event_type_codes (any) and endpoint_url (normalised)', async () => {
      assert.deepEqual(ids(await search({ filters: { status: ['active'] } })), [made[1]!.id]);
      assert.deepEqual(ids(await search({ filters: { status: ['pending_verification'] } })), [
        made[2]!.id,
        made[0]!.id,
      ]);
      assert.deepEqual(
        ids(await search({ filters: { event_type_codes: ['payout.completed', 'deposit.received'] } })),
        [made[2]!.id, made[1]!.id],
      );
      assert.deepEqual(
        ids(await search({ filters: { endpoint_url: ['HTTPS://ALPHA.example.com:443/Orders'] } })),
        [made[0]!.id],
      );
      assert.deepEqual(
        ids(await search({ filters: { status: ['active'], event_type_codes: ['transfer.completed'] } })),
        [],
      );
    });

    it('matches search text as a case-insensitive substring of endpoint_url', async () => {
      assert.deepEqual(ids(await search({ search: 'ORDERS' })), [made[2]!.id, made[0]!.id]);
      assert.deepEqual(ids(await search({ search: '%' })), []);
      assert.deepEqual(ids(await search({ search: '\u0000' })), []);
    });

    it('sorts by id, created_at, updated_at in either direction, and pages with the true total', async () => {
      assert.deepEqual(ids(await search({ sort_by: 'id', sort_direction: 'asc' })), [
        made[0]!.id,
        made[1]!.id,
        made[2]!.id,
      ]);
      assert.deepEqual(ids(await search({ sort_by: 'created_at', sort_direction: 'asc' })), [
        made[0]!.id,
        made[1]!.id,
        made[2]!.id,
      ]);
      // made[1] was updated last (activated).
      assert.equal(ids(await search({ sort_by: 'updated_at' }))[0], made[1]!.id);
      const second = await search({ page: 2, page_size: 2, sort_direction: 'asc' });
      assert.deepEqual(second.json(), {
        items: [(await own.get(`${SUBSCRIPTIONS}/${made[2]!.id}`)).json()],
        total: 3,
        page: 2,
        page_size: 2,
      });
      assert.deepEqual(await (await search({ page: 9 })).json(), {
        items: [],
        total: 3,
        page: 9,
        page_size: 20,
      });
    });

    it('rejects malformed search bodies with 422 naming the field', async () => {
      const cases: [unknown, string][] = [
        [{ filters: { status: 'active' } }, 'filters.status'],
        [{ filters: { status: [] } }, 'filters.status'],
        [{ filters: { status: ['bogus'] } }, 'filters.status[0]'],
        [{ filters: { colour: ['red'] } }, 'filters.colour'],
        [{ filters: { event_type_codes: 'transfer.completed' } }, 'filters.event_type_codes'],
        [{ filters: { endpoint_url: ['https://x.example.com/\u0000'] } }, 'filters.endpoint_url[0]'],
        [{ sort_by: 'endpoint_url' }, 'sort_by'],
        [{ sort_direction: 'up' }, 'sort_direction'],
        [{ page: 0 }, 'page'],
        [{ page_size: 101 }, 'page_size'],
        [{ page_size: '20' }, 'page_size'],
        [{ query: 'x' }, 'query'],
      ];
      for (const [body, field] of cases) {
        expectError(await search(body), 422, 'VALIDATION_FAILED', field);
      }
    });
  });
});
