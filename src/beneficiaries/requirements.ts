// The field sets of D19: one definition per destination country and payout method. The same definition
// answers GET /api/v1/beneficiaries/requirements (its public part) and validates every create and update
// (validation.ts reads the same specs), so what the endpoint announces and what the API accepts cannot
// disagree. A field with a `code` is also judged by the banks area's validator of that code type (check
// digits, the code's country) and looked up in the bank directory.
import { countrySpecs } from 'ibantools';
import type { CodeType } from '../banks/validation.ts';
import type { PayoutMethod } from '../corridors/schemas.ts';
import { ownEntry } from '../platform/lookup.ts';

export const ENTITY_TYPES = ['individual', 'business'] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

/** How a value is written before it is judged and stored. */
export type Normalisation =
  /** Leading and trailing spaces removed. */
  | 'trim'
  /** Spaces removed, letters upper-cased (IBAN, BIC, IFSC). */
  | 'code'
  /** Spaces and hyphens removed (account numbers, sort codes, routing numbers, CLABEs). */
  | 'digits'
  /** Spaces, hyphens and parentheses removed (`+254 712-345 678` -> `+254712345678`). */
  | 'phone'
  /** Taken as it is (enumerations). */
  | 'none';

/** The public part of a field: what the requirements endpoint answers (D19). */
export interface PublicField {
  /** Dotted path in the create body: `name`, `address.city`, `account.iban`. */
  name: string;
  required: boolean;
  /** `string`, `date` (YYYY-MM-DD) or `email`. */
  type: 'string' | 'date' | 'email';
  /** A regular expression the value matches after normalisation. */
  pattern?: string;
  min_length?: number;
  max_length?: number;
  allowed_values?: string[];
  description: string;
}

export interface FieldSpec extends Omit<PublicField, 'allowed_values'> {
  allowed_values?: readonly string[];
  normalise: Normalisation;
  /** A code the banks area judges (checksum and country) and looks up in the directory. */
  code?: CodeType;
  /** The account identifier a payout rail needs (the payout destination, D21). */
  identifier?: true;
  /** For `nuban`: the account field holding the 3-digit CBN bank code the check digit covers. */
  bankCodeField?: string;
  /** Only an individual may have it (a date of birth). */
  individualOnly?: true;
  /** An ISO 3166-1 alpha-2 country code. */
  country?: true;
}

/** One field set: the account fields of a country (or of the SEPA countries) for one payout method. */
export interface FieldSet {
  /** Names the set in messages and docs: `SEPA`, `GB`, `US`, ... */
  label: string;
  payoutMethod: PayoutMethod;
  account: readonly FieldSpec[];
}

/**
 * Text a bank file or a payout rail takes as it is: no control characters (line breaks included) and no
 * bidirectional controls, which would show a name other than the one stored.
 */
const NAME_PATTERN = '^[^\\u0000-\\u001F\\u007F-\\u009F\\u202A-\\u202E\\u2066-\\u2069]*$';
const EMAIL_PATTERN = '^[^\\s@\\u0000]+@[^\\s@\\u0000]+\\.[^\\s@\\u0000]+$';

