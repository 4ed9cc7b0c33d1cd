// Request and response schemas of the subscription endpoints (contract section 4, D4, D9).
import { type Static, Type } from '@sinclair/typebox';
import { component } from '../../platform/openapi.ts';
import { FilterList, pageSchema, searchBodySchema } from '../../platform/search.ts';
import { StoredText, StringEnum } from '../api-schemas.ts';

export const SUBSCRIPTION_STATUSES = [
  'pending_verification',
  'active',
  'paused',
  'auto_disabled',
  'deleted',
] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

/** The only statuses a client may set (contract section 3); the rest are platform-managed. */
export const CLIENT_STATUSES = ['active', 'paused'] as const;

export const MAX_ENDPOINT_URL_LENGTH = 2048;
export const MAX_RETRIES_LIMIT = 15;
export const DEFAULT_MAX_RETRIES = 8;

const EndpointUrl = Type.String({
  minLength: 1,
  maxLength: MAX_ENDPOINT_URL_LENGTH,
  description: 'Absolute https:// URL with a host and no user-info, at most 2048 characters (D9).',
  examples: ['https://hooks.example.com/payment-service'],
});
const EventTypeCodes = Type.Array(Type.String({ maxLength: 100 }), {
  maxItems: 100,
  description:
    'Codes from GET /api/v1/webhooks/event-types. Empty on create: matches no event. ' +
    'Empty on update: ignored (send the codes to keep).',
  examples: [['transfer.completed', 'payout.failed']],
});
const MaxRetries = Type.Integer({
  minimum: 0,
  maximum: MAX_RETRIES_LIMIT,
  description: 'Attempts that follow the first one in a round, 0..15 (D9). Default 8.',
});

export const CreateSubscriptionBody = component(
  'CreateSubscriptionRequest',
  Type.Object(
    {
      endpoint_url: EndpointUrl,
      event_type_codes: EventTypeCodes,
      max_retries: Type.Optional(MaxRetries),
    },
    {
      additionalProperties: false,
      examples: [
        {
          endpoint_url: 'https://hooks.example.com/payment-service',
          event_type_codes: ['transfer.completed', 'payout.failed'],
          max_retries: 8,
        },
      ],
    },
  ),
);
export type CreateSubscriptionInput = Static<typeof CreateSubscriptionBody>;

export const UpdateSubscriptionBody = component(
  'UpdateSubscriptionRequest',
  Type.Object(
    {
      endpoint_url: Type.Optional(EndpointUrl),
      event_type_codes: Type.Optional(EventTypeCodes),
      max_retries: Type.Optional(MaxRetries),
      status: Type.Optional(
        StringEnum(CLIENT_STATUSES, {
          description:
            'active or paused. pending_verification, auto_disabled and deleted are platform-managed (422). ' +
            'auto_disabled -> active first sends a signed webhook.ping to the endpoint; only a 2xx activates.',
        }),
      ),
    },
    {
      additionalProperties: false,
      examples: [{ status: 'paused' }, { event_type_codes: ['transfer.completed'] }],
    },
  ),
);
export type UpdateSubscriptionInput = Static<typeof UpdateSubscriptionBody>;

const exampleSubscription = {
  id: '0193a5c4-7b2e-7c1d-9f3a-5e6b7c8d9e0f',
  endpoint_url: 'https://hooks.example.com/payment-service',
  event_type_codes: ['payout.failed', 'transfer.completed'],
  max_retries: 8,
  status: 'pending_verification',
  consecutive_failures: 0,
  last_delivery_at: null,
  created_at: '2026-11-22T09:30:00.000Z',
  updated_at: '2026-11-22T09:30:00.000Z',
};
const exampleSecret = `whsec_${'3f'.repeat(32)}`;

const subscriptionProperties = {
  id: Type.String({ format: 'uuid', description: 'UUID version 7 (D3).' }),
  endpoint_url: Type.String(),
  event_type_codes: Type.Array(Type.String()),
  max_retries: Type.Integer(),
  status: StringEnum(SUBSCRIPTION_STATUSES),
  consecutive_failures: Type.Integer({ minimum: 0 }),
  last_delivery_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'Completion time of the latest attempt to the subscription, any outcome (D9).',
  }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
};

export const Subscription = component(
  'Subscription',
  Type.Object(subscriptionProperties, {
    description: 'A webhook subscription. Never holds the signing secret.',
    examples: [exampleSubscription],
  }),
);
export type SubscriptionView = Static<typeof Subscription>;

export const SubscriptionWithSecret = component(
  'SubscriptionWithSecret',
  Type.Object(
    {
      ...subscriptionProperties,
      signing_secret: Type.String({
        pattern: '^whsec_[0-9a-f]{64}$',
        description: 'Returned only by create and rotate-secret. Keep it: it is never shown again.',
      }),
    },
    { examples: [{ ...exampleSubscription, signing_secret: exampleSecret }] },
  ),
);
export type SubscriptionWithSecretView = Static<typeof SubscriptionWithSecret>;

export const SUBSCRIPTION_SORT_KEYS = ['id', 'created_at', 'updated_at'] as const;
export type SubscriptionSortKey = (typeof SUBSCRIPTION_SORT_KEYS)[number];

export const SubscriptionSearchBody = component(
  'SubscriptionSearchRequest',
  searchBodySchema(
    {
      status: FilterList(StringEnum(SUBSCRIPTION_STATUSES)),
      event_type_codes: FilterList(StoredText({ maxLength: 100 })),
      endpoint_url: FilterList(StoredText({ maxLength: MAX_ENDPOINT_URL_LENGTH })),
    },
    SUBSCRIPTION_SORT_KEYS,
  ),
);
export type SubscriptionSearchInput = Static<typeof SubscriptionSearchBody>;
export type SubscriptionFilters = NonNullable<SubscriptionSearchInput['filters']>;

export const SubscriptionPage = component('SubscriptionPage', pageSchema(Subscription));

export const SubscriptionIdParams = Type.Object({
  subscription_id: Type.String({
    description: 'The subscription id (UUID). A malformed id is 404.',
    examples: [exampleSubscription.id],
  }),
});
