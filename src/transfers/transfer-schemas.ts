// Request and response schemas of transfers (D20).
import { type Static, Type } from '@sinclair/typebox';
import { CurrencyCode } from '../balances/schemas.ts';
import { Deposit, DepositInstructions, Payout } from '../payments/schemas.ts';
import { component } from '../platform/openapi.ts';
import { FilterList, pageSchema, searchBodySchema } from '../platform/search.ts';
import { Nullable, StoredText, StringEnum, Timestamp } from '../webhooks/api-schemas.ts';

export const TRANSFER_STATUSES = [
  'awaiting_deposit',
  'in_review',
  'processing',
  'completed',
  'rejected',
  'cancelled',
  'expired',
  'refunding',
  'refunded',
] as const;
export type TransferStatus = (typeof TRANSFER_STATUSES)[number];
export const FUNDING_METHODS = ['balance', 'bank_transfer', 'crypto'] as const;
export const PURPOSES = ['family_support', 'salary', 'goods', 'services', 'other'] as const;

/** A balance-funded transfer of the Quote example, completed: its payout leg paid the beneficiary. */
const exampleTransfer = {
  id: 'trf_01JD3V6M2Q8W1X4Y5Z6A7B8C9G',
  quote_id: 'qte_01JD3V6M2Q8W1X4Y5Z6A7B8C9D',
  corridor_id: 'cor_0000SANDBX0000000000000001',
  beneficiary_id: 'ben_01JD3V6M2Q8W1X4Y5Z6A7B8C9F',
  external_id: 'order-7781',
  reference: 'Invoice 42',
  purpose: 'services',
  funding_method: 'balance',
  source_currency: 'USD',
  source_amount: '1000.00',
  fee_amount: '6.00',
  rate: '0.91678',
  destination_currency: 'EUR',
  destination_amount: '911.27',
  status: 'completed',
  status_reason: null,
  deposit_instructions: null,
  deposit: null,
  payout: {
    id: 'pyt_01JD3V6M2Q8W1X4Y5Z6A7B8C9H',
    beneficiary_id: 'ben_01JD3V6M2Q8W1X4Y5Z6A7B8C9F',
    currency: 'EUR',
    amount: '911.27',
    reference: 'Invoice 42',
    status: 'completed',
    failure_reason: null,
    transfer_id: 'trf_01JD3V6M2Q8W1X4Y5Z6A7B8C9G',
    external_id: null,
    completed_at: '2026-11-23T09:31:02.100Z',
    processing_at: '2026-11-23T09:31:00.100Z',
    failed_at: null,
    cancelled_at: null,
    returned_at: null,
    created_at: '2026-11-23T09:31:00.000Z',
    updated_at: '2026-11-23T09:31:02.100Z',
  },
  screening_id: 'scr_01JD3V6M2Q8W1X4Y5Z6A7B8C9J',
  expires_at: null,
  created_at: '2026-11-23T09:31:00.000Z',
  updated_at: '2026-11-23T09:31:02.100Z',
  completed_at: '2026-11-23T09:31:02.100Z',
};

export const Transfer = component(
  'Transfer',
  Type.Object(
    {
      id: Type.String({ description: 'trf_ + ULID.' }),
      quote_id: Type.String(),
      corridor_id: Type.String(),
      beneficiary_id: Type.String(),
      external_id: Nullable(Type.String()),
      reference: Nullable(Type.String()),
      purpose: Nullable(StringEnum(PURPOSES)),
      funding_method: StringEnum(FUNDING_METHODS),
      source_currency: CurrencyCode,
      source_amount: Type.String(),
      fee_amount: Type.String(),
      rate: Type.String(),
      destination_currency: CurrencyCode,
      destination_amount: Type.String(),
      status: StringEnum(TRANSFER_STATUSES),
      status_reason: Nullable(Type.String()),
      deposit_instructions: Nullable(DepositInstructions),
      deposit: Nullable(Deposit),
      payout: Nullable(Payout),
      screening_id: Nullable(Type.String()),
      expires_at: Nullable(Timestamp),
      created_at: Timestamp,
      updated_at: Timestamp,
      completed_at: Nullable(Timestamp),
    },
    {
      description:
        'A confirmed quote on its way to the beneficiary (D20). `deposit` and `payout` are null until those ' +
        'legs exist, then as their GETs return them.',
      examples: [exampleTransfer],
    },
  ),
);
export type TransferView = Static<typeof Transfer>;

export const ConfirmBody = component(
  'ConfirmQuoteRequest',
  Type.Object(
    {
      beneficiary_id: Type.String({ maxLength: 64 }),
      funding_method: StringEnum(FUNDING_METHODS),
      network: Type.Optional(
        Type.String({
          maxLength: 32,
          description:
            'Crypto funding: the network of the asset. Default: the first of ethereum, polygon, tron, bitcoin that carries it and is offered.',
        }),
      ),
      reference: Type.Optional(StoredText({ maxLength: 140, description: 'Shown to the beneficiary.' })),
      purpose: Type.Optional(StringEnum(PURPOSES)),
      external_id: Type.Optional(StoredText({ minLength: 1, maxLength: 128 })),
    },
    {
      additionalProperties: false,
      examples: [
        { beneficiary_id: 'ben_01JD3V6M2Q8W1X4Y5Z6A7B8C9F', funding_method: 'balance', purpose: 'services' },
      ],
    },
  ),
);
export type ConfirmInput = Static<typeof ConfirmBody>;

export const TransferIdParams = Type.Object({
  transfer_id: Type.String({ description: 'The transfer id (`trf_...`). A malformed id is 404.' }),
});

export const FundBody = component(
  'SandboxFundTransferRequest',
  Type.Object(
    { amount: Type.Optional(Type.String({ maxLength: 40, description: 'Default: the source amount.' })) },
    { additionalProperties: false, examples: [{ amount: '1000.00' }] },
  ),
);
export type FundInput = Static<typeof FundBody>;

export const TRANSFER_SORT_KEYS = ['id', 'created_at', 'updated_at'] as const;
export const TransferSearchBody = component(
  'TransferSearchRequest',
  searchBodySchema(
    {
      status: FilterList(StringEnum(TRANSFER_STATUSES)),
      beneficiary_id: FilterList(Type.String({ minLength: 1, maxLength: 64 })),
      corridor_id: FilterList(Type.String({ minLength: 1, maxLength: 64 })),
      quote_id: FilterList(Type.String({ minLength: 1, maxLength: 64 })),
      funding_method: FilterList(StringEnum(FUNDING_METHODS)),
      source_currency: FilterList(CurrencyCode),
      destination_currency: FilterList(CurrencyCode),
      external_id: FilterList(Type.String({ minLength: 1, maxLength: 128 })),
    },
    TRANSFER_SORT_KEYS,
    {
      examples: [
        {
          filters: { status: ['completed'], beneficiary_id: ['ben_01JD3V6M2Q8W1X4Y5Z6A7B8C9F'] },
          search: 'Invoice',
          sort_by: 'created_at',
          sort_direction: 'desc',
          page: 1,
          page_size: 20,
        },
      ],
    },
  ),
);
export type TransferSearchInput = Static<typeof TransferSearchBody>;
export const TransferPage = component(
  'TransferPage',
  pageSchema(Transfer, { examples: [{ items: [exampleTransfer], total: 1, page: 1, page_size: 20 }] }),
);
