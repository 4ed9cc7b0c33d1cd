// Sandbox test events (D11): published through the outbox as the platform would, 201 / 200 / 400 / 422.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { errorBody, startTestApp, type TestApp } from '../helpers/app.ts';
import {
  activeSubscription,
  type Client,
  client,
  createSubscription,
  EVENTS,
  type EventJson,
  SANDBOX_EVENTS,
  SUBSCRIPTIONS,
} from './fixtures.ts';

function expectError(
  response: { statusCode: number; body: string },
  status: number,
  code: string,
  field?: string,
) {
  assert.equal(response.statusCode, status, response.body);
  const body = errorBody(response.body);
  assert.equal(body.code, code);
  assert.equal(body.field, field, `field of ${response.body}`);
  return body;
}

describe('sandbox test events (D11)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());
  const fresh = async (): Promise<Client> => client(t, await t.tenant());
  const deliveryCount = async (eventId: number) =>
    (
      await t.db.pool.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_id = $1',
        [eventId],
      )
    ).rows[0]!.n;

  it('publishes: 201 with the event as GET returns it, one delivery per active matching subscription', async () => {
    const api = await fresh();
    const a = await activeSubscription(api, { event_type_codes: ['payout.completed'] });
    const b = await activeSubscription(api, { event_type_codes: ['payout.completed', 'payout.failed'] });
    await activeSubscription(api, { event_type_codes: ['payout.failed'] });
    await createSubscription(api, { event_type_codes: ['payout.completed'] }); // pending_verification
    const paused = await activeSubscription(api, { event_type_codes: ['payout.completed'] });
    await api.patch(`${SUBSCRIPTIONS}/${paused.id}`, { status: 'paused' });

    const response = await api.post(SANDBOX_EVENTS, {
      event_type_code: 'payout.completed',
      data: { object: { id: 'po_1', status: 'completed' }, previous_status: 'processing' },
      source_object_type: 'payout',
      source_object_id: 'po_1',
    });
    assert.equal(response.statusCode, 201, response.body);
    const event = response.json() as EventJson;
    assert.deepEqual(event, (await api.get(`${EVENTS}/${event.id}`)).json());
    assert.equal(event.status, 'failed');
    assert.equal(event.idempotency_key, null);
    assert.deepEqual(event.payload, {
      id: event.public_id,
      type: 'payout.completed',
      created_at: event.created_at,
      data: { object: { id: 'po_1', status: 'completed' }, previous_status: 'processing' },
    });
    const queued = await t.db.pool.query<{ subscription_id: string }>(
      'SELECT subscription_id FROM webhook_deliveries WHERE event_id = $1',
      [event.id],
    );
    assert.deepEqual(queued.rows.map((row) => row.subscription_id).sort(), [a.id, b.id].sort());
  });

  it('defaults data to {} and the source fields to null', async () => {
    const api = await fresh();
    await activeSubscription(api);
    const event = (
      await api.post(SANDBOX_EVENTS, { event_type_code: 'transfer.completed' })
    ).json() as EventJson;
    assert.deepEqual(event.payload!.data, {});
    assert.equal(event.source_object_type, null);
    assert.equal(event.source_object_id, null);
  });

  it('answers 400 when no active subscription of the organisation matches, and records nothing', async () => {
    const api = await fresh();
    await createSubscription(api, { event_type_codes: ['transfer.completed'] });
    await activeSubscription(api, { event_type_codes: ['payout.failed'] });
    const body = expectError(
      await api.post(SANDBOX_EVENTS, { event_type_code: 'transfer.completed' }),
      400,
      'BAD_REQUEST',
    );
    assert.match(body.error, /No active subscription/);
    const search = await api.post(`${EVENTS}/search`, {});
    assert.equal((search.json() as { total: number }).total, 0);
  });

  it('answers a repeated idempotency_key with 200 and the first event, queueing nothing', async () => {
    const api = await fresh();
    await activeSubscription(api);
    const body = { event_type_code: 'transfer.completed', idempotency_key: 'tr_9:completed', data: { n: 1 } };
    const first = await api.post(SANDBOX_EVENTS, body);
    assert.equal(first.statusCode, 201);
    const again = await api.post(SANDBOX_EVENTS, { ...body, data: { n: 2 } });
    assert.equal(again.statusCode, 200);
    assert.deepEqual(again.json(), first.json());
    assert.equal(await deliveryCount((first.json() as EventJson).id), 1);
    // The key is per organisation.
    const other = await fresh();
    await activeSubscription(other);
    assert.equal((await other.post(SANDBOX_EVENTS, body)).statusCode, 201);
  });

  it('gives concurrent publishes of one idempotency_key one event', async () => {
    const api = await fresh();
    await activeSubscription(api);
    const responses = await Promise.all(
      Array.from({ length: 8 }, () =>
        api.post(SANDBOX_EVENTS, { event_type_code: 'transfer.completed', idempotency_key: 'race' }),
      ),
    );
    const statuses = responses.map((response) => response.statusCode).sort();
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 200, 201]);
    const ids = new Set(responses.map((response) => (response.json() as EventJson).id));
    assert.equal(ids.size, 1);
    assert.equal(await deliveryCount([...ids][0]!), 1);
  });

  it('rejects unpublished codes (webhook.ping included), bad fields and unknown keys with 422', async () => {
    const api = await fresh();
    await activeSubscription(api);
    const cases: [unknown, string][] = [
      [{ event_type_code: 'transfer.unknown' }, 'event_type_code'],
      [{ event_type_code: 'webhook.ping' }, 'event_type_code'],
      [{}, 'event_type_code'],
      [{ event_type_code: ['transfer.completed'] }, 'event_type_code'],
      [{ event_type_code: 'transfer.completed', data: [] }, 'data'],
      [{ event_type_code: 'transfer.completed', data: 'x' }, 'data'],
      [{ event_type_code: 'transfer.completed', idempotency_key: '' }, 'idempotency_key'],
      [{ event_type_code: 'transfer.completed', idempotency_key: 'a\u0000' }, 'idempotency_key'],
      [{ event_type_code: 'transfer.completed', source_object_id: 5 }, 'source_object_id'],
      [{ event_type_code: 'transfer.completed', payload: {} }, 'payload'],
    ];
    for (const [body, field] of cases) {
      expectError(await api.post(SANDBOX_EVENTS, body), 422, 'VALIDATION_FAILED', field);
    }
  });

  it('requires webhooks:write', async () => {
    const reader = client(t, await t.tenant(['webhooks:read']));
    expectError(
      await reader.post(SANDBOX_EVENTS, { event_type_code: 'transfer.completed' }),
      403,
      'AUTHORIZATION_FAILED',
    );
  });

  it('does not exist in production (404)', async () => {
    const production = await startTestApp({
      env: { APP_ENV: 'production', AUTH_REALM: 'sandbox' },
      db: t.db,
    });
    try {
      const response = await production.app.inject({
        method: 'POST',
        url: SANDBOX_EVENTS,
        headers: { 'content-type': 'application/json' },
        payload: '{"event_type_code":"transfer.completed"}',
      });
      expectError(response, 404, 'NOT_FOUND');
    } finally {
      await production.close();
    }
  });
});
