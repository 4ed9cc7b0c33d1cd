// Request and response schemas of the bank directory (D17, D4 search bodies).
import { type Static, Type } from '@sinclair/typebox';
import { CountryCode } from '../platform/countries.ts';
import { component } from '../platform/openapi.ts';
import { FilterList, pageSchema, searchBodySchema } from '../platform/search.ts';
import { StoredText, StringEnum } from '../webhooks/api-schemas.ts';
import { BANK_CODE_TYPES, BRANCH_CODE_TYPES } from './codes.ts';
import { CODE_TYPES, INVALID_REASONS } from './validation.ts';

const Timestamp = Type.String({ format: 'date-time' });
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

const exampleBank = {
  id: 'bnk_01JD3V6M2Q8W1X4Y5Z6A7B8C9D',
  name: 'Commerzbank',
  country: 'DE',
  bic: 'COBADEFF',
  national_code_type: 'blz',
  national_code: '37040044',
  created_at: '2026-11-22T09:30:00.000Z',
  updated_at: '2026-11-22T09:30:00.000Z',
};

export const Bank = component(
  'Bank',
  Type.Object(
    {
      id: Type.String({ description: '`bnk_` + ULID (D14).' }),
      name: Type.String(),
      country: Type.String({ description: 'ISO 3166-1 alpha-2.' }),
      bic: Nullable(Type.String({ description: 'The BIC8 of the bank (institution, country, location).' })),
      national_code_type: Type.Union([StringEnum(BANK_CODE_TYPES), Type.Null()], {
        description:
          'The scheme of `national_code`: blz (DE), sort_code (GB), aba (US), ifsc (IN: the 4-letter bank part), ' +
          'clabe (MX: the 3-digit bank code), nuban (NG: the 3-digit CBN code), fr_bank (FR: code banque), ' +
          'es_bank (ES: código de entidad).',
      }),
      national_code: Nullable(Type.String()),
      created_at: Timestamp,
      updated_at: Timestamp,
    },
    { description: 'A bank of the directory (D17).', examples: [exampleBank] },
  ),
);
export type BankView = Static<typeof Bank>;

const exampleBranch = {
  id: 'brn_01JD3V6M2Q8W1X4Y5Z6A7B8C9E',
  bank_id: 'bnk_01JD3V6M2Q8W1X4Y5Z6A7B8C9F',
  name: 'Mumbai Main Branch',
  country: 'IN',
  city: 'Mumbai',
  address: 'Horniman Circle, Fort, Mumbai 400001',
  bic: null,
  code_type: 'ifsc',
  code: 'SBIN0000300',
  created_at: '2026-11-22T09:30:00.000Z',
  updated_at: '2026-11-22T09:30:00.000Z',
};

export const Branch = component(
  'Branch',
  Type.Object(
    {
      id: Type.String({ description: '`brn_` + ULID (D14).' }),
      bank_id: Type.String(),
      name: Nullable(
        Type.String({ description: 'null when the source names no branch (the IFSC package import).' }),
      ),
      country: Type.String({ description: 'ISO 3166-1 alpha-2.' }),
      city: Nullable(Type.String()),
      address: Nullable(Type.String()),
      bic: Nullable(Type.String({ description: 'The BIC11 of the branch.' })),
      code_type: Type.Union([StringEnum(BRANCH_CODE_TYPES), Type.Null()], {
        description: 'The scheme of `code`: blz (DE), sort_code (GB), aba (US routing number), ifsc (IN).',
      }),
      code: Nullable(Type.String()),
      created_at: Timestamp,
      updated_at: Timestamp,
    },
    { description: 'A branch (or office) of a bank (D17).', examples: [exampleBranch] },
  ),
);
export type BranchView = Static<typeof Branch>;

export const BANK_SORT_KEYS = ['id', 'created_at', 'updated_at'] as const;
export type BankSortKey = (typeof BANK_SORT_KEYS)[number];

const CodeFilter = FilterList(StoredText({ minLength: 1, maxLength: 34 }));

export const BankSearchBody = component(
  'BankSearchRequest',
  searchBodySchema(
    {
      country: FilterList(CountryCode()),
      bic: FilterList(
        StoredText({
          minLength: 8,
          maxLength: 11,
          description: 'A BIC8, or a BIC11 (its first 8 characters are compared); any case.',
        }),
      ),
      national_code_type: FilterList(StringEnum(BANK_CODE_TYPES)),
      national_code: CodeFilter,
    },
    BANK_SORT_KEYS,
  ),
);
export type BankSearchInput = Static<typeof BankSearchBody>;
export type BankFilters = NonNullable<BankSearchInput['filters']>;

