// Webhook events over HTTP: search (D4 filters, free text, sort, paging), read with the exact payload (sealed
// at rest, D13), replay of dead_letter events (D10), and every error row of the contract's event table.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SecretBox } from '../../src/platform/secrets.ts';
import { errorBody, startTestApp, type TestApp } from '../helpers/app.ts';
import { openStoredPayload } from '../helpers/event-payloads.ts';
import {
  activeSubscription,
  type Client,
  client,
  EVENTS,
  type EventJson,
  publishTestEvent,
  SUBSCRIPTIONS,
  type SubscriptionJson,
  setEventStatus,
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

describe('webhook events', () => {
  let t: TestApp;
  let api: Client;
  let subscription: SubscriptionJson;
  const events: EventJson[] = [];

  before(async () => {
    t = await startTestApp();
    api = client(t, await t.tenant());
    subscription = await activeSubscription(api, {
      event_type_codes: ['transfer.completed', 'payout.failed', 'deposit.received'],
    });
    events.push(
      await publishTestEvent(api, {
        event_type_code: 'transfer.completed',
        data: {
          object: { id: 'tr_AAA', status: 'completed', amount: '10.50' },
          previous_status: 'processing',
        },
        source_object_type: 'transfer',
        source_object_id: 'tr_AAA',
        idempotency_key: 'tr_AAA:completed',
      }),
      await publishTestEvent(api, {
        event_type_code: 'payout.failed',
        source_object_type: 'payout',
        source_object_id: 'po_BBB',
        idempotency_key: 'po_BBB:failed',
      }),
      await publishTestEvent(api, { event_type_code: 'deposit.received' }),
    );
    await setEventStatus(t, events[1]!.id, 'dead_letter');
  });
  after(() => t.close());

  const search = (body?: unknown) => api.post(`${EVENTS}/search`, body);
  const ids = (response: { json(): unknown }) =>
    (response.json() as { items: EventJson[] }).items.map((item) => item.id);

  describe('read', () => {
    it('returns one event in full with the exact stored payload', async () => {
      const response = await api.get(`${EVENTS}/${events[0]!.id}`);
      assert.equal(response.statusCode, 200);
      const event = response.json() as EventJson;
      assert.deepEqual(Object.keys(event).sort(), [
        'created_at',
        'event_type_code',
        'id',
        'idempotency_key',
        'payload',
        'public_id',
        'source_object_id',
        'source_object_type',
        'status',
        'updated_at',
      ]);
      assert.equal(event.status, 'failed');
      assert.match(event.public_id, /^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
      assert.equal(event.idempotency_key, 'tr_AAA:completed');
      assert.equal(event.source_object_type, 'transfer');
      assert.equal(event.source_object_id, 'tr_AAA');
      const stored = await t.db.pool.query<{ payload: string }>(
        'SELECT payload FROM webhook_events WHERE id = $1',
        [event.id],
      );
      assert.equal(JSON.stringify(event.payload), openStoredPayload(t.deps, stored.rows[0]!.payload));
      assert.deepEqual(event.payload, {
        id: event.public_id,
        type: 'transfer.completed',
        created_at: event.created_at,
        data: {
          object: { id: 'tr_AAA', status: 'completed', amount: '10.50' },
          previous_status: 'processing',
        },
      });
    });

    it('answers 404 for unknown, non-integer and out-of-range ids', async () => {
      for (const id of [
        '999999',
        '0',
        '-1',
        '1.5',
        'abc',
        '1e3',
        '9223372036854775808',
        '99999999999999999999',
        '%20',
      ]) {
        expectError(await api.get(`${EVENTS}/${id}`), 404, 'NOT_FOUND');
      }
    });
  });

  describe('search (D4)', () => {
    it('pages events newest first without their payload', async () => {
      const response = await search({});
      assert.equal(response.statusCode, 200);
      const page = response.json() as { items: EventJson[]; total: number };
      assert.equal(page.total, 3);
      assert.deepEqual(ids(response), [events[2]!.id, events[1]!.id, events[0]!.id]);
      for (const item of page.items) assert.equal(item.payload, undefined);
      const { payload: _payload, ...summary } = (
        await api.get(`${EVENTS}/${events[0]!.id}`)
      ).json() as EventJson;
      assert.deepEqual(page.items[2], summary);
      assert.deepEqual(ids(await api.post(`${EVENTS}/search`)), ids(response));
    });

    it('filters by id, public_id, status, event_type_code, source object and idempotency_key', async () => {
      const [first, second, third] = events as [EventJson, EventJson, EventJson];
      const cases: [Record<string, unknown[]>, number[]][] = [
        [{ id: [first.id, third.id] }, [third.id, first.id]],
        [{ public_id: [second.public_id] }, [second.id]],
        [{ status: ['dead_letter'] }, [second.id]],
        [{ status: ['failed', 'delivered'] }, [third.id, first.id]],
        [{ event_type_code: ['payout.failed', 'deposit.received'] }, [third.id, second.id]],
        [{ source_object_type: ['transfer'] }, [first.id]],
        [{ source_object_id: ['po_BBB'] }, [second.id]],
        [{ idempotency_key: ['tr_AAA:completed'] }, [first.id]],
        [{ status: ['dead_letter'], event_type_code: ['transfer.completed'] }, []],
      ];
      for (const [filters, expected] of cases) {
        assert.deepEqual(ids(await search({ filters })), expected, JSON.stringify(filters));
      }
    });

    it('matches free text: id exactly when numeric, other fields by case-insensitive substring', async () => {
      const [first, second, third] = events as [EventJson, EventJson, EventJson];
      // A numeric text matches that id exactly, and the text fields by substring (ULIDs hold digits).
      const numeric = (await search({ search: String(second.id) })).json() as { items: EventJson[] };
      assert.ok(numeric.items.some((item) => item.id === second.id));
      for (const item of numeric.items) {
        assert.ok(
          item.id === second.id ||
            [item.public_id, item.idempotency_key ?? '', item.event_type_code].some((text) =>
              text.toLowerCase().includes(String(second.id)),
            ),
        );
      }
      const otherId = (await search({ search: `${second.id}0000` })).json() as { items: EventJson[] };
      assert.ok(otherId.items.every((item) => item.id !== second.id));
      assert.deepEqual(ids(await search({ search: second.public_id.toLowerCase() })), [second.id]);
      assert.deepEqual(ids(await search({ search: second.public_id.slice(4, 14) })), [second.id]);
      assert.deepEqual(ids(await search({ search: 'TR_aaa:COMP' })), [first.id]);
      assert.deepEqual(ids(await search({ search: 'DEPOSIT.rec' })), [third.id]);
      assert.deepEqual(ids(await search({ search: 'payout' })), [second.id]);
      assert.deepEqual(ids(await search({ search: '%' })), []);
      assert.deepEqual(ids(await search({ search: '99999999999999999999' })), []);
      assert.deepEqual(ids(await search({ search: '\u0000' })), []);
    });

    it('sorts by id, created_at and updated_at in both directions', async () => {
      const ascending = events.map((event) => event.id);
      for (const sortBy of ['id', 'created_at', 'updated_at']) {
        assert.deepEqual(ids(await search({ sort_by: sortBy, sort_direction: 'asc' })).slice(0, 1), [
          sortBy === 'updated_at' ? events[0]!.id : ascending[0],
        ]);
      }
      assert.deepEqual(ids(await search({ sort_by: 'id', sort_direction: 'asc' })), ascending);
      assert.deepEqual(
        ids(await search({ sort_by: 'created_at', sort_direction: 'desc' })),
        [...ascending].reverse(),
      );
      // The dead_letter update made events[1] the most recently updated.
      assert.equal(ids(await search({ sort_by: 'updated_at' }))[0], events[1]!.id);
    });

    it('pages past the end with 200, no items and the true total', async () => {
      const page2 = await search({ page: 2, page_size: 2, sort_direction: 'asc' });
      assert.deepEqual(ids(page2), [events[2]!.id]);
      assert.equal((page2.json() as { total: number }).total, 3);
      const past = await search({ page: 50, page_size: 100 });
      assert.equal(past.statusCode, 200);
      assert.deepEqual(past.json(), { items: [], total: 3, page: 50, page_size: 100 });
    });

    it('rejects single values, empty lists, unknown keys and other sort keys with 422 naming the field', async () => {
      const cases: [unknown, string][] = [
        [{ filters: { status: 'dead_letter' } }, 'filters.status'],
        [{ filters: { id: 1 } }, 'filters.id'],
        [{ filters: { id: ['1'] } }, 'filters.id[0]'],
        [{ filters: { id: [0] } }, 'filters.id[0]'],
        [{ filters: { event_type_code: [] } }, 'filters.event_type_code'],
        [{ filters: { status: ['delivering'] } }, 'filters.status[0]'],
        [{ filters: { webhook_event_ids: [1] } }, 'filters.webhook_event_ids'],
        [{ filters: { idempotency_key: ['a\u0000b'] } }, 'filters.idempotency_key[0]'],
        [{ filters: [] }, 'filters'],
        [{ sort_by: 'status' }, 'sort_by'],
        [{ sort_by: 'latency_ms' }, 'sort_by'],
        [{ sort_direction: 'DESC' }, 'sort_direction'],
        [{ page_size: 0 }, 'page_size'],
        [{ search: 5 }, 'search'],
        [{ unknown: true }, 'unknown'],
      ];
      for (const [body, field] of cases) {
        const error = expectError(await search(body), 422, 'VALIDATION_FAILED', field);
        if (field === 'sort_by') assert.match(error.error, /one of: id, created_at, updated_at/);
      }
    });
  });

  describe('payloads at rest (D13)', () => {
    /** A dead_letter event of its own tenant, with `stored` written in place of its sealed payload. */
    async function storedAs(stored: (envelope: string) => string) {
      const own = client(t, await t.tenant());
      await activeSubscription(own, { event_type_codes: ['payout.failed'] });
      const event = await publishTestEvent(own, { event_type_code: 'payout.failed' });
      const row = await t.db.pool.query<{ payload: string }>(
        'SELECT payload FROM webhook_events WHERE id = $1',
        [event.id],
      );
      const envelope = openStoredPayload(t.deps, row.rows[0]!.payload);
      await t.db.pool.query('UPDATE webhook_events SET payload = $2 WHERE id = $1', [
        event.id,
        stored(envelope),
      ]);
      await setEventStatus(t, event.id, 'dead_letter');
      const deliveries = async () =>
        (await t.db.pool.query('SELECT 1 FROM webhook_deliveries WHERE event_id = $1', [event.id])).rowCount;
      return { own, event, envelope, deliveries };
    }

    it('reads and replays an event whose payload is stored in clear', async () => {
      const { own, event, envelope, deliveries } = await storedAs((envelope) => envelope);
      const read = await own.get(`${EVENTS}/${event.id}`);
      assert.equal(read.statusCode, 200, read.body);
      assert.equal(JSON.stringify((read.json() as EventJson).payload), envelope);
      const replayed = await own.post(`${EVENTS}/${event.id}/replay`);
      assert.equal(replayed.statusCode, 202, replayed.body);
      assert.equal(JSON.stringify((replayed.json() as EventJson).payload), envelope);
      assert.equal(await deliveries(), 2);
    });

    it('answers 500 for an event whose payload no configured key opens, lists it in searches, and replays nothing', async () => {
      const otherKey = new SecretBox('b'.repeat(64));
      const { own, event, envelope, deliveries } = await storedAs((envelope) => otherKey.encrypt(envelope));
      const read = await own.get(`${EVENTS}/${event.id}`);
      const body = expectError(read, 500, 'INTERNAL_ERROR');
      assert.ok(!read.body.includes(event.public_id), 'the answer names nothing of the payload');
      const logged = t.logs.lines
        .map((line) => JSON.parse(line) as { error_id?: string; err?: { message?: string } })
        .find((line) => line.error_id === body.error_id);
      assert.equal(
        logged?.err?.message,
        `the payload of event ${event.id} is unreadable (check SECRETS_ENCRYPTION_KEY)`,
      );
      assert.ok(
        !t.logs.lines.some((line) => line.includes(envelope)),
        'the logs hold nothing of the payload',
      );

      const found = await own.post(`${EVENTS}/search`, { filters: { id: [event.id] } });
      assert.equal(found.statusCode, 200, found.body);
      assert.deepEqual(ids(found), [event.id]);

      expectError(await own.post(`${EVENTS}/${event.id}/replay`), 500, 'INTERNAL_ERROR');
      assert.equal(await deliveries(), 1, 'nothing queued');
      const after = await t.db.pool.query<{ status: string }>(
        'SELECT status FROM webhook_events WHERE id = $1',
        [event.id],
      );
      assert.equal(after.rows[0]!.status, 'dead_letter');
    });
  });

  describe('replay (D10)', () => {
    const deliveries = async (eventId: number) =>
      (
        await t.db.pool.query<{ round: number; subscription_id: string }>(
          'SELECT round, subscription_id FROM webhook_deliveries WHERE event_id = $1 ORDER BY id',
          [eventId],
        )
      ).rows;

    it('queues a new round for a dead_letter event: 202 with the event, now failed', async () => {
      const event = await publishTestEvent(api, { event_type_code: 'payout.failed' });
      await setEventStatus(t, event.id, 'dead_letter');
      const response = await api.post(`${EVENTS}/${event.id}/replay`);
      assert.equal(response.statusCode, 202);
      const replayed = response.json() as EventJson;
      assert.equal(replayed.id, event.id);
      assert.equal(replayed.status, 'failed');
      assert.deepEqual(replayed.payload, event.payload);
      assert.deepEqual(await deliveries(event.id), [
        { round: 1, subscription_id: subscription.id },
        { round: 2, subscription_id: subscription.id },
      ]);
    });

    it('is not idempotent: each replay of a dead_letter event queues another round', async () => {
      const event = await publishTestEvent(api, { event_type_code: 'payout.failed' });
      for (let round = 2; round <= 3; round++) {
        await setEventStatus(t, event.id, 'dead_letter');
        assert.equal((await api.post(`${EVENTS}/${event.id}/replay`)).statusCode, 202);
        assert.equal((await deliveries(event.id)).length, round);
      }
    });

    it('queues to every active matching subscription, including one that did not get the first round', async () => {
      const own = client(t, await t.tenant());
      const first = await activeSubscription(own, { event_type_codes: ['screening.completed'] });
      const event = await publishTestEvent(own, { event_type_code: 'screening.completed' });
      const later = await activeSubscription(own, { event_type_codes: ['screening.completed'] });
      const paused = await activeSubscription(own, { event_type_codes: ['screening.completed'] });
      await own.patch(`${SUBSCRIPTIONS}/${paused.id}`, { status: 'paused' });
      await setEventStatus(t, event.id, 'dead_letter');
      assert.equal((await own.post(`${EVENTS}/${event.id}/replay`)).statusCode, 202);
      const round2 = (await deliveries(event.id)).filter((delivery) => delivery.round === 2);
      assert.deepEqual(
        round2.map((delivery) => delivery.subscription_id).sort(),
        [first.id, later.id].sort(),
      );
    });

    it('with no active matching subscription queues nothing and the event stays dead_letter (202)', async () => {
      const own = client(t, await t.tenant());
      const only = await activeSubscription(own, { event_type_codes: ['screening.resolved'] });
      const event = await publishTestEvent(own, { event_type_code: 'screening.resolved' });
      await own.patch(`${SUBSCRIPTIONS}/${only.id}`, { status: 'paused' });
      await setEventStatus(t, event.id, 'dead_letter');
      const response = await own.post(`${EVENTS}/${event.id}/replay`);
      assert.equal(response.statusCode, 202);
      assert.equal((response.json() as EventJson).status, 'dead_letter');
      assert.equal((await deliveries(event.id)).length, 1);
    });

    it('answers 400 for an event in any other state', async () => {
      const event = await publishTestEvent(api, { event_type_code: 'payout.failed' });
      for (const status of ['failed', 'delivered', 'partially_delivered']) {
        await setEventStatus(t, event.id, status);
        expectError(await api.post(`${EVENTS}/${event.id}/replay`), 400, 'BAD_REQUEST');
      }
      assert.equal((await deliveries(event.id)).length, 1);
    });

    it('lets only one of two concurrent replays queue when the first leaves dead_letter', async () => {
      const event = await publishTestEvent(api, { event_type_code: 'payout.failed' });
      await setEventStatus(t, event.id, 'dead_letter');
      const responses = await Promise.all(
        Array.from({ length: 5 }, () => api.post(`${EVENTS}/${event.id}/replay`)),
      );
      assert.deepEqual(responses.map((response) => response.statusCode).sort(), [202, 400, 400, 400, 400]);
      assert.equal((await deliveries(event.id)).length, 2);
    });

    it('answers 404 for unknown and non-integer ids', async () => {
      for (const id of ['999999', 'abc', '0', '-3', '12345678901234567890']) {
        expectError(await api.post(`${EVENTS}/${id}/replay`), 404, 'NOT_FOUND');
      }
    });
  });
});
