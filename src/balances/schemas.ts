// Request and response schemas of balances and balance transactions (D21) and the sandbox top-up (D24).
import { type Static, Type } from '@sinclair/typebox';
import { component } from '../platform/openapi.ts';
import { FilterList, pageSchema, searchBodySchema } from '../platform/search.ts';
import { StringEnum } from '../webhooks/api-schemas.ts';

export const TRANSACTION_TYPES = [
  'deposit',
  'payout',
  'payout_reversal',
  'transfer_funding',
  'transfer_refund',
  'fee',
  'top_up',
  'adjustment',
] as const;

export const CurrencyCode = Type.String({
  pattern: '^[A-Z]{3,5}$',
  description: 'ISO 4217 code (USD) or crypto asset (USDC, USDT, BTC), upper-case.',
  examples: ['USD'],
});

export const Balance = component(
  'Balance',
  Type.Object(
    {
      currency: CurrencyCode,
      available: Type.String({ description: 'Spendable now, with exactly the currency decimals.' }),
      held: Type.String({ description: 'Set aside for movements in flight (payouts being paid).' }),
      updated_at: Type.String({ format: 'date-time' }),
    },
    {
      description: 'An organisation balance in one currency (D21).',
      examples: [
        { currency: 'USD', available: '999850.00', held: '150.00', updated_at: '2026-11-23T09:30:00.000Z' },
      ],
    },
  ),
);
export type BalanceView = Static<typeof Balance>;

export const BalanceList = Type.Array(Balance, {
  description: 'Every currency the organisation has touched, sorted by currency.',
});

const exampleBalanceTransaction = {
  id: 'btx_01JD3V6M2Q8W1X4Y5Z6A7B8C9D',
  currency: 'USD',
  amount: '-150.00',
  balance_after: '999850.00',
  type: 'payout',
  resource_type: 'payout',
  resource_id: 'pyt_01JD3V6M2Q8W1X4Y5Z6A7B8C9E',
  created_at: '2026-11-23T09:30:00.000Z',
};

export const BalanceTransaction = component(
  'BalanceTransaction',
  Type.Object(
    {
      id: Type.String({ description: 'btx_ + ULID.' }),
      currency: CurrencyCode,
      amount: Type.String({ description: 'Signed: negative for money leaving the available balance.' }),
      balance_after: Type.String({ description: 'The available balance after this movement.' }),
      type: StringEnum(TRANSACTION_TYPES),
      resource_type: Type.Union([Type.String(), Type.Null()]),
      resource_id: Type.Union([Type.String(), Type.Null()]),
      created_at: Type.String({ format: 'date-time' }),
    },
    {
      description: 'One movement of the available balance (D21).',
      examples: [exampleBalanceTransaction],
    },
  ),
);
export type BalanceTransactionView = Static<typeof BalanceTransaction>;

export const BALANCE_TRANSACTION_SORT_KEYS = ['id', 'created_at', 'updated_at'] as const;

export const BalanceTransactionSearchBody = component(
  'BalanceTransactionSearchRequest',
  searchBodySchema(
    {
      currency: FilterList(CurrencyCode),
      type: FilterList(StringEnum(TRANSACTION_TYPES)),
      resource_id: FilterList(Type.String({ minLength: 1, maxLength: 64 })),
    },
    BALANCE_TRANSACTION_SORT_KEYS,
    { examples: [{ filters: { currency: ['USD'], type: ['payout', 'payout_reversal'] }, page_size: 50 }] },
  ),
);
export type BalanceTransactionSearchInput = Static<typeof BalanceTransactionSearchBody>;

export const BalanceTransactionPage = component(
  'BalanceTransactionPage',
  pageSchema(BalanceTransaction, {
    examples: [{ items: [exampleBalanceTransaction], total: 1, page: 1, page_size: 50 }],
  }),
);

export const TopUpBody = component(
  'SandboxTopUpRequest',
  Type.Object(
    {
      currency: CurrencyCode,
      amount: Type.String({ maxLength: 40, description: 'Decimal string, at most the currency decimals.' }),
    },
    { additionalProperties: false, examples: [{ currency: 'USD', amount: '2500.00' }] },
  ),
);
export type TopUpInput = Static<typeof TopUpBody>;
