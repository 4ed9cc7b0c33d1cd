// SQL of the transactional outbox (D2, D10): events and the deliveries that carry them.
import type { Queryable } from '../db/pool.ts';

/** Channel on which publishing transactions wake the delivery workers (delivered at commit). */
export const DELIVERY_CHANNEL = 'webhook_deliveries';

export interface EventRow {
  id: number;
  public_id: string;
  organisation_id: string;
  event_type_code: string;
  status: 'delivered' | 'partially_delivered' | 'failed' | 'dead_letter';
  payload: string;
  source_object_type: string | null;
  source_object_id: string | null;
  idempotency_key: string | null;
  current_round: number;
  created_at: Date;
  updated_at: Date;
}

export async function findEventByIdempotencyKey(
  db: Queryable,
  organisationId: string,
  idempotencyKey: string,
): Promise<EventRow | undefined> {
  const result = await db.query<EventRow>(
    'SELECT * FROM webhook_events WHERE organisation_id = $1 AND idempotency_key = $2',
    [organisationId, idempotencyKey],
  );
  return result.rows[0];
}

/**
 * What publishing needs to know, in one round trip (publishing sits inside the resource's transaction):
 * the event that already holds the idempotency key, if any, and the ids of the organisation's active
 * subscriptions whose event_type_codes hold `code`, in id order.
 */
export async function publishContext(
  db: Queryable,
  organisationId: string,
  code: string,
  idempotencyKey: string | null,
): Promise<{ existing: EventRow | undefined; subscriptionIds: string[] }> {
  const result = await db.query<EventRow & { subscription_ids: string[] }>({
    name: 'webhooks.publish_context',
    text: `SELECT subscriptions.ids AS subscription_ids, e.*
           FROM (SELECT coalesce(array_agg(id ORDER BY id), '{}') AS ids FROM webhook_subscriptions
                 WHERE organisation_id = $1 AND status = 'active' AND event_type_codes @> ARRAY[$2::text]
                ) AS subscriptions
           LEFT JOIN webhook_events e ON e.organisation_id = $1 AND e.idempotency_key = $3`,
    values: [organisationId, code, idempotencyKey],
  });
  const { subscription_ids: subscriptionIds, ...event } = result.rows[0]!;
  return { existing: event.id === null ? undefined : (event as EventRow), subscriptionIds };
}

/** Ids of the organisation's active subscriptions whose event_type_codes hold `code`. */
export async function activeSubscriptionIdsFor(
  db: Queryable,
  organisationId: string,
  code: string,
): Promise<string[]> {
  const result = await db.query<{ id: string }>(
    `SELECT id FROM webhook_subscriptions
     WHERE organisation_id = $1 AND status = 'active' AND event_type_codes @> ARRAY[$2::text]
     ORDER BY id`,
    [organisationId, code],
  );
  return result.rows.map((row) => row.id);
}

/**
 * Inserts an event with one pending delivery per subscription for its first round, due now, and wakes
 * the delivery workers at commit: one round trip. Undefined when its idempotency key was taken by a
 * concurrent publisher (then nothing is queued).
 */
export async function insertEventWithDeliveries(
  db: Queryable,
  event: Pick<
    EventRow,
    | 'public_id'
    | 'organisation_id'
    | 'event_type_code'
    | 'payload'
    | 'source_object_type'
    | 'source_object_id'
    | 'idempotency_key'
    | 'created_at'
  >,
  subscriptionIds: string[],
): Promise<EventRow | undefined> {
  const result = await db.query<EventRow>({
    name: 'webhooks.insert_event',
    text: `WITH event AS (
             INSERT INTO webhook_events
               (public_id, organisation_id, event_type_code, status, payload, source_object_type,
                source_object_id, idempotency_key, created_at, updated_at)
             VALUES ($1, $2, $3, 'failed', $4, $5, $6, $7, $8, $8)
             ON CONFLICT (organisation_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
             RETURNING *
           ), queued AS (
             INSERT INTO webhook_deliveries (event_id, subscription_id, organisation_id, round)
             SELECT event.id, subscription_id, event.organisation_id, event.current_round
             FROM event, unnest($9::uuid[]) AS subscription_id
           )
           SELECT event.* FROM event, LATERAL (SELECT pg_notify($10, event.id::text)) AS notified`,
    values: [
      event.public_id,
      event.organisation_id,
      event.event_type_code,
      event.payload,
      event.source_object_type,
      event.source_object_id,
      event.idempotency_key,
      event.created_at,
      subscriptionIds,
      DELIVERY_CHANNEL,
    ],
  });
  return result.rows[0];
}

/** One pending delivery per subscription for one round of an event, due now. */
export async function insertDeliveries(
  db: Queryable,
  event: Pick<EventRow, 'id' | 'organisation_id'>,
  round: number,
  subscriptionIds: string[],
): Promise<void> {
  await db.query({
    name: 'webhooks.insert_deliveries',
    text: `WITH queued AS (
             INSERT INTO webhook_deliveries (event_id, subscription_id, organisation_id, round)
             SELECT $1, subscription_id, $2, $3 FROM unnest($4::uuid[]) AS subscription_id
           )
           SELECT pg_notify($5, $6)`,
    values: [event.id, event.organisation_id, round, subscriptionIds, DELIVERY_CHANNEL, String(event.id)],
  });
}

/** Starts the next round of an event: it is `failed` until the new attempts conclude (D10). */
export async function startNextRound(db: Queryable, eventId: number): Promise<EventRow> {
  const result = await db.query<EventRow>(
    `UPDATE webhook_events SET current_round = current_round + 1, status = 'failed', updated_at = now()
     WHERE id = $1 RETURNING *`,
    [eventId],
  );
  return result.rows[0]!;
}
