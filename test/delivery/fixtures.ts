// Delivery-test fixtures: organisations, subscriptions and events made directly in storage (the
// management API is built elsewhere), a worker that trusts the test receivers' certificate, and
// Standard Webhooks verification of what the receivers got.

import assert from 'node:assert/strict';
import pino from 'pino';
import { createAppDeps } from '../../src/areas.ts';
import { loadConfig } from '../../src/config.ts';
import { type Pool, withTransaction } from '../../src/db/pool.ts';
import type { AppDeps } from '../../src/platform/deps.ts';
import { newUuid } from '../../src/platform/ids.ts';
import { Metrics } from '../../src/platform/metrics.ts';
import { generateSigningSecret, SecretBox } from '../../src/platform/secrets.ts';
import * as deliveryRepo from '../../src/webhooks/delivery/repository.ts';
import {
  type DeliveryWorker,
  type DeliveryWorkerOptions,
  startDeliveryWorker,
} from '../../src/webhooks/delivery/worker.ts';
import { publishEvent, queueReplayRound } from '../../src/webhooks/publish.ts';
import type { EventRow } from '../../src/webhooks/publish-repository.ts';
import { testEnv } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { openStoredPayload } from '../helpers/event-payloads.ts';
import { type ReceivedRequest, testCertificate, verifyDelivery } from '../helpers/https-receiver.ts';
import { waitUntil } from '../helpers/wait.ts';

export const EVENT_TYPE = 'transfer.completed';

export interface DeliveryTestContext {
  deps: AppDeps;
  db: TestDatabase;
  close(): Promise<void>;
}

/** A database of its own and the deps a worker needs; `env` overrides configuration (e.g. timeouts). */
export async function deliveryContext(env: Record<string, string> = {}): Promise<DeliveryTestContext> {
  const db = await createTestDatabase({ poolSize: 12 });
  const config = loadConfig(testEnv({ DATABASE_URL: db.url, LOG_LEVEL: 'silent', ...env }));
  const deps: AppDeps = createAppDeps({
    config,
    pool: db.pool,
    secretBox: new SecretBox(config.secretsEncryptionKey!),
    metrics: new Metrics(),
  });
  return { deps, db, close: () => db.drop() };
}

export const quietLogger = () => pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

/** A worker in this process that trusts the test certificate. */
export function startTestWorker(deps: AppDeps, options: DeliveryWorkerOptions = {}): DeliveryWorker {
  return startDeliveryWorker(deps, quietLogger(), {
    stopTimeoutMs: 2_000,
    ...options,
    transport: { ca: testCertificate().cert, ...options.transport },
  });
}

export async function createOrganisation(pool: Pool): Promise<string> {
  const id = newUuid();
  await pool.query('INSERT INTO organisations (id, name) VALUES ($1, $2)', [
    id,
    `Delivery test ${id.slice(-6)}`,
  ]);
  return id;
}

export interface TestSubscription {
  id: string;
  organisationId: string;
  /** The secret exactly as issued: `whsec_` + 64 hex. */
  secret: string;
  endpointUrl: string;
}

