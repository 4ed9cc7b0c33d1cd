// Request and response schemas of the event endpoints (contract section 4, D4, D10).
import { type Static, Type } from '@sinclair/typebox';
import { component } from '../../platform/openapi.ts';
import { FilterList, pageSchema, searchBodySchema } from '../../platform/search.ts';
import { StoredText, StringEnum } from '../api-schemas.ts';

export const EVENT_STATUSES = ['delivered', 'partially_delivered', 'failed', 'dead_letter'] as const;

/** Largest id PostgreSQL bigint ids can reach that JSON numbers still carry exactly. */
export const MAX_JSON_ID = Number.MAX_SAFE_INTEGER;

const exampleEvent = {
  id: 42,
  public_id: 'evt_01JD3V6M2Q8W1X4Y5Z6A7B8C9D',
  event_type_code: 'transfer.completed',
  status: 'delivered',
  idempotency_key: 'tr_01JD3TZ0:completed',
  source_object_type: 'transfer',
  source_object_id: 'tr_01JD3TZ0',
  created_at: '2026-11-22T09:30:00.000Z',
  updated_at: '2026-11-22T09:30:01.250Z',
};
const examplePayload = {
  id: 'evt_01JD3V6M2Q8W1X4Y5Z6A7B8C9D',
  type: 'transfer.completed',
  created_at: '2026-11-22T09:30:00.000Z',
  data: { object: { id: 'tr_01JD3TZ0', status: 'completed' }, previous_status: 'processing' },
};

const eventProperties = {
  id: Type.Integer({ minimum: 1, description: 'Used as {event_id} in paths.' }),
  public_id: Type.String({ description: '`evt_` + ULID; the `id` inside the payload.' }),
  event_type_code: Type.String(),
  status: StringEnum(EVENT_STATUSES),
  idempotency_key: Type.Union([Type.String(), Type.Null()]),
  source_object_type: Type.Union([Type.String(), Type.Null()]),
  source_object_id: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
};

/** A search row: the event without its payload (read one event by id for the payload). */
export const EventSummary = component(
  'EventSummary',
  Type.Object(eventProperties, {
    description: 'A webhook event as a search row: every field but `payload`.',
    examples: [exampleEvent],
  }),
);
export type EventSummaryView = Static<typeof EventSummary>;

export const EventPayload = Type.Object(
  {
    id: Type.String({ description: '`evt_` identifier: deduplicate on it.' }),
    type: Type.String({ description: 'The event type code.' }),
    created_at: Type.String({ format: 'date-time' }),
    data: Type.Unknown(),
  },
  {
    additionalProperties: true,
    description: 'The exact signed envelope that was sent (D10), as a JSON object.',
    examples: [examplePayload],
  },
);

export const Event = component(
  'Event',
  Type.Object(
    { ...eventProperties, payload: EventPayload },
    { description: 'One webhook event in full.', examples: [{ ...exampleEvent, payload: examplePayload }] },
  ),
);
export type EventView = Static<typeof Event>;

export const EVENT_SORT_KEYS = ['id', 'created_at', 'updated_at'] as const;
export type EventSortKey = (typeof EVENT_SORT_KEYS)[number];

const Text = StoredText({ maxLength: 200 });

export const EventSearchBody = component(
  'EventSearchRequest',
  searchBodySchema(
    {
      id: FilterList(Type.Integer({ minimum: 1, maximum: MAX_JSON_ID })),
      public_id: FilterList(Text),
      status: FilterList(StringEnum(EVENT_STATUSES)),
      event_type_code: FilterList(Text),
      source_object_type: FilterList(Text),
      source_object_id: FilterList(Text),
      idempotency_key: FilterList(Text),
    },
    EVENT_SORT_KEYS,
  ),
);
export interface EventFilters {
  id?: number[];
  public_id?: string[];
  status?: string[];
  event_type_code?: string[];
  source_object_type?: string[];
  source_object_id?: string[];
  idempotency_key?: string[];
}

export const EventPage = component('EventPage', pageSchema(EventSummary));

export const EventIdParams = Type.Object({
  event_id: Type.String({ description: 'The integer id from a search row.', examples: ['42'] }),
});