/** The fields every beneficiary has, whatever its field set (D19). */
export const COMMON_FIELDS: readonly FieldSpec[] = [
  {
    name: 'entity_type',
    required: true,
    type: 'string',
    allowed_values: ENTITY_TYPES,
    normalise: 'none',
    description:
      'Who is paid: a person (`individual`) or a company (`business`, screened as an organisation).',
  },
  {
    name: 'name',
    required: true,
    type: 'string',
    min_length: 2,
    max_length: 140,
    pattern: NAME_PATTERN,
    normalise: 'trim',
    description:
      "The account holder's full name as the bank knows it; screened against the sanctions lists on create " +
      'and on every change.',
  },
  {
    name: 'address.line1',
    required: true,
    type: 'string',
    min_length: 1,
    max_length: 200,
    pattern: NAME_PATTERN,
    normalise: 'trim',
    description: 'Street and number.',
  },
  {
    name: 'address.city',
    required: true,
    type: 'string',
    min_length: 1,
    max_length: 100,
    pattern: NAME_PATTERN,
    normalise: 'trim',
    description: 'City or town.',
  },
  {
    name: 'address.postal_code',
    required: false,
    type: 'string',
    min_length: 1,
    max_length: 20,
    pattern: NAME_PATTERN,
    normalise: 'trim',
    description: 'Postal code, where the country has them.',
  },
  {
    name: 'address.country',
    required: true,
    type: 'string',
    pattern: '^[A-Z]{2}$',
    min_length: 2,
    max_length: 2,
    normalise: 'none',
    country: true,
    description: 'ISO 3166-1 alpha-2 country of the address (it may differ from the destination country).',
  },
  {
    name: 'date_of_birth',
    required: false,
    type: 'date',
    pattern: '^\\d{4}-\\d{2}-\\d{2}$',
    min_length: 10,
    max_length: 10,
    normalise: 'none',
    individualOnly: true,
    description: 'Individuals only: YYYY-MM-DD, a real date after 1850 and not in the future.',
  },
  {
    name: 'email',
    required: false,
    type: 'email',
    pattern: EMAIL_PATTERN,
    max_length: 254,
    normalise: 'trim',
    description: "The beneficiary's email address.",
  },
];

const digits = (name: string, min: number, max: number, description: string, identifier = false) =>
  ({
    name,
    required: true,
    type: 'string',
    pattern: min === max ? `^[0-9]{${min}}$` : `^[0-9]{${min},${max}}$`,
    min_length: min,
    max_length: max,
    normalise: 'digits',
    ...(identifier ? { identifier: true as const } : {}),
    description,
  }) satisfies FieldSpec;

const BIC_PATTERN = '^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$';

const bic = (required: boolean, country: string): FieldSpec => ({
  name: 'account.bic',
  required,
  type: 'string',
  pattern: BIC_PATTERN,
  min_length: 8,
  max_length: 11,
  normalise: 'code',
  code: 'bic',
  description: `The bank's BIC (SWIFT code, 8 or 11 characters) of a bank in ${country}.`,
});

/** The IBAN of one SEPA country: its length and BBAN format from the SWIFT IBAN registry (`ibantools`). */
function sepaFields(country: string): FieldSpec[] {
  const spec = countrySpecs[country]!;
  const bban = spec.bban_regexp!.replace(/^\^/, '').replace(/\$$/, '');
  return [
    {
      name: 'account.iban',
      required: true,
      type: 'string',
      pattern: `^${country}[0-9]{2}${bban}$`,
      min_length: spec.chars!,
      max_length: spec.chars!,
      normalise: 'code',
      code: 'iban',
      identifier: true,
      description:
        `The IBAN, of ${country} (${spec.chars} characters, ISO 13616 check digits); spaces are removed and ` +
        'letters upper-cased before it is checked.',
    },
    bic(false, country),
  ];
}

