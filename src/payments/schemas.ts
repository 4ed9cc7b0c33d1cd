// Request and response schemas of deposits and payouts (D21) and their simulations (D24).
import { type Static, type TProperties, Type } from '@sinclair/typebox';
import { CurrencyCode } from '../balances/schemas.ts';
import { component } from '../platform/openapi.ts';
import { FilterList, pageSchema, searchBodySchema } from '../platform/search.ts';
import { Nullable, StoredText, StringEnum, Timestamp } from '../webhooks/api-schemas.ts';

const Amount = (description: string) => Type.String({ maxLength: 40, description });
const ExternalId = StoredText({
  minLength: 1,
  maxLength: 128,
  description: 'Your own id, unique per organisation among these resources (a second one is 409).',
});

export const DEPOSIT_STATUSES = ['pending', 'detected', 'received', 'expired', 'failed', 'reversed'] as const;
export const DEPOSIT_METHODS = ['bank_transfer', 'crypto'] as const;
export const PAYOUT_STATUSES = [
  'pending',
  'processing',
  'completed',
  'failed',
  'cancelled',
  'returned',
] as const;
export const FAILURE_REASONS = [
  'account_closed',
  'invalid_account',
  'rejected_by_bank',
  'returned',
  'compliance',
] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

/**
 * Bank-transfer instructions in D20's order, one schema per kind of account (an IBAN, or an account number
 * with its routing code), every key required: the serializer writes a schema's required keys before its
 * optional ones, so one schema with optional account keys would move them after `reference`.
 */
const bankTransferInstructions = (name: string, account: TProperties) =>
  component(
    name,
    Type.Object(
      {
        type: Type.Literal('bank_transfer'),
        currency: CurrencyCode,
        amount: Nullable(
          Type.String({ description: 'The amount to send; null when the deposit expects none.' }),
        ),
        account_holder: Type.String(),
        bank_name: Type.String(),
        ...account,
        bic: Type.String(),
        reference: Type.String({
          description: 'The payer must quote it: it matches the payment to this deposit.',
        }),
      },
      { description: 'Where and how to pay: the payer quotes `reference`.' },
    ),
  );
export const IbanTransferInstructions = bankTransferInstructions('BankTransferInstructionsIban', {
  iban: Type.String(),
});
export const AccountNumberTransferInstructions = bankTransferInstructions(
  'BankTransferInstructionsAccountNumber',
  {
    account_number: Type.String(),
    routing_code: Type.String({ description: 'Sort code, ABA routing number, ...' }),
  },
);

export const CryptoInstructions = component(
  'CryptoDepositInstructions',
  Type.Object({
    type: Type.Literal('crypto'),
    network: Type.String(),
    asset: Type.String(),
    amount: Nullable(Type.String()),
    address: Type.String(),
  }),
);

export const DepositInstructions = component(
  'DepositInstructions',
  Type.Union([IbanTransferInstructions, AccountNumberTransferInstructions, CryptoInstructions], {
    description: 'How to pay the deposit: `type` tells a bank transfer from a crypto address.',
  }),
);

const exampleDeposit = {
  id: 'dep_01JD3V6M2Q8W1X4Y5Z6A7B8C9D',
  method: 'bank_transfer',
  currency: 'EUR',
  expected_amount: '2500.00',
  received_amount: null,
  status: 'pending',
  instructions: {
    type: 'bank_transfer',
    currency: 'EUR',
    amount: '2500.00',
    account_holder: 'Payment Service Sandbox Ltd',
    bank_name: 'Commerzbank',
    iban: 'DE89370400440532013000',
    bic: 'COBADEFFXXX',
    reference: 'PSD7K2M9QX4TA',
  },
  transfer_id: null,
  tx_hash: null,
  confirmations: null,
  external_id: 'invoice-2026-0042',
  expires_at: '2026-11-24T09:30:00.000Z',
  detected_at: null,
  received_at: null,
  network: null,
  failure_reason: null,
  failed_at: null,
  reversed_at: null,
  created_at: '2026-11-23T09:30:00.000Z',
  updated_at: '2026-11-23T09:30:00.000Z',
};

