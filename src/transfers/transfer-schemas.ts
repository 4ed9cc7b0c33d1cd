// Request and response schemas of transfers (D20).
import { type Static, Type } from '@sinclair/typebox';
import { CurrencyCode } from '../balances/schemas.ts';
import { Deposit, Payout } from '../payments/schemas.ts';
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
      deposit_instructions: Nullable(Type.Object({}, { additionalProperties: true })),
      deposit: Nullable(Deposit),
      payout: Nullable(Payout),
      screening_id: Nullable(Type.String()),
      expires_at: Timestamp,
      created_at: Timestamp,
      updated_at: Timestamp,
      completed_at: Nullable(Timestamp),
    },
    {
      description:
        'A confirmed quote on its way to the beneficiary (D20). `deposit` and `payout` are null until those ' +
        'legs exist, then as their GETs return them.',
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
        Type.String({ maxLength: 32, description: 'Crypto funding: the network of the asset.' }),
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

export const TransferIdParams = Type.Object({ transfer_id: Type.String({ maxLength: 64 }) });

export const FundBody = component(
  'SandboxFundTransferRequest',
  Type.Object(
    { amount: Type.Optional(Type.String({ maxLength: 40, description: 'Default: the source amount.' })) },
    { additionalProperties: false },
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
  ),
);
export type TransferSearchInput = Static<typeof TransferSearchBody>;
export const TransferPage = component('TransferPage', pageSchema(Transfer));
