// Sandbox test events (D11): published exactly as the platform publishes resource events, through the
// transactional outbox (publishEvent, D10).
import { withTransaction } from '../../db/pool.ts';
import type { AppDeps } from '../../platform/deps.ts';
import { badRequest, validationFailed } from '../../platform/errors.ts';
import type { EventView } from '../events/schemas.ts';
import { eventView } from '../events/service.ts';
import { publishEvent } from '../publish.ts';

export interface TestEventInput {
  event_type_code: string;
  data?: Record<string, unknown>;
  source_object_type?: string;
  source_object_id?: string;
  idempotency_key?: string;
}

/** `created` false: the idempotency key was used before; the first event is returned, nothing queued. */
export async function publishTestEvent(
  deps: AppDeps,
  organisationId: string,
  input: TestEventInput,
): Promise<{ created: boolean; event: EventView }> {
  if (!deps.catalogue.isPublishedEventType(input.event_type_code)) {
    throw validationFailed(
      'event_type_code',
      'event_type_code is not a published event type (see GET /api/v1/webhooks/event-types)',
    );
  }
  const result = await withTransaction(deps.pool, (tx) =>
    publishEvent(tx, deps.secretBox, {
      organisationId,
      eventTypeCode: input.event_type_code,
      data: input.data ?? {},
      sourceObjectType: input.source_object_type ?? null,
      sourceObjectId: input.source_object_id ?? null,
      idempotencyKey: input.idempotency_key ?? null,
    }),
  );
  if (result.outcome === 'no_subscribers') {
    throw badRequest(
      `No active subscription of the organisation receives ${input.event_type_code}: create one with this ` +
        'event type and set its status to active, then publish again',
    );
  }
  return { created: result.outcome === 'published', event: eventView(deps.secretBox, result.event) };
}
