// Request and response schemas of the corridor endpoints (D16) and the operator's corridor management
// (D23). Currencies, country, amounts and percents are strings checked by the service, so that each
// rejection names its field with a message that says what is allowed.
import { type Static, Type } from '@sinclair/typebox';
import { CurrencyCode } from '../balances/schemas.ts';
import { CountryCode } from '../platform/countries.ts';
import { component } from '../platform/openapi.ts';
import { FilterList, pageSchema, searchBodySchema } from '../platform/search.ts';
import { StringEnum } from '../webhooks/api-schemas.ts';

export const PAYOUT_METHODS = ['bank_account', 'mobile_wallet'] as const;
export type PayoutMethod = (typeof PAYOUT_METHODS)[number];

export const CORRIDOR_STATUSES = ['active', 'suspended'] as const;
export type CorridorStatus = (typeof CORRIDOR_STATUSES)[number];

const Code = (description: string, example: string) =>
  Type.String({ maxLength: 16, description, examples: [example] });
const Decimal = (description: string, example: string) =>
  Type.String({ maxLength: 40, description, examples: [example] });

const limitsAndFees = {
  min_amount: Decimal(
    'Smallest source amount a quote may have: a positive decimal string with at most the source ' +
      "currency's decimals.",
    '1.00',
  ),
  max_amount: Decimal('Largest source amount a quote may have; at least min_amount.', '50000.00'),
  fee_fixed: Decimal(
    'Fixed fee per transfer in the source currency (may be "0"), at most its decimals.',
    '2.00',
  ),
  fee_percent: Decimal(
    'Fee in percent of the source amount, 0..100, a decimal string with at most 4 decimals.',
    '0.50',
  ),
  fx_markup_percent: Decimal(
    'Margin on the mid rate in percent, 0..100 (at most 4 decimals): rate = mid_rate x (1 - markup/100).',
    '0.35',
  ),
  estimated_delivery_seconds: Type.Integer({
    minimum: 0,
    maximum: 2_592_000,
    description: 'Typical time from funding to payout, in seconds (at most 30 days).',
    examples: [3600],
  }),
};

export const CreateCorridorBody = component(
  'CreateCorridorRequest',
  Type.Object(
    {
      source_currency: Code('ISO 4217 code, or USDC, USDT, BTC.', 'USD'),
      destination_country: Code('ISO 3166-1 alpha-2 code, upper-case.', 'DE'),
      destination_currency: Code('ISO 4217 code of the payout.', 'EUR'),
      payout_method: StringEnum(PAYOUT_METHODS),
      ...limitsAndFees,
      status: Type.Optional(StringEnum(CORRIDOR_STATUSES, { description: 'Default active.' })),
    },
    {
      additionalProperties: false,
      examples: [
        {
          source_currency: 'USD',
          destination_country: 'DE',
          destination_currency: 'EUR',
          payout_method: 'bank_account',
          min_amount: '1.00',
          max_amount: '50000.00',
          fee_fixed: '1.00',
          fee_percent: '0.50',
          fx_markup_percent: '0.35',
          estimated_delivery_seconds: 86400,
        },
      ],
    },
  ),
);
export type CreateCorridorInput = Static<typeof CreateCorridorBody>;

export const UpdateCorridorBody = component(
  'UpdateCorridorRequest',
  Type.Object(
    {
      min_amount: Type.Optional(limitsAndFees.min_amount),
      max_amount: Type.Optional(limitsAndFees.max_amount),
      fee_fixed: Type.Optional(limitsAndFees.fee_fixed),
      fee_percent: Type.Optional(limitsAndFees.fee_percent),
      fx_markup_percent: Type.Optional(limitsAndFees.fx_markup_percent),
      estimated_delivery_seconds: Type.Optional(limitsAndFees.estimated_delivery_seconds),
      status: Type.Optional(
        StringEnum(CORRIDOR_STATUSES, {
          description: 'suspended refuses new quotes (400 CORRIDOR_UNAVAILABLE); confirmed transfers go on.',
        }),
      ),
    },
    { additionalProperties: false, examples: [{ status: 'suspended' }, { fee_fixed: '2.50' }] },
  ),
);
export type UpdateCorridorInput = Static<typeof UpdateCorridorBody>;

const exampleCorridor = {
  id: 'cor_0000SANDBX0000000000000001',
  source_currency: 'USD',
  destination_country: 'DE',
  destination_currency: 'EUR',
  payout_method: 'bank_account',
  min_amount: '1.00',
  max_amount: '50000.00',
  fee_fixed: '1.00',
  fee_percent: '0.50',
  fx_markup_percent: '0.35',
  estimated_delivery_seconds: 86400,
  status: 'active',
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
};

export const Corridor = component(
  'Corridor',
  Type.Object(
    {
      id: Type.String({ description: 'cor_ + ULID (D14).' }),
      source_currency: Type.String(),
      destination_country: Type.String(),
      destination_currency: Type.String(),
      payout_method: StringEnum(PAYOUT_METHODS),
      min_amount: Type.String({ description: 'Source currency, exactly its decimals.' }),
      max_amount: Type.String({ description: 'Source currency, exactly its decimals.' }),
      fee_fixed: Type.String({ description: 'Source currency, exactly its decimals.' }),
      fee_percent: Type.String({
        description: 'Percent of the source amount, at least 2 decimals ("0.50").',
      }),
      fx_markup_percent: Type.String({ description: 'Percent taken off the mid rate, at least 2 decimals.' }),
      estimated_delivery_seconds: Type.Integer(),
      status: StringEnum(CORRIDOR_STATUSES),
      created_at: Type.String({ format: 'date-time' }),
      updated_at: Type.String({ format: 'date-time' }),
    },
    { description: 'One way to send money (D16).', examples: [exampleCorridor] },
  ),
);
export type CorridorView = Static<typeof Corridor>;

export const CORRIDOR_SORT_KEYS = ['id', 'created_at', 'updated_at'] as const;
export type CorridorSortKey = (typeof CORRIDOR_SORT_KEYS)[number];

export const CorridorSearchBody = component(
  'CorridorSearchRequest',
  searchBodySchema(
    {
      source_currency: FilterList(CurrencyCode),
      destination_country: FilterList(CountryCode()),
      destination_currency: FilterList(CurrencyCode),
      payout_method: FilterList(StringEnum(PAYOUT_METHODS)),
      status: FilterList(StringEnum(CORRIDOR_STATUSES)),
    },
    CORRIDOR_SORT_KEYS,
  ),
);
export type CorridorSearchInput = Static<typeof CorridorSearchBody>;
export type CorridorFilters = NonNullable<CorridorSearchInput['filters']>;

export const CorridorPage = component('CorridorPage', pageSchema(Corridor));

export const CorridorIdParams = Type.Object({
  corridor_id: Type.String({
    description: 'The corridor id (cor_ + ULID). A malformed id is 404.',
    examples: [exampleCorridor.id],
  }),
});