export const Deposit = component(
  'Deposit',
  Type.Object(
    {
      id: Type.String({ description: 'dep_ + ULID.' }),
      method: StringEnum(DEPOSIT_METHODS),
      currency: CurrencyCode,
      expected_amount: Nullable(Type.String()),
      received_amount: Nullable(Type.String()),
      status: StringEnum(DEPOSIT_STATUSES),
      instructions: DepositInstructions,
      transfer_id: Nullable(Type.String()),
      tx_hash: Nullable(Type.String()),
      confirmations: Nullable(Type.Integer()),
      external_id: Nullable(Type.String()),
      expires_at: Nullable(Timestamp),
      detected_at: Nullable(Timestamp),
      received_at: Nullable(Timestamp),
      network: Nullable(Type.String()),
      failure_reason: Nullable(Type.String()),
      failed_at: Nullable(Timestamp),
      reversed_at: Nullable(Timestamp),
      created_at: Timestamp,
      updated_at: Timestamp,
    },
    {
      description: 'Money coming in (D21): pending until it arrives; received credits the available balance.',
      examples: [exampleDeposit],
    },
  ),
);
export type DepositView = Static<typeof Deposit>;

export const CreateDepositBody = component(
  'CreateDepositRequest',
  Type.Object(
    {
      currency: CurrencyCode,
      method: StringEnum(DEPOSIT_METHODS),
      expected_amount: Type.Optional(Amount('What you expect to receive, in the currency decimals.')),
      network: Type.Optional(
        Type.String({
          maxLength: 32,
          description:
            'Crypto deposits: the network. Default: the first of ethereum, polygon, tron, bitcoin that carries the currency and is offered.',
        }),
      ),
      external_id: Type.Optional(ExternalId),
    },
    {
      additionalProperties: false,
      examples: [{ currency: 'EUR', method: 'bank_transfer', expected_amount: '2500.00' }],
    },
  ),
);
export type CreateDepositInput = Static<typeof CreateDepositBody>;

export const DepositIdParams = Type.Object({
  deposit_id: Type.String({ description: 'The deposit id (`dep_...`). A malformed id is 404.' }),
});
export const DepositReferenceParams = Type.Object({
  reference: Type.String({
    minLength: 1,
    description:
      "The payer's reference, as written (capitals and spaces do not count). An unknown one is 404.",
  }),
});
export const PayoutIdParams = Type.Object({
  payout_id: Type.String({ description: 'The payout id (`pyt_...`). A malformed id is 404.' }),
});

