// Request and response schemas of quotes (D20).
import { type Static, Type } from '@sinclair/typebox';
import { CurrencyCode } from '../balances/schemas.ts';
import { component } from '../platform/openapi.ts';
import { StringEnum, Timestamp } from '../webhooks/api-schemas.ts';

export const Quote = component(
  'Quote',
  Type.Object(
    {
      id: Type.String({ description: 'qte_ + ULID.' }),
      corridor_id: Type.String(),
      source_currency: CurrencyCode,
      destination_currency: CurrencyCode,
      amount_mode: StringEnum(['source', 'destination'] as const),
      source_amount: Type.String({ description: 'What the sender pays, fee included.' }),
      fee_amount: Type.String({ description: 'fee_fixed + source_amount x fee_percent / 100, rounded up.' }),
      rate: Type.String({
        description:
          'Destination units per source unit: mid_rate less the markup, rounded down to 10 significant digits.',
      }),
      mid_rate: Type.String({ description: 'The mid-market rate the quote was priced from.' }),
      destination_amount: Type.String({
        description:
          '(source_amount - fee_amount) x rate, rounded down; in destination mode, the amount asked for.',
      }),
      status: StringEnum(['open', 'accepted', 'expired'] as const),
      expires_at: Timestamp,
      estimated_delivery_at: Timestamp,
      created_at: Timestamp,
      updated_at: Timestamp,
    },
    {
      description: 'A price for one corridor (D20), open until expires_at.',
      examples: [
        {
          id: 'qte_01JD3V6M2Q8W1X4Y5Z6A7B8C9D',
          corridor_id: 'cor_0000SANDBX0000000000000001',
          source_currency: 'USD',
          destination_currency: 'EUR',
          amount_mode: 'source',
          source_amount: '1000.00',
          fee_amount: '6.00',
          rate: '0.91678',
          mid_rate: '0.92',
          destination_amount: '911.27',
          status: 'open',
          expires_at: '2026-11-23T09:45:00.000Z',
          estimated_delivery_at: '2026-11-23T10:30:00.000Z',
          created_at: '2026-11-23T09:30:00.000Z',
          updated_at: '2026-11-23T09:30:00.000Z',
        },
      ],
    },
  ),
);
export type QuoteView = Static<typeof Quote>;

export const CreateQuoteBody = component(
  'CreateQuoteRequest',
  Type.Object(
    {
      corridor_id: Type.String({ maxLength: 64 }),
      source_amount: Type.Optional(
        Type.String({ maxLength: 40, description: 'Send exactly this (fee included).' }),
      ),
      destination_amount: Type.Optional(Type.String({ maxLength: 40, description: 'Deliver exactly this.' })),
    },
    {
      additionalProperties: false,
      description: 'Exactly one of source_amount and destination_amount.',
      examples: [{ corridor_id: 'cor_0000SANDBX0000000000000001', source_amount: '1000.00' }],
    },
  ),
);
export type CreateQuoteInput = Static<typeof CreateQuoteBody>;

export const QuoteIdParams = Type.Object({
  quote_id: Type.String({ description: 'The quote id (`qte_...`). A malformed id is 404.' }),
});
