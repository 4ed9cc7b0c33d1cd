// Delivery attempts over HTTP: read one in full, search (D4 filters and sort keys), and every error row
// of the contract's attempt table. Attempt rows are written in SQL, as the delivery engine writes them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { errorBody, startTestApp, type TestApp } from '../helpers/app.ts';
import {
  ATTEMPTS,
  activeSubscription,
  type Client,
  client,
  type EventJson,
  insertAttempt,
  publishTestEvent,
  type SubscriptionJson,
} from './fixtures.ts';

interface AttemptJson {
  id: number;
  webhook_event_id: number;
  webhook_subscription_id: string;
  delivery_id: string | null;
  attempt_number: number;
  status: string;
  http_status_code?: number;
  latency_ms: number;
  next_retry_at: string | null;
  failure_reason: string | null;
  request_headers?: Record<string, string>;
  response_body_snippet?: string;
  created_at: string;
  updated_at: string;
}

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
}

describe('webhook delivery attempts', () => {
  let t: TestApp;
  let api: Client;
  let subA: SubscriptionJson;
  let subB: SubscriptionJson;
  let event1: EventJson;
  let event2: EventJson;
  const attempt: Record<string, number> = {};

  before(async () => {
    t = await startTestApp();
    api = client(t, await t.tenant());
    subA = await activeSubscription(api);
    subB = await activeSubscription(api);
    event1 = await publishTestEvent(api);
    event2 = await publishTestEvent(api);
    attempt.failed = await insertAttempt(t, {
      eventId: event1.id,
      subscriptionId: subA.id,
      attemptNumber: 1,
      status: 'failed',
      httpStatusCode: 500,
      latencyMs: 250,
      responseBodySnippet: 'boom',
      failureReason: 'HTTP 500',
    });
    attempt.success = await insertAttempt(t, {
      eventId: event1.id,
      subscriptionId: subA.id,
      attemptNumber: 2,
      status: 'success',
      latencyMs: 40,
    });
    attempt.timeout = await insertAttempt(t, {
      eventId: event1.id,
      subscriptionId: subB.id,
      attemptNumber: 1,
      status: 'timeout',
      httpStatusCode: null,
      latencyMs: 30_000,
      failureReason: 'timeout after 30 s',
    });
    attempt.pending = await insertAttempt(t, {
      eventId: event2.id,
      subscriptionId: subB.id,
      attemptNumber: 1,
      status: 'pending_retry',
      httpStatusCode: 503,
      latencyMs: 120,
      nextRetryAt: new Date('2030-01-01T00:00:05.000Z'),
    });
  });
  after(() => t.close());

  const search = (body?: unknown) => api.post(`${ATTEMPTS}/search`, body);
  const ids = (response: { json(): unknown }) =>
    (response.json() as { items: AttemptJson[] }).items.map((item) => item.id);

  describe('read', () => {
    it('returns one attempt in full: headers sent, body returned, delivery id', async () => {
      const response = await api.get(`${ATTEMPTS}/${attempt.failed}`);
      assert.equal(response.statusCode, 200);
      const body = response.json() as AttemptJson;
      assert.equal(body.id, attempt.failed);
      assert.equal(body.webhook_event_id, event1.id);
      assert.equal(body.webhook_subscription_id, subA.id);
      assert.equal(body.attempt_number, 1);
      assert.equal(body.status, 'failed');
      assert.equal(body.http_status_code, 500);
      assert.equal(body.latency_ms, 250);
      assert.equal(body.next_retry_at, null);
      assert.equal(body.failure_reason, 'HTTP 500');
      assert.equal(body.response_body_snippet, 'boom');
      assert.equal(body.delivery_id, 'dlv_01JD3V6N0A1B2C3D4E5F6G7H01');
      assert.equal(body.request_headers!['X-Webhook-Delivery-Id'], body.delivery_id);
      assert.equal(body.request_headers!['webhook-signature'], 'v1,c2lnbmF0dXJl');
      assert.match(body.created_at, /Z$/);
      assert.match(body.updated_at, /Z$/);
    });

    it('leaves http_status_code out for a timeout and reports the read timeout as latency', async () => {
      const body = (await api.get(`${ATTEMPTS}/${attempt.timeout}`)).json() as AttemptJson;
      assert.equal(body.status, 'timeout');
      assert.equal('http_status_code' in body, false);
      assert.equal(body.latency_ms, 30_000);
      assert.equal(body.response_body_snippet, '');
    });

    it('sets next_retry_at only while pending_retry', async () => {
      const pending = (await api.get(`${ATTEMPTS}/${attempt.pending}`)).json() as AttemptJson;
      assert.equal(pending.next_retry_at, '2030-01-01T00:00:05.000Z');
      const success = (await api.get(`${ATTEMPTS}/${attempt.success}`)).json() as AttemptJson;
      assert.equal(success.next_retry_at, null);
      assert.equal(success.failure_reason, null);
      assert.equal(success.http_status_code, 200);
    });

    it('answers 404 for unknown, non-integer and out-of-range ids', async () => {
      for (const id of ['999999', '0', '-1', 'abc', '2.0', '9223372036854775808']) {
        expectError(await api.get(`${ATTEMPTS}/${id}`), 404, 'NOT_FOUND');
      }
    });
  });

  describe('search (D4)', () => {
    it('pages attempts newest first, without headers and body', async () => {
      const response = await search({});
      assert.equal(response.statusCode, 200);
      const page = response.json() as { items: AttemptJson[]; total: number };
      assert.equal(page.total, 4);
      assert.deepEqual(ids(response), [attempt.pending, attempt.timeout, attempt.success, attempt.failed]);
      for (const item of page.items) {
        assert.equal(item.request_headers, undefined);
        assert.equal(item.response_body_snippet, undefined);
      }
      const {
        request_headers: _h,
        response_body_snippet: _b,
        ...summary
      } = (await api.get(`${ATTEMPTS}/${attempt.failed}`)).json() as AttemptJson;
      assert.deepEqual(page.items[3], summary);
      assert.deepEqual(ids(await api.post(`${ATTEMPTS}/search`)), ids(response));
    });

    it('filters by webhook_event_ids, webhook_subscription_ids and status', async () => {
      const cases: [Record<string, unknown[]>, number[]][] = [
        [{ webhook_event_ids: [event1.id] }, [attempt.timeout!, attempt.success!, attempt.failed!]],
        [{ webhook_event_ids: [event2.id, 999999] }, [attempt.pending!]],
        [{ webhook_subscription_ids: [subB.id] }, [attempt.pending!, attempt.timeout!]],
        [{ webhook_subscription_ids: [subB.id.toUpperCase()] }, [attempt.pending!, attempt.timeout!]],
        [{ status: ['success', 'timeout'] }, [attempt.timeout!, attempt.success!]],
        [
          { webhook_event_ids: [event1.id], webhook_subscription_ids: [subA.id], status: ['failed'] },
          [attempt.failed!],
        ],
        [{ webhook_event_ids: [event2.id], status: ['success'] }, []],
      ];
      for (const [filters, expected] of cases) {
        assert.deepEqual(ids(await search({ filters })), expected, JSON.stringify(filters));
      }
    });

    it('sorts by id, created_at, updated_at, attempt_number and latency_ms', async () => {
      assert.deepEqual(ids(await search({ sort_by: 'latency_ms', sort_direction: 'asc' })), [
        attempt.success,
        attempt.pending,
        attempt.failed,
        attempt.timeout,
      ]);
      assert.deepEqual(
        ids(await search({ sort_by: 'attempt_number', sort_direction: 'desc' })),
        // attempt_number 2 first; ties by id, same direction.
        [attempt.success, attempt.pending, attempt.timeout, attempt.failed],
      );
      for (const sortBy of ['id', 'created_at', 'updated_at']) {
        assert.deepEqual(ids(await search({ sort_by: sortBy, sort_direction: 'asc' })), [
          attempt.failed,
          attempt.success,
          attempt.timeout,
          attempt.pending,
        ]);
      }
    });

    it('returns an empty page as a valid result, with the true total past the end', async () => {
      const none = await search({ filters: { webhook_event_ids: [123456789] } });
      assert.equal(none.statusCode, 200);
      assert.deepEqual(none.json(), { items: [], total: 0, page: 1, page_size: 20 });
      assert.deepEqual((await search({ page: 3, page_size: 2 })).json(), {
        items: [],
        total: 4,
        page: 3,
        page_size: 2,
      });
    });

    it('rejects single values, unknown filter keys and other sort keys with 422 naming the field', async () => {
      const cases: [unknown, string][] = [
        [{ filters: { webhook_event_ids: event1.id } }, 'filters.webhook_event_ids'],
        [{ filters: { webhook_event_ids: [] } }, 'filters.webhook_event_ids'],
        [{ filters: { webhook_event_ids: [String(event1.id)] } }, 'filters.webhook_event_ids[0]'],
        [{ filters: { webhook_event_ids: [-1] } }, 'filters.webhook_event_ids[0]'],
        [{ filters: { webhook_subscription_ids: subA.id } }, 'filters.webhook_subscription_ids'],
        [{ filters: { webhook_subscription_ids: ['not-a-uuid'] } }, 'filters.webhook_subscription_ids[0]'],
        // A URN that JSON Schema's uuid format admits and PostgreSQL's uuid type does not.
        [
          { filters: { webhook_subscription_ids: [`urn:uuid:${subA.id}`] } },
          'filters.webhook_subscription_ids[0]',
        ],
        [{ filters: { status: ['succeeded'] } }, 'filters.status[0]'],
        [{ filters: { event_ids: [1] } }, 'filters.event_ids'],
        [{ sort_by: 'status' }, 'sort_by'],
        [{ sort_by: 'http_status_code' }, 'sort_by'],
        [{ search: 'x' }, 'search'],
        [{ page: -1 }, 'page'],
      ];
      for (const [body, field] of cases) {
        expectError(await search(body), 422, 'VALIDATION_FAILED', field);
      }
    });
  });
});
