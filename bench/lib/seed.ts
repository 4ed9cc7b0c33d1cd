// Test data through the service's own code: organisations, active subscriptions (sealed secrets, as the
// subscriptions service stores them), API clients, and events through publishEvent (the outbox write, which
// seals their payloads).

import { createClient } from '../../src/admin/service.ts';
import { createAppDeps } from '../../src/areas.ts';
import { loadConfig } from '../../src/config.ts';
import { type Pool, withTransaction } from '../../src/db/pool.ts';
import type { AppDeps } from '../../src/platform/deps.ts';
import { newUuid } from '../../src/platform/ids.ts';
import { Metrics } from '../../src/platform/metrics.ts';
import { generateSigningSecret, SecretBox } from '../../src/platform/secrets.ts';
import { publishEvent } from '../../src/webhooks/publish.ts';
import { now } from './util.ts';

export const EVENT_TYPE = 'transfer.completed';

const boxes = new Map<string, SecretBox>();
/** One SecretBox per key: building one derives its sub-keys, which a publisher should not pay per event. */
export function secretBoxFor(encryptionKey: string): SecretBox {
  let box = boxes.get(encryptionKey);
  if (!box) {
    box = new SecretBox(encryptionKey);
    boxes.set(encryptionKey, box);
  }
  return box;
}

export async function createOrganisation(pool: Pool, name: string): Promise<string> {
  const id = newUuid();
  await pool.query('INSERT INTO organisations (id, name) VALUES ($1, $2)', [id, name]);
  return id;
}

export interface Subscription {
  id: string;
  endpointUrl: string;
  /** `whsec_...`, as issued. */
  secret: string;
}

/** An `active` subscription stored as the subscriptions service stores one (D9, D13). */
export async function createSubscription(
  pool: Pool,
  encryptionKey: string,
  input: { organisationId: string; endpointUrl: string; eventTypeCodes?: string[]; maxRetries?: number },
): Promise<Subscription> {
  const id = newUuid();
  const secret = generateSigningSecret();
  await pool.query(
    `INSERT INTO webhook_subscriptions
       (id, organisation_id, endpoint_url, endpoint_url_normalized, event_type_codes, max_retries, status,
        signing_secret_sealed)
     VALUES ($1, $2, $3, $4, $5, $6, 'active', $7)`,
    [
      id,
      input.organisationId,
      input.endpointUrl,
      input.endpointUrl.toLowerCase(),
      input.eventTypeCodes ?? [EVENT_TYPE],
      input.maxRetries ?? 8,
      secretBoxFor(encryptionKey).encrypt(secret),
    ],
  );
  return { id, endpointUrl: input.endpointUrl, secret };
}

/** The `data` of a transfer.completed event (D8): the transfer as GET would return it, and its previous status. */
export function transferData(index: number): unknown {
  return {
    object: {
      id: `tr_bench_${index}`,
      status: 'completed',
      source_amount: '1250.00',
      source_currency: 'EUR',
      destination_amount: '1361.87',
      destination_currency: 'USD',
      rate: '1.089496',
      fee: '3.50',
      beneficiary_id: 'ben_01JBENCHMARKBENEFICIARY0001',
      reference: `Invoice ${100_000 + index}`,
      created_at: '2026-11-22T09:30:00.000Z',
      updated_at: '2026-11-22T09:30:05.000Z',
    },
    previous_status: 'processing',
  };
}

export interface Published {
  publicId: string;
  /** performance.now() when the publishing transaction began. */
  startedAt: number;
  /** performance.now() after COMMIT returned. */
  committedAt: number;
}

/** One event in a transaction of its own, as a resource change would publish it. */
export async function publishOne(
  pool: Pool,
  encryptionKey: string,
  organisationId: string,
  index: number,
): Promise<Published> {
  const box = secretBoxFor(encryptionKey);
  const startedAt = now();
  const result = await withTransaction(pool, (tx) =>
    publishEvent(tx, box, {
      organisationId,
      eventTypeCode: EVENT_TYPE,
      data: transferData(index),
      sourceObjectType: 'transfer',
      sourceObjectId: `tr_bench_${index}`,
      idempotencyKey: `tr_bench_${index}:completed`,
    }),
  );
  if (result.outcome !== 'published') throw new Error(`publishEvent: ${result.outcome}`);
  return { publicId: result.event.public_id, startedAt, committedAt: now() };
}

/**
 * `count` events through publishEvent, `batchSize` per transaction, `parallel` transactions at a time
 * (with no worker running: a backlog). Returns the public ids in publishing order.
 */
export async function publishBacklog(
  pool: Pool,
  encryptionKey: string,
  organisationId: string,
  count: number,
  options: {
    batchSize?: number;
    parallel?: number;
    progress?: (done: number) => void;
    signal?: AbortSignal;
  } = {},
): Promise<string[]> {
  const box = secretBoxFor(encryptionKey);
  const batchSize = options.batchSize ?? 250;
  const parallel = options.parallel ?? 4;
  const ids: string[] = new Array(count);
  let next = 0;
  let done = 0;
  const lane = async () => {
    while (next < count) {
      options.signal?.throwIfAborted();
      const from = next;
      const to = Math.min(count, from + batchSize);
      next = to;
      await withTransaction(pool, async (tx) => {
        for (let index = from; index < to; index++) {
          const result = await publishEvent(tx, box, {
            organisationId,
            eventTypeCode: EVENT_TYPE,
            data: transferData(index),
            sourceObjectType: 'transfer',
            sourceObjectId: `tr_bench_${index}`,
            idempotencyKey: `tr_bench_${index}:completed`,
          });
          if (result.outcome !== 'published') throw new Error(`publishEvent: ${result.outcome}`);
          ids[index] = result.event.public_id;
        }
      });
      done += to - from;
      options.progress?.(done);
    }
  };
  await Promise.all(Array.from({ length: parallel }, lane));
  return ids;
}

/** An API client of the organisation with every scope, made by the operator service (D7). */
export async function createApiClient(
  pool: Pool,
  encryptionKey: string,
  organisationId: string,
): Promise<{ clientId: string; clientSecret: string }> {
  const deps: AppDeps = createAppDeps({
    config: loadConfig({ APP_ENV: 'sandbox', SECRETS_ENCRYPTION_KEY: encryptionKey }),
    pool,
    secretBox: secretBoxFor(encryptionKey),
    metrics: new Metrics(),
  });
  const client = await createClient(deps, { organisation_id: organisationId, name: 'bench' });
  return { clientId: client.client_id, clientSecret: client.client_secret! };
}

/** An access token of `client` from an `auth` (or `serve`) process at `authUrl`. */
export async function fetchToken(
  authUrl: string,
  client: { clientId: string; clientSecret: string },
): Promise<string> {
  const response = await fetch(`${authUrl}/realms/sandbox/protocol/openid-connect/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.clientSecret,
    }),
  });
  const token = ((await response.json()) as { access_token?: string }).access_token;
  if (!token) throw new Error(`no token from the auth process: HTTP ${response.status}`);
  return token;
}