export async function createSubscription(
  deps: AppDeps,
  input: {
    organisationId: string;
    endpointUrl: string;
    eventTypeCodes?: string[];
    maxRetries?: number;
    status?: string;
  },
): Promise<TestSubscription> {
  const id = newUuid();
  const secret = generateSigningSecret();
  await deps.pool.query(
    `INSERT INTO webhook_subscriptions
       (id, organisation_id, endpoint_url, endpoint_url_normalized, event_type_codes, max_retries, status,
        signing_secret_sealed)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      id,
      input.organisationId,
      input.endpointUrl,
      input.endpointUrl.toLowerCase(),
      input.eventTypeCodes ?? [EVENT_TYPE],
      input.maxRetries ?? 8,
      input.status ?? 'active',
      deps.secretBox.encrypt(secret),
    ],
  );
  return { id, organisationId: input.organisationId, secret, endpointUrl: input.endpointUrl };
}

/** Rotation as the subscriptions service does it: a new secret, effective immediately (D9). */
export async function rotateSecret(deps: AppDeps, subscriptionId: string): Promise<string> {
  const secret = generateSigningSecret();
  await deps.pool.query('UPDATE webhook_subscriptions SET signing_secret_sealed = $2 WHERE id = $1', [
    subscriptionId,
    deps.secretBox.encrypt(secret),
  ]);
  return secret;
}

export async function setSubscriptionStatus(
  pool: Pool,
  subscriptionId: string,
  status: string,
): Promise<void> {
  await pool.query(
    `UPDATE webhook_subscriptions
     SET status = $2, deleted_at = CASE WHEN $2 = 'deleted' THEN now() ELSE deleted_at END
     WHERE id = $1`,
    [subscriptionId, status],
  );
}

/** Publishes an event; returns its row with the payload opened: the envelope every attempt must send. */
export async function publish(
  deps: AppDeps,
  organisationId: string,
  data: unknown = { object: { id: 'tr_1', status: 'completed' }, previous_status: 'processing' },
  eventTypeCode = EVENT_TYPE,
): Promise<EventRow> {
  const result = await withTransaction(deps.pool, (tx) =>
    publishEvent(tx, deps.secretBox, { organisationId, eventTypeCode, data }),
  );
  assert.equal(result.outcome, 'published');
  const { event } = result as { event: EventRow };
  return { ...event, payload: openStoredPayload(deps, event.payload) };
}

/**
 * Publishes an event whose stored payload is `stored(envelope)` instead of the sealed envelope, written in
 * the publishing transaction (so no worker ever sees the sealed one); returns the row with the envelope.
 */
export async function publishStoredAs(
  deps: AppDeps,
  organisationId: string,
  stored: (envelope: string) => string,
): Promise<EventRow> {
  const event = await withTransaction(deps.pool, async (tx) => {
    const result = await publishEvent(tx, deps.secretBox, {
      organisationId,
      eventTypeCode: EVENT_TYPE,
      data: { object: { id: 'tr_1', status: 'completed' }, previous_status: 'processing' },
    });
    assert.equal(result.outcome, 'published');
    const { event } = result as { event: EventRow };
    const envelope = openStoredPayload(deps, event.payload);
    await tx.query('UPDATE webhook_events SET payload = $2 WHERE id = $1', [event.id, stored(envelope)]);
    return { ...event, payload: envelope };
  });
  return event;
}

/**
 * Claims every due delivery (up to 1,000, no per-subscription cap) for `workerId` with a one-minute lease, as
 * a worker would, sorted by id; the caller then records, gives up or prepares them by hand.
 */
export async function claimDue(pool: Pool, workerId: string): Promise<deliveryRepo.ClaimedDelivery[]> {
  const rows = await deliveryRepo.claimDeliveries(pool, {
    workerId,
    leaseMs: 60_000,
    limit: 1_000,
    perSubscription: 1_000,
    inFlight: new Map(),
  });
  return rows.sort((a, b) => a.id - b.id);
}

/** Replay as the events service does it: the event row locked, a new round queued. */
export async function replay(deps: AppDeps, eventId: number): Promise<number> {
  return withTransaction(deps.pool, async (tx) => {
    const locked = await tx.query<EventRow>('SELECT * FROM webhook_events WHERE id = $1 FOR UPDATE', [
      eventId,
    ]);
    assert.equal(locked.rows[0]!.status, 'dead_letter', 'only a dead_letter event is replayed');
    return queueReplayRound(tx, locked.rows[0]!);
  });
}

export interface AttemptRow {
  id: number;
  delivery_id: number;
  subscription_id: string;
  attempt_number: number;
  status: string;
  http_status_code: number | null;
  latency_ms: number;
  request_headers: Record<string, string>;
  response_body_snippet: string;
  failure_reason: string | null;
  next_retry_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export async function attemptsOf(
  pool: Pool,
  eventId: number,
  subscriptionId?: string,
): Promise<AttemptRow[]> {
  const result = await pool.query<AttemptRow>(
    `SELECT * FROM webhook_delivery_attempts
     WHERE event_id = $1 AND ($2::uuid IS NULL OR subscription_id = $2)
     ORDER BY subscription_id, attempt_number`,
    [eventId, subscriptionId ?? null],
  );
  return result.rows;
}

export async function eventStatus(pool: Pool, eventId: number): Promise<string> {
  const result = await pool.query<{ status: string }>('SELECT status FROM webhook_events WHERE id = $1', [
    eventId,
  ]);
  return result.rows[0]!.status;
}

export async function subscriptionRow(
  pool: Pool,
  subscriptionId: string,
): Promise<{ status: string; consecutive_failures: number; last_delivery_at: Date | null }> {
  const result = await pool.query(
    'SELECT status, consecutive_failures, last_delivery_at FROM webhook_subscriptions WHERE id = $1',
    [subscriptionId],
  );
  return result.rows[0];
}

export async function deliveriesOf(
  pool: Pool,
  eventId: number,
): Promise<
  { id: number; subscription_id: string; round: number; state: string; locked_by: string | null }[]
> {
  const result = await pool.query(
    'SELECT id, subscription_id, round, state, locked_by FROM webhook_deliveries WHERE event_id = $1 ORDER BY id',
    [eventId],
  );
  return result.rows;
}

/** Waits until the event's status is one of `statuses` (and returns it). */
export { waitUntil };

export function waitForEventStatus(pool: Pool, eventId: number, statuses: string[], timeoutMs = 15_000) {
  return waitUntil(
    async () => {
      const status = await eventStatus(pool, eventId);
      return statuses.includes(status) ? status : undefined;
    },
    `event ${eventId} to become ${statuses.join(' or ')}`,
    timeoutMs,
  );
}

/** Verifies a received request with the Standard Webhooks library given the secret as issued. */
export { verifyDelivery };

/** True when the request does NOT verify with `secret`. */
export function failsVerification(secret: string, request: ReceivedRequest): boolean {
  try {
    verifyDelivery(secret, request);
    return false;
  } catch {
    return true;
  }
}