export const BranchSearchBody = component(
  'BranchSearchRequest',
  searchBodySchema(
    {
      bank_id: FilterList(StoredText({ minLength: 1, maxLength: 64 })),
      country: FilterList(CountryCode()),
      city: FilterList(StoredText({ minLength: 1, maxLength: 100, description: 'Exact city, any case.' })),
      code_type: FilterList(StringEnum(BRANCH_CODE_TYPES)),
      code: CodeFilter,
    },
    BANK_SORT_KEYS,
  ),
);
export type BranchSearchInput = Static<typeof BranchSearchBody>;
export type BranchFilters = NonNullable<BranchSearchInput['filters']>;

export const BankPage = component('BankPage', pageSchema(Bank));
export const BranchPage = component('BranchPage', pageSchema(Branch));

export const BankIdParams = Type.Object({
  bank_id: Type.String({ description: 'The bank id (`bnk_...`). A malformed id is 404.' }),
});
export const BranchIdParams = Type.Object({
  branch_id: Type.String({ description: 'The branch id (`brn_...`). A malformed id is 404.' }),
});

export const ValidateBody = component(
  'ValidateBankCodeRequest',
  Type.Object(
    {
      code_type: StringEnum(CODE_TYPES, {
        description: 'iban, bic, aba (US routing number), sort_code (GB), ifsc (IN), clabe (MX), nuban (NG).',
      }),
      code: StoredText({
        minLength: 1,
        maxLength: 64,
        description: 'The code as the customer typed it: spaces and case do not matter.',
      }),
      country: Type.Optional(
        CountryCode(
          'The country the code must belong to; a valid code of another country is reason `country`.',
        ),
      ),
      bank_code: Type.Optional(
        Type.String({
          pattern: '^[0-9]{3}$',
          description: 'Required for `nuban` (and only allowed there): the 3-digit CBN bank code.',
          examples: ['011'],
        }),
      ),
    },
    {
      additionalProperties: false,
      examples: [
        { code_type: 'iban', code: 'DE89 3704 0044 0532 0130 00' },
        { code_type: 'nuban', code: '0000014579', bank_code: '011' },
      ],
    },
  ),
);
export type ValidateInput = Static<typeof ValidateBody>;

export const ValidateResult = component(
  'BankCodeValidation',
  Type.Object(
    {
      valid: Type.Boolean({ description: 'Judged by the code’s own rules only, not by the directory.' }),
      code_type: StringEnum(CODE_TYPES),
      code: Type.String({ description: 'Normalised: upper-case, no spaces (sort codes: no hyphens).' }),
      reason: Type.Union([StringEnum(INVALID_REASONS), Type.Null()], {
        description: 'null when valid; else the first rule broken: format, length, checksum or country.',
      }),
      country: Nullable(Type.String({ description: 'The country the code belongs to, when it can tell.' })),
      bank: Type.Union([Bank, Type.Null()], {
        description:
          'The directory’s bank for a valid code (IBAN: by its national bank code; BIC: by its first 8 characters).',
      }),
      branch: Type.Union([Branch, Type.Null()], {
        description: 'The directory’s branch for a valid code, when the code names one.',
      }),
    },
    {
      examples: [
        {
          valid: true,
          code_type: 'iban',
          code: 'DE89370400440532013000',
          reason: null,
          country: 'DE',
          bank: exampleBank,
          branch: null,
        },
      ],
    },
  ),
);
export type ValidateResultView = Static<typeof ValidateResult>;

export const ImportCounts = Type.Object({
  created: Type.Integer({ minimum: 0 }),
  updated: Type.Integer({ minimum: 0 }),
  unchanged: Type.Integer({ minimum: 0 }),
});

export const ImportResult = component(
  'BankImportResult',
  Type.Object(
    {
      rows: Type.Integer({ minimum: 0, description: 'Data rows read.' }),
      banks: ImportCounts,
      branches: ImportCounts,
    },
    {
      examples: [
        {
          rows: 3,
          banks: { created: 1, updated: 0, unchanged: 0 },
          branches: { created: 2, updated: 0, unchanged: 0 },
        },
      ],
    },
  ),
);
export type ImportResultView = Static<typeof ImportResult>;

export const IfscImportBody = component(
  'IfscImportRequest',
  Type.Object(
    {
      banks: Type.Optional(
        Type.Array(Type.String({ pattern: '^[A-Z]{4}$' }), {
          minItems: 1,
          maxItems: 2000,
          description:
            'Only these IFSC bank codes (e.g. ["SBIN", "HDFC"]); default: every bank the package lists.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
);
export type IfscImportInput = Static<typeof IfscImportBody>;
