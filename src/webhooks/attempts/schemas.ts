// Request and response schemas of the delivery-attempt endpoints (contract sections 2, 4; D4, D10).
import { type Static, Type } from '@sinclair/typebox';
import { UUID_SCHEMA_PATTERN } from '../../platform/ids.ts';
import { component } from '../../platform/openapi.ts';
import { FilterList, pageSchema, searchBodySchema } from '../../platform/search.ts';
import { StringEnum } from '../api-schemas.ts';
import { MAX_JSON_ID } from '../events/schemas.ts';

export const ATTEMPT_STATUSES = ['success', 'failed', 'timeout', 'pending_retry'] as const;

const exampleSummary = {
  id: 7,
  webhook_event_id: 42,
  webhook_subscription_id: '0193a5c4-7b2e-7c1d-9f3a-5e6b7c8d9e0f',
  delivery_id: 'dlv_01JD3V6N0A1B2C3D4E5F6G7H8J',
  attempt_number: 1,
  status: 'success',
  http_status_code: 200,
  latency_ms: 182,
  next_retry_at: null,
  failure_reason: null,
  created_at: '2026-11-22T09:30:01.250Z',
  updated_at: '2026-11-22T09:30:01.250Z',
};

const summaryProperties = {
  id: Type.Integer({ minimum: 1, description: 'Used as {attempt_id} in paths.' }),
  webhook_event_id: Type.Integer({ minimum: 1 }),
  webhook_subscription_id: Type.String({ format: 'uuid' }),
  delivery_id: Type.Union([Type.String(), Type.Null()], {
    description: 'The X-Webhook-Delivery-Id header of this attempt (null when no request was sent).',
  }),
  attempt_number: Type.Integer({
    minimum: 1,
    description: 'Counts attempts for one event on one subscription, across replay rounds.',
  }),
  status: StringEnum(ATTEMPT_STATUSES),
  http_status_code: Type.Optional(
    Type.Integer({ description: 'Absent when no response was received (timeout, connection failure).' }),
  ),
  latency_ms: Type.Integer({
    minimum: 0,
    description: 'Handler latency; for a timeout, the read timeout.',
  }),
  next_retry_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'Set only while the attempt is pending_retry.',
  }),
  failure_reason: Type.Union([Type.String(), Type.Null()], { description: 'Null on success.' }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
};

/** A search row: the attempt without the headers sent and the body returned. */
export const AttemptSummary = component(
  'DeliveryAttemptSummary',
  Type.Object(summaryProperties, {
    description:
      'A delivery attempt as a search row: every field but request_headers and response_body_snippet.',
    examples: [exampleSummary],
  }),
);
export type AttemptSummaryView = Static<typeof AttemptSummary>;

export const Attempt = component(
  'DeliveryAttempt',
  Type.Object(
    {
      ...summaryProperties,
      request_headers: Type.Record(Type.String(), Type.String(), {
        description: 'The headers that were sent, signature headers included.',
      }),
      response_body_snippet: Type.String({
        description: 'The first 1024 bytes the endpoint returned; empty when nothing was returned.',
      }),
    },
    {
      description: 'One delivery attempt in full.',
      examples: [
        {
          ...exampleSummary,
          request_headers: {
            'Content-Type': 'application/json',
            'User-Agent': 'payment-service-webhooks/1.0',
            'webhook-id': 'evt_01JD3V6M2Q8W1X4Y5Z6A7B8C9D',
            'webhook-timestamp': '1795339801',
            'webhook-signature': 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
            'X-Webhook-Delivery-Id': 'dlv_01JD3V6N0A1B2C3D4E5F6G7H8J',
          },
          response_body_snippet: 'ok',
        },
      ],
    },
  ),
);
export type AttemptView = Static<typeof Attempt>;

export const ATTEMPT_SORT_KEYS = ['id', 'created_at', 'updated_at', 'attempt_number', 'latency_ms'] as const;
export type AttemptSortKey = (typeof ATTEMPT_SORT_KEYS)[number];

export const AttemptSearchBody = component(
  'DeliveryAttemptSearchRequest',
  searchBodySchema(
    {
      webhook_event_ids: FilterList(Type.Integer({ minimum: 1, maximum: MAX_JSON_ID })),
      webhook_subscription_ids: FilterList(Type.String({ pattern: UUID_SCHEMA_PATTERN })),
      status: FilterList(StringEnum(ATTEMPT_STATUSES)),
    },
    ATTEMPT_SORT_KEYS,
  ),
);
export interface AttemptFilters {
  webhook_event_ids?: number[];
  webhook_subscription_ids?: string[];
  status?: string[];
}

export const AttemptPage = component('DeliveryAttemptPage', pageSchema(AttemptSummary));

export const AttemptIdParams = Type.Object({
  attempt_id: Type.String({ description: 'The integer id from a search row.', examples: ['7'] }),
});
