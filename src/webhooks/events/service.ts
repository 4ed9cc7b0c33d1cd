// Reading and replaying webhook events (contract sections 3, 4, 7; D4, D10). Events of another
// organisation are not found.
import { withTransaction } from '../../db/pool.ts';
import type { AppDeps } from '../../platform/deps.ts';
import { type AppError, badRequest, notFound } from '../../platform/errors.ts';
import { parseIntegerId } from '../../platform/ids.ts';
import { type Page, toPage, toSearchQuery } from '../../platform/search.ts';
import type { SecretBox } from '../../platform/secrets.ts';
import { toIso } from '../../platform/time.ts';
import { queueReplayRound } from '../publish.ts';
import type { EventRow } from '../publish-repository.ts';
import { openPayload } from '../sealed-payload.ts';
import * as repo from './repository.ts';
import type { EventFilters, EventSortKey, EventSummaryView, EventView } from './schemas.ts';

export function eventSummaryView(row: Omit<EventRow, 'payload'>): EventSummaryView {
  return {
    id: row.id,
    public_id: row.public_id,
    event_type_code: row.event_type_code,
    status: row.status,
    idempotency_key: row.idempotency_key,
    source_object_type: row.source_object_type,
    source_object_id: row.source_object_id,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

/**
 * The event in full; the payload is stored (sealed) as the exact text sent and returned as that JSON object.
 * A payload no configured key opens fails the request (500, the cause logged with the event id): the
 * operator's key configuration is at fault, and the field never stands in for the envelope that was sent.
 * Searches never read payloads, so such an event still appears in them.
 */
export function eventView(secretBox: Pick<SecretBox, 'decrypt'>, row: EventRow): EventView {
  let payload: EventView['payload'];
  try {
    payload = JSON.parse(openPayload(secretBox, row.payload)) as EventView['payload'];
  } catch {
    // A plain Error, so that it answers 500: a SyntaxError would read as a client's invalid JSON (400).
    throw new Error(`the payload of event ${row.id} is unreadable (check SECRETS_ENCRYPTION_KEY)`);
  }
  return { ...eventSummaryView(row), payload };
}

const eventNotFound = (): AppError => notFound('No event matches the id');

export async function getEvent(deps: AppDeps, organisationId: string, idText: string): Promise<EventView> {
  const id = parseIntegerId(idText);
  if (id === undefined) throw eventNotFound();
  const row = await repo.findEvent(deps.pool, organisationId, id.toString());
  if (!row) throw eventNotFound();
  return eventView(deps.secretBox, row);
}

export interface EventSearchInput {
  filters?: EventFilters;
  search?: string;
  page?: number;
  page_size?: number;
  sort_by?: string;
  sort_direction?: 'asc' | 'desc';
}

export async function searchEvents(
  deps: AppDeps,
  organisationId: string,
  body: EventSearchInput | undefined,
): Promise<Page<EventSummaryView>> {
  const query = toSearchQuery<EventFilters, EventSortKey>(body);
  // NUL cannot be stored in text, so a search holding it matches nothing (PostgreSQL would refuse it).
  if (query.search?.includes('\u0000')) return toPage(query, [], 0);
  const { rows, total } = await repo.searchEvents(deps.pool, {
    organisationId,
    filters: query.filters,
    ...(query.search !== undefined
      ? { search: { text: query.search, id: parseIntegerId(query.search)?.toString() } }
      : {}),
    sortBy: query.sortBy,
    sortDirection: query.sortDirection,
    limit: query.pageSize,
    offset: query.offset,
  });
  return toPage(query, rows.map(eventSummaryView), total);
}

/**
 * D10: only a `dead_letter` event is replayed (else 400). Each call queues another round to every
 * currently active matching subscription (not idempotent). With none, nothing is queued and the event
 * stays `dead_letter`; the answer is still 202 with the event as it is.
 */
export async function replayEvent(deps: AppDeps, organisationId: string, idText: string): Promise<EventView> {
  const id = parseIntegerId(idText);
  if (id === undefined) throw eventNotFound();
  return withTransaction(deps.pool, async (tx) => {
    // The row lock serialises replays of one event with each other and with the delivery engine's
    // status updates, so two replays cannot both see `dead_letter`.
    const event = await repo.findEvent(tx, organisationId, id.toString(), { forUpdate: true });
    if (!event) throw eventNotFound();
    if (event.status !== 'dead_letter') {
      throw badRequest(`Only an event in dead_letter can be replayed; this event is ${event.status}`);
    }
    const queued = await queueReplayRound(tx, event);
    const row = queued > 0 ? ((await repo.findEvent(tx, organisationId, id.toString())) ?? event) : event;
    // Inside the transaction: an answer that cannot be given (an unreadable payload) queues nothing.
    return eventView(deps.secretBox, row);
  });
}
