// Request and response schemas of beneficiaries (D19, D4, D14). The bodies stay loose where a field set
// decides (the strings of `address` and `account`): the field set of the destination (requirements.ts)
// judges them, so that every refusal names its dotted field (`account.iban`) with the set's own rule.
import { type Static, Type } from '@sinclair/typebox';
import { CurrencyCode } from '../balances/schemas.ts';
import { PAYOUT_METHODS } from '../corridors/schemas.ts';
import { CountryCode } from '../platform/countries.ts';
import { component } from '../platform/openapi.ts';
import { FilterList, pageSchema, searchBodySchema } from '../platform/search.ts';
import { StoredText, StringEnum } from '../webhooks/api-schemas.ts';
import { ACCOUNT_KEYS, ENTITY_TYPES } from './requirements.ts';

export const BENEFICIARY_STATUSES = ['in_review', 'active', 'blocked', 'deleted'] as const;
export type BeneficiaryStatus = (typeof BENEFICIARY_STATUSES)[number];

const Timestamp = Type.String({ format: 'date-time' });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
const NullableString = Type.Union([Type.String(), Type.Null()]);

const exampleBeneficiary = {
  id: 'ben_01JD3V6M2Q8W1X4Y5Z6A7B8C9D',
  entity_type: 'individual',
  name: 'Anna Schmidt',
  destination_country: 'DE',
  destination_currency: 'EUR',
  payout_method: 'bank_account',
  address: { line1: 'Unter den Linden 1', city: 'Berlin', postal_code: '10117', country: 'DE' },
  email: 'anna.schmidt@example.com',
  date_of_birth: '1988-04-02',
  account: { iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' },
  bank: { id: 'bnk_01JD3V6M2Q8W1X4Y5Z6A7B8C9E', name: 'Commerzbank', bic: 'COBADEFF' },
  status: 'active',
  screening_id: 'scr_01JD3V6M2Q8W1X4Y5Z6A7B8C9F',
  external_id: 'vendor-4711',
  created_at: '2026-11-23T09:30:00.000Z',
  updated_at: '2026-11-23T09:30:00.000Z',
  deleted_at: null,
};

export const Address = component(
  'BeneficiaryAddress',
  Type.Object(
    {
      line1: Type.String(),
      city: Type.String(),
      postal_code: NullableString,
      country: Type.String({ description: 'ISO 3166-1 alpha-2.' }),
    },
    { additionalProperties: false },
  ),
);

export const Account = component(
  'BeneficiaryAccount',
  Type.Object(Object.fromEntries(ACCOUNT_KEYS.map((key) => [key, Type.Optional(Type.String())])), {
    additionalProperties: false,
    description:
      "The account fields of the destination's field set (GET /api/v1/beneficiaries/requirements), " +
      'normalised (upper-case, no spaces). Returned in full to the organisation only (and to the operator ' +
      'with a payout to it, each read logged); encrypted at rest.',
  }),
);

export const BankRef = Type.Union(
  [
    Type.Object({
      id: Type.String({ description: '`bnk_` id of the bank directory (GET /api/v1/banks/{id}).' }),
      name: Type.String(),
      bic: NullableString,
    }),
    Type.Null(),
  ],
  { description: 'The bank the directory knows for the account, or null.' },
);

export const Beneficiary = component(
  'Beneficiary',
  Type.Object(
    {
      id: Type.String({ description: '`ben_` + ULID (D14).' }),
      entity_type: StringEnum(ENTITY_TYPES),
      name: Type.String(),
      destination_country: Type.String(),
      destination_currency: Type.String(),
      payout_method: StringEnum(PAYOUT_METHODS),
      address: Address,
      email: NullableString,
      date_of_birth: Type.Union([Type.String({ format: 'date' }), Type.Null()]),
      account: Account,
      bank: BankRef,
      status: StringEnum(BENEFICIARY_STATUSES, {
        description:
          'in_review: the name hit a sanctions list and waits for the operator. active: can be paid. blocked: ' +
          'the hit was confirmed. deleted: removed by the organisation (D19).',
      }),
      screening_id: Type.String({ description: 'The latest sanctions screening of the name (`scr_`).' }),
      external_id: NullableString,
      created_at: Timestamp,
      updated_at: Timestamp,
      deleted_at: NullableTimestamp,
    },
    { description: 'Who a payout goes to (D19).', examples: [exampleBeneficiary] },
  ),
);
export type BeneficiaryView = Static<typeof Beneficiary>;

/** Strings judged by the field set; the bound only keeps absurd bodies out. */
const Loose = (description: string) => Type.String({ maxLength: 1000, description });
const LooseObject = (description: string) =>
  Type.Record(Type.String(), Type.String({ maxLength: 1000 }), { description });

const fieldsDescription =
  "The fields of the destination's field set as GET /api/v1/beneficiaries/requirements lists them.";

export const CreateBeneficiaryBody = component(
  'CreateBeneficiaryRequest',
  Type.Object(
    {
      destination_country: Loose('ISO 3166-1 alpha-2 country the account is in.'),
      destination_currency: Loose('ISO 4217 currency the beneficiary is paid in.'),
      payout_method: Loose('`bank_account` or `mobile_wallet`.'),
      entity_type: Loose('`individual` or `business`.'),
      name: Loose('2 to 140 characters.'),
      address: LooseObject('`line1`, `city`, `postal_code` (optional), `country`.'),
      account: LooseObject(fieldsDescription),
      email: Type.Optional(Loose('Optional.')),
      date_of_birth: Type.Optional(Loose('Optional, individuals only: YYYY-MM-DD.')),
      external_id: Type.Optional(StoredText({ minLength: 1, maxLength: 128 })),
    },
    {
      additionalProperties: false,
      examples: [
        {
          destination_country: 'DE',
          destination_currency: 'EUR',
          payout_method: 'bank_account',
          entity_type: 'individual',
          name: 'Anna Schmidt',
          address: { line1: 'Unter den Linden 1', city: 'Berlin', postal_code: '10117', country: 'DE' },
          account: { iban: 'DE89 3704 0044 0532 0130 00' },
          external_id: 'vendor-4711',
        },
      ],
    },
  ),
);
export type CreateBeneficiaryInput = Static<typeof CreateBeneficiaryBody>;

export const UpdateBeneficiaryBody = component(
  'UpdateBeneficiaryRequest',
  Type.Object(
    {
      name: Type.Optional(Loose('A new name is screened again.')),
      address: Type.Optional(LooseObject('Replaces the address as a whole.')),
      email: Type.Optional(Type.Union([Loose('null removes it.'), Type.Null()])),
      date_of_birth: Type.Optional(Type.Union([Loose('null removes it.'), Type.Null()])),
      account: Type.Optional(
        LooseObject('Replaces the account as a whole: every required field of the field set again.'),
      ),
    },
    { additionalProperties: false, examples: [{ name: 'Anna Schmidt-Weber' }] },
  ),
);
export type UpdateBeneficiaryInput = Static<typeof UpdateBeneficiaryBody>;

export const BENEFICIARY_SORT_KEYS = ['id', 'created_at', 'updated_at'] as const;
export type BeneficiarySortKey = (typeof BENEFICIARY_SORT_KEYS)[number];

export const BeneficiarySearchBody = component(
  'BeneficiarySearchRequest',
  searchBodySchema(
    {
      status: FilterList(StringEnum(BENEFICIARY_STATUSES)),
      destination_country: FilterList(CountryCode()),
      destination_currency: FilterList(CurrencyCode),
      payout_method: FilterList(StringEnum(PAYOUT_METHODS)),
      entity_type: FilterList(StringEnum(ENTITY_TYPES)),
      external_id: FilterList(StoredText({ maxLength: 128 })),
    },
    BENEFICIARY_SORT_KEYS,
    {
      examples: [
        { filters: { status: ['active'], destination_country: ['DE'] }, search: 'schmidt', page_size: 20 },
      ],
    },
  ),
);
export type BeneficiarySearchInput = Static<typeof BeneficiarySearchBody>;
export type BeneficiaryFilters = NonNullable<BeneficiarySearchInput['filters']>;

export const BeneficiaryPage = component(
  'BeneficiaryPage',
  pageSchema(Beneficiary, { examples: [{ items: [exampleBeneficiary], total: 1, page: 1, page_size: 20 }] }),
);

export const BeneficiaryIdParams = Type.Object({
  beneficiary_id: Type.String({
    description: 'The beneficiary id (`ben_...`). A malformed id is 404.',
    examples: [exampleBeneficiary.id],
  }),
});

export const RequirementsQuery = Type.Object(
  {
    destination_country: Type.String({ maxLength: 16, examples: ['DE'] }),
    destination_currency: Type.String({ maxLength: 16, examples: ['EUR'] }),
    payout_method: Type.String({ maxLength: 32, examples: ['bank_account'] }),
  },
  { additionalProperties: false },
);
export type RequirementsQueryInput = Static<typeof RequirementsQuery>;

export const RequirementField = component(
  'BeneficiaryRequirementField',
  Type.Object({
    name: Type.String({ description: 'Dotted path in the create body (`account.iban`).' }),
    required: Type.Boolean(),
    type: StringEnum(['string', 'date', 'email'] as const),
    pattern: Type.Optional(Type.String({ description: 'Matched after normalisation (see description).' })),
    min_length: Type.Optional(Type.Integer()),
    max_length: Type.Optional(Type.Integer()),
    allowed_values: Type.Optional(Type.Array(Type.String())),
    // Always present. Declared optional only because the serializer writes required keys first, and D19
    // lists the description last.
    description: Type.Optional(Type.String()),
  }),
);

export const Requirements = component(
  'BeneficiaryRequirements',
  Type.Object(
    {
      destination_country: Type.String(),
      destination_currency: Type.String(),
      payout_method: StringEnum(PAYOUT_METHODS),
      entity_types: Type.Array(StringEnum(ENTITY_TYPES)),
      fields: Type.Array(RequirementField),
    },
    {
      description: 'What a beneficiary of this destination needs (D19), as create and update check it.',
    },
  ),
);
export type RequirementsView = Static<typeof Requirements>;
