// Request and response schemas of the currencies and FX rates endpoints (D15) and the operator's rate
// imports (D23).
import { type Static, Type } from '@sinclair/typebox';
import { component } from '../platform/openapi.ts';
import { StringEnum } from '../webhooks/api-schemas.ts';

const CurrencyCode = (description: string, example: string) =>
  Type.String({ maxLength: 16, description, examples: [example] });

export const CurrencyItem = component(
  'Currency',
  Type.Object(
    {
      code: Type.String({ description: 'ISO 4217 alpha code, or USDC, USDT, BTC.' }),
      name: Type.String(),
      decimals: Type.Integer({
        minimum: 0,
        description: 'Decimals of every amount in this currency (ISO 4217 minor units; USDC/USDT 6, BTC 8).',
      }),
      type: StringEnum(['fiat', 'crypto'] as const),
    },
    { examples: [{ code: 'EUR', name: 'Euro', decimals: 2, type: 'fiat' }] },
  ),
);
export type CurrencyView = Static<typeof CurrencyItem>;

export const CurrencyList = Type.Array(CurrencyItem, {
  description: 'Currencies of at least one active corridor or balance of the organisation, sorted by code.',
});

export const RatesQuery = Type.Object(
  {
    source_currency: CurrencyCode('The currency converted from (required).', 'USD'),
    destination_currency: Type.Optional(
      CurrencyCode('The currency converted to; without it, every currency with a rate.', 'EUR'),
    ),
  },
  { additionalProperties: false },
);
export type RatesQueryInput = Static<typeof RatesQuery>;

export const RateItem = component(
  'FxRate',
  Type.Object(
    {
      source_currency: Type.String(),
      destination_currency: Type.String(),
      rate: Type.String({
        description:
          'Indicative mid-market rate: units of destination_currency per one unit of source_currency, a ' +
          'decimal string of at most 10 significant digits. Not tradable: a quote gives the rate you get.',
      }),
      provider: Type.String({
        description:
          'Where the rate comes from: the provider of the imported rates (`ecb`, `sandbox`, ...), or `par` ' +
          'for two currencies that are one (a stablecoin pegged to its anchor, FX_PEGS).',
      }),
      as_of: Type.String({ format: 'date-time', description: 'The moment the rates were observed.' }),
    },
    {
      examples: [
        {
          source_currency: 'USD',
          destination_currency: 'EUR',
          rate: '0.92',
          provider: 'sandbox',
          as_of: '2026-01-01T00:00:00.000Z',
        },
      ],
    },
  ),
);
export type RateView = Static<typeof RateItem>;

export const RateList = Type.Array(RateItem, { description: 'Sorted by destination_currency.' });

/** More than every currency there is: bounds the work of one request. */
export const MAX_RATES_PER_SET = 400;

export const PostRatesBody = component(
  'PostFxRatesRequest',
  Type.Object(
    {
      base: CurrencyCode('The currency every rate is quoted against (one unit of it).', 'EUR'),
      as_of: Type.String({
        maxLength: 40,
        description:
          'When the rates were observed: ISO-8601 date-time with Z or an offset; not in the future.',
        examples: ['2024-06-28T12:15:00.000Z'],
      }),
      provider: Type.String({
        pattern: '^[a-z0-9][a-z0-9_.-]{0,63}$',
        description: 'Lower-case name of the source, 1..64 of a-z, 0-9, "_", ".", "-" (`ecb`, `refinitiv`).',
        examples: ['ecb'],
      }),
      rates: Type.Record(Type.String(), Type.Unknown(), {
        maxProperties: MAX_RATES_PER_SET,
        description:
          'Units of each currency per one unit of base: positive decimal strings of at most 10 significant ' +
          'digits, no sign or exponent. Keys are known currency codes other than base; at least one.',
        examples: [{ USD: '1.0705', JPY: '171.94', GBP: '0.84638' }],
      }),
    },
    { additionalProperties: false },
  ),
);
export type PostRatesInput = Static<typeof PostRatesBody>;

export const RateSetResult = component(
  'FxRateSet',
  Type.Object(
    {
      base: Type.String(),
      provider: Type.String(),
      as_of: Type.String({ format: 'date-time' }),
      rates: Type.Record(Type.String(), Type.String()),
      replaced: Type.Boolean({
        description:
          'True when a set of the same provider, base and as_of existed and its rates were replaced.',
      }),
      current: Type.Boolean({
        description:
          "True when this is now the provider's latest set for the base, the one rates are read from. False " +
          'for a set older than the one the provider already has (kept as a record, not read).',
      }),
      created_at: Type.String({ format: 'date-time' }),
      updated_at: Type.String({ format: 'date-time' }),
    },
    {
      examples: [
        {
          base: 'EUR',
          provider: 'ecb',
          as_of: '2024-06-28T12:15:00.000Z',
          rates: { GBP: '0.84638', JPY: '171.94', USD: '1.0705' },
          replaced: false,
          current: true,
          created_at: '2024-06-28T14:05:00.000Z',
          updated_at: '2024-06-28T14:05:00.000Z',
        },
      ],
    },
  ),
);
export type RateSetView = Static<typeof RateSetResult>;