/** The field sets with a country of their own (D19); every other SEPA country takes `sepaFields`. */
const NATIONAL_SETS: Readonly<Record<string, FieldSet>> = {
  GB: {
    label: 'GB',
    payoutMethod: 'bank_account',
    account: [
      digits('account.account_number', 8, 8, 'The UK account number: 8 digits.', true),
      {
        ...digits('account.sort_code', 6, 6, 'The sort code: 6 digits (`60-16-13` is accepted).'),
        code: 'sort_code',
      },
    ],
  },
  US: {
    label: 'US',
    payoutMethod: 'bank_account',
    account: [
      digits('account.account_number', 4, 17, 'The US account number: 4 to 17 digits.', true),
      {
        ...digits(
          'account.routing_number',
          9,
          9,
          'The ABA routing transit number: 9 digits with the 3-7-1 check digit.',
        ),
        code: 'aba',
      },
      {
        name: 'account.account_type',
        required: true,
        type: 'string',
        allowed_values: ['checking', 'savings'],
        normalise: 'none',
        description: 'The kind of account.',
      },
    ],
  },
  IN: {
    label: 'IN',
    payoutMethod: 'bank_account',
    account: [
      digits('account.account_number', 9, 18, 'The Indian account number: 9 to 18 digits.', true),
      {
        name: 'account.ifsc',
        required: true,
        type: 'string',
        pattern: '^[A-Z]{4}0[A-Z0-9]{6}$',
        min_length: 11,
        max_length: 11,
        normalise: 'code',
        code: 'ifsc',
        description:
          "The branch's IFSC (RBI): 4 letters of the bank, `0`, 6 letters or digits of the branch.",
      },
    ],
  },
  MX: {
    label: 'MX',
    payoutMethod: 'bank_account',
    account: [
      {
        ...digits(
          'account.clabe',
          18,
          18,
          'The CLABE: 18 digits (bank, plaza, account, control digit with weights 3-7-1).',
          true,
        ),
        code: 'clabe',
      },
    ],
  },
  NG: {
    label: 'NG',
    payoutMethod: 'bank_account',
    account: [
      digits('account.bank_code', 3, 3, "The bank's 3-digit CBN code (for example `011`, First Bank)."),
      {
        ...digits(
          'account.account_number',
          10,
          10,
          'The NUBAN: 10 digits whose last is the CBN check digit over the bank code and the serial.',
          true,
        ),
        code: 'nuban',
        bankCodeField: 'account.bank_code',
      },
    ],
  },
  PH: {
    label: 'PH',
    payoutMethod: 'bank_account',
    account: [
      digits('account.account_number', 10, 16, 'The Philippine account number: 10 to 16 digits.', true),
      bic(true, 'PH'),
    ],
  },
  KE: {
    label: 'KE',
    payoutMethod: 'mobile_wallet',
    account: [
      {
        name: 'account.mobile_number',
        required: true,
        type: 'string',
        pattern: '^\\+254[0-9]{9}$',
        min_length: 13,
        max_length: 13,
        normalise: 'phone',
        identifier: true,
        description: "The wallet's mobile number in E.164: `+254` and 9 digits (spaces and hyphens removed).",
      },
      {
        name: 'account.provider',
        required: true,
        type: 'string',
        allowed_values: ['mpesa', 'airtel'],
        normalise: 'none',
        description: 'The mobile money provider.',
      },
    ],
  },
};

/** SEPA countries: those the SWIFT IBAN registry (as `ibantools` ships it) marks as in the SEPA scheme. */
export const isSepaCountry = (country: string): boolean => countrySpecs[country]?.SEPA === true;

/**
 * The field set of a destination country and payout method, or undefined when D19 defines none: a country
 * with a set of its own, otherwise a SEPA country paid to a bank account (its IBAN).
 */
export function fieldSetFor(country: string, payoutMethod: string): FieldSet | undefined {
  const national = ownEntry(NATIONAL_SETS, country);
  if (national) return national.payoutMethod === payoutMethod ? national : undefined;
  if (payoutMethod === 'bank_account' && isSepaCountry(country)) {
    return { label: 'SEPA', payoutMethod: 'bank_account', account: sepaFields(country) };
  }
  return undefined;
}

/** Every field of a set, in the order they are checked: the common fields, then the account's. */
export const allFields = (set: FieldSet): readonly FieldSpec[] => [...COMMON_FIELDS, ...set.account];

/** The public part of a field, keys in the order D19 lists them. */
export function publicField(spec: FieldSpec): PublicField {
  return {
    name: spec.name,
    required: spec.required,
    type: spec.type,
    ...(spec.pattern !== undefined ? { pattern: spec.pattern } : {}),
    ...(spec.min_length !== undefined ? { min_length: spec.min_length } : {}),
    ...(spec.max_length !== undefined ? { max_length: spec.max_length } : {}),
    ...(spec.allowed_values !== undefined ? { allowed_values: [...spec.allowed_values] } : {}),
    description: spec.description,
  };
}

/** Every account key any field set has: the response schema lists them. */
export const ACCOUNT_KEYS: readonly string[] = [
  ...new Set(
    [...sepaFields('DE'), ...Object.values(NATIONAL_SETS).flatMap((set) => set.account)].map((spec) =>
      spec.name.slice('account.'.length),
    ),
  ),
];
