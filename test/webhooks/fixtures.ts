// Fixtures of the webhook API tests: HTTP helpers over app.inject, subscriptions and sandbox events made
// through the API, and delivery attempts written directly in SQL (the delivery engine writes them in
// production; these tests do not depend on it).
import assert from 'node:assert/strict';
import type { TestApp } from '../helpers/app.ts';

import type { ApiClient } from '../helpers/http.ts';

/** A tenant's API client (test/helpers/http.ts). */
export type Client = ApiClient;
export type { Method } from '../helpers/http.ts';
export { apiClient as client } from '../helpers/http.ts';

export const SUBSCRIPTIONS = '/api/v1/webhooks/subscriptions';
export const EVENTS = '/api/v1/webhooks/events';
export const ATTEMPTS = '/api/v1/webhooks/delivery-attempts';
export const SANDBOX_EVENTS = '/api/v1/sandbox/webhooks/events';
export const EVENT_TYPES_URL = '/api/v1/webhooks/event-types';

export interface SubscriptionJson {
  id: string;
  endpoint_url: string;
  event_type_codes: string[];
  max_retries: number;
  status: string;
  consecutive_failures: number;
  last_delivery_at: string | null;
  created_at: string;
  updated_at: string;
  signing_secret?: string;
}

let counter = 0;
/** A URL no other test uses. */
export const uniqueUrl = (label = 'hook'): string =>
  `https://hooks.example.com/${label}/${process.pid}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;

export async function createSubscription(
  api: Client,
  body: Record<string, unknown> = {},
): Promise<SubscriptionJson> {
  const response = await api.post(SUBSCRIPTIONS, {
    endpoint_url: uniqueUrl(),
    event_type_codes: ['transfer.completed'],
    ...body,
  });
  assert.equal(response.statusCode, 201, response.body);
  return response.json() as SubscriptionJson;
}

/** Created and PATCHed to active: it receives events of its codes. */
export async function activeSubscription(
  api: Client,
  body: Record<string, unknown> = {},
): Promise<SubscriptionJson> {
  const created = await createSubscription(api, body);
  const response = await api.patch(`${SUBSCRIPTIONS}/${created.id}`, { status: 'active' });
  assert.equal(response.statusCode, 200, response.body);
  return { ...(response.json() as SubscriptionJson), signing_secret: created.signing_secret! };
}

export interface EventJson {
  id: number;
  public_id: string;
  event_type_code: string;
  status: string;
  idempotency_key: string | null;
  source_object_type: string | null;
  source_object_id: string | null;
  payload?: { id: string; type: string; created_at: string; data: unknown };
  created_at: string;
  updated_at: string;
}

export async function publishTestEvent(api: Client, body: Record<string, unknown> = {}): Promise<EventJson> {
  const response = await api.post(SANDBOX_EVENTS, { event_type_code: 'transfer.completed', ...body });
  assert.equal(response.statusCode, 201, response.body);
  return response.json() as EventJson;
}

/** Platform-managed states, set as the delivery engine would (e.g. auto_disabled after 50 failures). */
export async function setSubscriptionState(
  t: TestApp,
  id: string,
  status: string,
  consecutiveFailures = 0,
): Promise<void> {
  await t.db.pool.query(
    'UPDATE webhook_subscriptions SET status = $2, consecutive_failures = $3, updated_at = now() WHERE id = $1',
    [id, status, consecutiveFailures],
  );
}

export async function setEventStatus(t: TestApp, id: number, status: string): Promise<void> {
  await t.db.pool.query('UPDATE webhook_events SET status = $2, updated_at = now() WHERE id = $1', [
    id,
    status,
  ]);
}

export interface AttemptInput {
  eventId: number;
  subscriptionId: string;
  attemptNumber?: number;
  status?: 'success' | 'failed' | 'timeout' | 'pending_retry';
  httpStatusCode?: number | null;
  latencyMs?: number;
  requestHeaders?: Record<string, string>;
  responseBodySnippet?: string;
  failureReason?: string | null;
  nextRetryAt?: Date | null;
}

/** One attempt row, as the delivery engine writes it, on the delivery that publishing queued. */
export async function insertAttempt(t: TestApp, input: AttemptInput): Promise<number> {
  const delivery = await t.db.pool.query<{ id: number; organisation_id: string }>(
    `SELECT id, organisation_id FROM webhook_deliveries WHERE event_id = $1 AND subscription_id = $2
     ORDER BY id DESC LIMIT 1`,
    [input.eventId, input.subscriptionId],
  );
  const row = delivery.rows[0];
  assert.ok(row, 'publishing queued a delivery for this event and subscription');
  const status = input.status ?? 'success';
  const deliveryHeader = `dlv_01JD3V6N0A1B2C3D4E5F6G7H${String(input.attemptNumber ?? 1).padStart(2, '0')}`;
  const result = await t.db.pool.query<{ id: number }>(
    `INSERT INTO webhook_delivery_attempts
       (delivery_id, event_id, subscription_id, organisation_id, attempt_number, status, http_status_code,
        latency_ms, request_headers, response_body_snippet, failure_reason, next_retry_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
     RETURNING id`,
    [
      row.id,
      input.eventId,
      input.subscriptionId,
      row.organisation_id,
      input.attemptNumber ?? 1,
      status,
      input.httpStatusCode === undefined ? (status === 'success' ? 200 : null) : input.httpStatusCode,
      input.latencyMs ?? 100,
      JSON.stringify(
        input.requestHeaders ?? {
          'Content-Type': 'application/json',
          'User-Agent': 'payment-service-webhooks/1.0',
          'webhook-id': 'evt_test',
          'webhook-timestamp': '1795339801',
          'webhook-signature': 'v1,c2lnbmF0dXJl',
          'X-Webhook-Delivery-Id': deliveryHeader,
        },
      ),
      input.responseBodySnippet ?? (status === 'success' ? 'ok' : ''),
      input.failureReason === undefined ? (status === 'success' ? null : 'HTTP 500') : input.failureReason,
      input.nextRetryAt === undefined
        ? status === 'pending_retry'
          ? new Date(Date.now() + 60_000)
          : null
        : input.nextRetryAt,
    ],
  );
  return result.rows[0]!.id;
}