export const ReceiveDepositBody = component(
  'ReceiveDepositRequest',
  Type.Object(
    {
      amount: Amount('The amount that arrived.'),
      reference: Type.Optional(
        StoredText({
          maxLength: 140,
          description:
            "The reference the payer quoted; given, it must be the deposit's own (capitals and spaces aside), else 422.",
        }),
      ),
      bank_transaction_id: Type.Optional(
        StoredText({
          minLength: 1,
          maxLength: 140,
          description:
            "The bank's id of the payment (from the collection account's statement), unique per currency: a " +
            'payment is recorded once by it (a repeat answers the deposit that recorded it). Needed to record a ' +
            'payment quoting the reference of a deposit that no longer waits; recommended on every record.',
        }),
      ),
      further_payment: Type.Optional(
        Type.Boolean({
          description:
            'true: this is another payment, not a retry of the record that credited the deposit. Needed only ' +
            'for a payment quoting the reference of a deposit that was credited without bank_transaction_id ' +
            '(409 without it), since nothing else tells the two apart.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
);
export type ReceiveDepositInput = Static<typeof ReceiveDepositBody>;

export const SandboxReceiveBody = component(
  'SandboxReceiveDepositRequest',
  Type.Object(
    { amount: Type.Optional(Amount('Default: the expected amount.')) },
    { additionalProperties: false, examples: [{ amount: '2500.00' }] },
  ),
);
export type SandboxReceiveInput = Static<typeof SandboxReceiveBody>;

export const FailDepositBody = component(
  'FailDepositRequest',
  Type.Object(
    { failure_reason: Type.Optional(StoredText({ minLength: 1, maxLength: 200 })) },
    { additionalProperties: false },
  ),
);

export const DEPOSIT_SORT_KEYS = ['id', 'created_at', 'updated_at'] as const;
export const DepositSearchBody = component(
  'DepositSearchRequest',
  searchBodySchema(
    {
      status: FilterList(StringEnum(DEPOSIT_STATUSES)),
      method: FilterList(StringEnum(DEPOSIT_METHODS)),
      currency: FilterList(CurrencyCode),
      transfer_id: FilterList(Type.String({ minLength: 1, maxLength: 64 })),
      external_id: FilterList(Type.String({ minLength: 1, maxLength: 128 })),
    },
    DEPOSIT_SORT_KEYS,
    { examples: [{ filters: { status: ['pending'], currency: ['EUR'] }, page_size: 20 }] },
  ),
);
export type DepositSearchInput = Static<typeof DepositSearchBody>;
export const DepositPage = component(
  'DepositPage',
  pageSchema(Deposit, { examples: [{ items: [exampleDeposit], total: 1, page: 1, page_size: 20 }] }),
);

const examplePayout = {
  id: 'pyt_01JD3V6M2Q8W1X4Y5Z6A7B8C9E',
  beneficiary_id: 'ben_01JD3V6M2Q8W1X4Y5Z6A7B8C9F',
  currency: 'EUR',
  amount: '150.00',
  reference: 'Invoice 42',
  status: 'completed',
  failure_reason: null,
  transfer_id: null,
  external_id: null,
  completed_at: '2026-11-23T09:30:02.100Z',
  processing_at: '2026-11-23T09:30:00.100Z',
  failed_at: null,
  cancelled_at: null,
  returned_at: null,
  created_at: '2026-11-23T09:30:00.000Z',
  updated_at: '2026-11-23T09:30:02.100Z',
};

export const Payout = component(
  'Payout',
  Type.Object(
    {
      id: Type.String({ description: 'pyt_ + ULID.' }),
      beneficiary_id: Type.String(),
      currency: CurrencyCode,
      amount: Type.String(),
      reference: Nullable(Type.String()),
      status: StringEnum(PAYOUT_STATUSES),
      failure_reason: Nullable(StringEnum(FAILURE_REASONS)),
      transfer_id: Nullable(Type.String()),
      external_id: Nullable(Type.String()),
      completed_at: Nullable(Timestamp),
      processing_at: Nullable(Timestamp),
      failed_at: Nullable(Timestamp),
      cancelled_at: Nullable(Timestamp),
      returned_at: Nullable(Timestamp),
      created_at: Timestamp,
      updated_at: Timestamp,
    },
    {
      description:
        'Money going out to a beneficiary (D21): debited from the available balance at once, credited back ' +
        'if it fails, is cancelled or is returned.',
      examples: [examplePayout],
    },
  ),
);
export type PayoutView = Static<typeof Payout>;

export const CreatePayoutBody = component(
  'CreatePayoutRequest',
  Type.Object(
    {
      beneficiary_id: Type.String({ maxLength: 64 }),
      currency: CurrencyCode,
      amount: Amount('In the currency decimals, greater than zero.'),
      reference: Type.Optional(StoredText({ maxLength: 140, description: 'Shown to the beneficiary.' })),
      external_id: Type.Optional(ExternalId),
    },
    {
      additionalProperties: false,
      examples: [
        {
          beneficiary_id: 'ben_01JD3V6M2Q8W1X4Y5Z6A7B8C9F',
          currency: 'EUR',
          amount: '150.00',
          reference: 'Invoice 42',
          external_id: 'payout-2026-0042',
        },
      ],
    },
  ),
);
export type CreatePayoutInput = Static<typeof CreatePayoutBody>;

export const FailPayoutBody = component(
  'SettlePayoutRequest',
  Type.Object(
    { failure_reason: Type.Optional(StringEnum(FAILURE_REASONS)) },
    { additionalProperties: false, examples: [{ failure_reason: 'account_closed' }] },
  ),
);
export type FailPayoutInput = Static<typeof FailPayoutBody>;

/** The operator's record of a payout the bank refused (D21): the reason is required. */
export const OperatorFailPayoutBody = component(
  'OperatorFailPayoutRequest',
  Type.Object(
    { failure_reason: StringEnum(FAILURE_REASONS) },
    { additionalProperties: false, examples: [{ failure_reason: 'account_closed' }] },
  ),
);

export const PAYOUT_SORT_KEYS = ['id', 'created_at', 'updated_at'] as const;
export const PayoutSearchBody = component(
  'PayoutSearchRequest',
  searchBodySchema(
    {
      status: FilterList(StringEnum(PAYOUT_STATUSES)),
      beneficiary_id: FilterList(Type.String({ minLength: 1, maxLength: 64 })),
      currency: FilterList(CurrencyCode),
      transfer_id: FilterList(Type.String({ minLength: 1, maxLength: 64 })),
      external_id: FilterList(Type.String({ minLength: 1, maxLength: 128 })),
    },
    PAYOUT_SORT_KEYS,
    {
      examples: [
        {
          filters: { status: ['completed'], beneficiary_id: ['ben_01JD3V6M2Q8W1X4Y5Z6A7B8C9F'] },
          sort_by: 'created_at',
          sort_direction: 'desc',
        },
      ],
    },
  ),
);
export type PayoutSearchInput = Static<typeof PayoutSearchBody>;
export const PayoutPage = component(
  'PayoutPage',
  pageSchema(Payout, { examples: [{ items: [examplePayout], total: 1, page: 1, page_size: 20 }] }),
);

const exampleDestination = {
  payout_id: 'pyt_01JD3V6M2Q8W1X4Y5Z6A7B8C9E',
  status: 'processing',
  currency: 'EUR',
  amount: '150.00',
  reference: 'Invoice 42',
  beneficiary: {
    id: 'ben_01JD3V6M2Q8W1X4Y5Z6A7B8C9F',
    status: 'active',
    blocked: false,
    review_pending: false,
    entity_type: 'individual',
    name: 'Anna Schmidt',
    address: { line1: 'Unter den Linden 1', city: 'Berlin', postal_code: '10117', country: 'DE' },
    destination_country: 'DE',
    destination_currency: 'EUR',
    payout_method: 'bank_account',
    account: { iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' },
    bank: { id: 'bnk_01JD3V6M2Q8W1X4Y5Z6A7B8C9G', name: 'Commerzbank', bic: 'COBADEFF' },
  },
};

// The beneficiary part repeats the shape of GET /api/v1/beneficiaries/{id} field by field: payments reach
// beneficiaries only through the area boundary (Area.payoutDestination), never through their modules.
export const PayoutDestination = component(
  'PayoutDestination',
  Type.Object(
    {
      payout_id: Type.String({ description: 'pyt_ + ULID.' }),
      status: StringEnum(PAYOUT_STATUSES),
      currency: CurrencyCode,
      amount: Type.String({ description: 'The amount to pay, in the currency decimals.' }),
      reference: Nullable(
        Type.String({ description: 'The reference the bank transfer carries to the beneficiary.' }),
      ),
      beneficiary: Type.Object({
        id: Type.String({ description: 'ben_ + ULID.' }),
        status: Type.String({
          description:
            'active; deleted: deleted after the payout was made, which is still paid (D19, D20); in_review or ' +
            'blocked: a new name hit the sanctions list after the payout was made.',
        }),
        blocked: Type.Boolean({
          description:
            'A sanctions review confirmed the name as a match (status blocked, or deleted since): do not pay; ' +
            'fail the payout with compliance.',
        }),
        review_pending: Type.Boolean({
          description:
            'The name waits for its sanctions review (status in_review, or deleted while it waited): do not pay ' +
            'before the review.',
        }),
        entity_type: StringEnum(['individual', 'business']),
        name: Type.String(),
        address: Type.Object({
          line1: Type.String(),
          city: Type.String(),
          postal_code: Nullable(Type.String()),
          country: Type.String({ description: 'ISO 3166-1 alpha-2.' }),
        }),
        destination_country: Type.String(),
        destination_currency: CurrencyCode,
        payout_method: StringEnum(['bank_account', 'mobile_wallet']),
        account: Type.Record(Type.String(), Type.String(), {
          description:
            'The account, in clear, exactly as GET /api/v1/beneficiaries/{beneficiary_id} answers it ' +
            '(BeneficiaryAccount): iban and bic, account_number with sort_code or routing_number and ' +
            "account_type, clabe, mobile_number and provider, ... as the destination's field set has them.",
        }),
        bank: Nullable(
          Type.Object(
            { id: Type.String(), name: Type.String(), bic: Nullable(Type.String()) },
            { description: 'The bank the directory knows for the account.' },
          ),
        ),
      }),
    },
    {
      description:
        'Where to pay a payout by hand (manual rail, D21): its amount and reference and its beneficiary with ' +
        'the account opened from its seal (D13).',
      examples: [exampleDestination],
    },
  ),
);
export type PayoutDestinationView = Static<typeof PayoutDestination>;
