// publishEvent: the one internal way any part of the service emits a webhook event (D10).
// In the caller's transaction it records the event with its fixed payload envelope, sealed at rest (D13,
// src/webhooks/sealed-payload.ts), and one delivery per matching active subscription (transactional
// outbox, D2). With no active match nothing is recorded.
import type { PoolClient } from '../db/pool.ts';
import type { Catalogue } from '../platform/area.ts';
import { newEventPublicId } from '../platform/ids.ts';
import type { SecretBox } from '../platform/secrets.ts';
import * as outbox from './publish-repository.ts';

export interface PublishInput {
  organisationId: string;
  eventTypeCode: string;
  /** The envelope's `data`; D8: `{"object": <resource>, "previous_status": <status or null>}` for resource events. */
  data: unknown;
  sourceObjectType?: string | null;
  sourceObjectId?: string | null;
  /** D8: `<resource id>:<status>` so that a state is announced once. */
  idempotencyKey?: string | null;
}

/** `event` is the stored row: its `payload` is sealed (openPayload gives the envelope). */
export type PublishResult =
  | { outcome: 'published'; event: outbox.EventRow; deliveries: number }
  /** The idempotency key was used before: the first event, nothing queued. */
  | { outcome: 'duplicate'; event: outbox.EventRow }
  /** No active subscription of the organisation matches the event type: nothing recorded. */
  | { outcome: 'no_subscribers' };

/** The envelope sent byte for byte on every attempt (D10). */
export function buildPayload(publicId: string, type: string, createdAt: Date, data: unknown): string {
  return JSON.stringify({ id: publicId, type, created_at: createdAt.toISOString(), data: data ?? {} });
}

export async function publishEvent(
  tx: PoolClient,
  secretBox: Pick<SecretBox, 'encrypt'>,
  input: PublishInput,
): Promise<PublishResult> {
  const idempotencyKey = input.idempotencyKey ?? null;
  const { existing, subscriptionIds } = await outbox.publishContext(
    tx,
    input.organisationId,
    input.eventTypeCode,
    idempotencyKey,
  );
  if (existing) return { outcome: 'duplicate', event: existing };
  if (subscriptionIds.length === 0) return { outcome: 'no_subscribers' };

  const publicId = newEventPublicId();
  const createdAt = new Date();
  const event = await outbox.insertEventWithDeliveries(
    tx,
    {
      public_id: publicId,
      organisation_id: input.organisationId,
      event_type_code: input.eventTypeCode,
      payload: secretBox.encrypt(buildPayload(publicId, input.eventTypeCode, createdAt, input.data)),
      source_object_type: input.sourceObjectType ?? null,
      source_object_id: input.sourceObjectId ?? null,
      idempotency_key: idempotencyKey,
      created_at: createdAt,
    },
    subscriptionIds,
  );
  if (!event) {
    // A concurrent publisher committed the same idempotency key first.
    const first = await outbox.findEventByIdempotencyKey(tx, input.organisationId, idempotencyKey!);
    return { outcome: 'duplicate', event: first! };
  }
  return { outcome: 'published', event, deliveries: subscriptionIds.length };
}

/**
 * Replay (D10): a new round with one delivery per currently active subscription that matches the
 * event type, including those that already received it. Returns the number queued; with none the
 * event is left untouched (it stays `dead_letter`). The caller holds the event row lock.
 */
export async function queueReplayRound(tx: PoolClient, event: outbox.EventRow): Promise<number> {
  const subscriptionIds = await outbox.activeSubscriptionIdsFor(
    tx,
    event.organisation_id,
    event.event_type_code,
  );
  if (subscriptionIds.length === 0) return 0;
  const updated = await outbox.startNextRound(tx, event.id);
  await outbox.insertDeliveries(tx, updated, updated.current_round, subscriptionIds);
  return subscriptionIds.length;
}

export interface ResourceEventInput {
  organisationId: string;
  /** `transfer`, `deposit`, `payout`, `beneficiary`, `screening`, `deposit_address` (D14). */
  sourceObjectType: string;
  /** The resource as its GET returns it; its `id` names the source object. */
  object: { id: string };
  /** `created`, a new status, or another action of the catalogue (`updated`). */
  action: string;
  previousStatus: string | null;
  /** Default `<resource id>:<action>` (D8): a state is announced once. */
  idempotencyKey?: string | null;
}

/**
 * A resource's event (D8, D14): `<type>.<action>` with data `{object, previous_status}`, in the caller's
 * transaction, the one that changes the resource. An action without a catalogue code publishes nothing.
 */
export async function publishResourceEvent(
  tx: PoolClient,
  deps: { catalogue: Pick<Catalogue, 'isPublishedEventType'>; secretBox: Pick<SecretBox, 'encrypt'> },
  input: ResourceEventInput,
): Promise<void> {
  const code = `${input.sourceObjectType}.${input.action}`;
  if (!deps.catalogue.isPublishedEventType(code)) return;
  await publishEvent(tx, deps.secretBox, {
    organisationId: input.organisationId,
    eventTypeCode: code,
    data: { object: input.object, previous_status: input.previousStatus },
    sourceObjectType: input.sourceObjectType,
    sourceObjectId: input.object.id,
    idempotencyKey:
      input.idempotencyKey === undefined ? `${input.object.id}:${input.action}` : input.idempotencyKey,
  });
}
