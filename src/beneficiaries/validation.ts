// A beneficiary's fields judged by its field set (requirements.ts): every field of the set in order, each
// normalised, then its length, pattern and allowed values, then, for a code, the banks area's validator
// (check digits, the code's country against the destination country) and the directory's bank. The first
// failure is a 422 naming the dotted field. Messages never repeat a value: account identifiers must not
// reach responses' error texts nor the logs that record them.
import { validateWithDirectory } from '../banks/service.ts';
import type { Queryable } from '../db/pool.ts';
import { isCountryCode } from '../platform/countries.ts';
import { type AppError, validationFailed } from '../platform/errors.ts';
import { isCalendarDate } from '../sanctions/formats/dates.ts';
import { allFields, type FieldSet, type FieldSpec, type Normalisation } from './requirements.ts';

/** The fields as a create body (or a PATCH merged over the stored beneficiary) holds them. */
export interface BeneficiaryFields {
  entity_type?: string | null | undefined;
  name?: string | null | undefined;
  address?: Record<string, string | null | undefined> | null | undefined;
  email?: string | null | undefined;
  date_of_birth?: string | null | undefined;
  account?: Record<string, string | null | undefined> | null | undefined;
}

export interface ValidatedAddress {
  line1: string;
  city: string;
  postal_code: string | null;
  country: string;
}

export interface ValidatedBeneficiary {
  entity_type: 'individual' | 'business';
  name: string;
  address: ValidatedAddress;
  email: string | null;
  date_of_birth: string | null;
  /** The set's account fields that were given, normalised. */
  account: Record<string, string>;
  /** The bank the directory knows for the first code that names one, or null. */
  bank: { id: string; name: string; bic: string | null } | null;
  /** The account identifier a payout rail needs (IBAN, account number, CLABE, mobile number). */
  identifier: string;
}

/** A value as it is judged and stored. */
export function normalise(value: string, how: Normalisation): string {
  switch (how) {
    case 'trim':
      return value.trim();
    case 'code':
      return value.replace(/\s+/g, '').toUpperCase();
    case 'digits':
      return value.replace(/[\s-]+/g, '');
    case 'phone':
      return value.replace(/[\s()-]+/g, '');
    case 'none':
      return value;
  }
}

const CODE_NAMES: Record<string, string> = {
  iban: 'an IBAN',
  bic: 'a BIC',
  aba: 'an ABA routing number',
  sort_code: 'a sort code',
  ifsc: 'an IFSC',
  clabe: 'a CLABE',
  nuban: 'a NUBAN',
};

function valueAt(fields: BeneficiaryFields, path: string): unknown {
  const [head, tail] = path.split('.') as [keyof BeneficiaryFields, string | undefined];
  const top = fields[head];
  if (tail === undefined) return top;
  return top && typeof top === 'object' ? (top as Record<string, unknown>)[tail] : undefined;
}

function codePoints(value: string): number {
  let count = 0;
  for (const _ of value) count++;
  return count;
}

/** Length, pattern and allowed values of one present value, as the requirements announce them. */
function checkShape(spec: FieldSpec, value: string): AppError | undefined {
  const { name } = spec;
  if (spec.allowed_values && !spec.allowed_values.includes(value)) {
    return validationFailed(name, `${name} must be one of: ${spec.allowed_values.join(', ')}`);
  }
  const min = spec.min_length;
  const max = spec.max_length;
  // Characters as JSON Schema and PostgreSQL's length() count them: code points, not UTF-16 units.
  const length = codePoints(value);
  if ((min !== undefined && length < min) || (max !== undefined && length > max)) {
    const size =
      min === max ? `exactly ${min}` : min === undefined ? `at most ${max}` : `${min} to ${max ?? 'any'}`;
    return validationFailed(name, `${name} must be ${size} characters long`);
  }
  if (spec.pattern !== undefined && !new RegExp(spec.pattern, 'u').test(value)) {
    return validationFailed(name, `${name} must match ${spec.pattern}`);
  }
  return undefined;
}

/** Checks of the common fields that are not a shape: a real country, a real past date of birth. */
function checkMeaning(spec: FieldSpec, value: string, entityType: unknown): AppError | undefined {
  if (spec.country && !isCountryCode(value)) {
    return validationFailed(spec.name, `${spec.name} must be an ISO 3166-1 alpha-2 country code`);
  }
  if (spec.individualOnly && entityType !== 'individual') {
    return validationFailed(spec.name, `${spec.name} is only for entity_type individual`);
  }
  if (spec.type === 'date') {
    const [year, month, day] = value.split('-').map(Number) as [number, number, number];
    if (!isCalendarDate(year, month, day) || year < 1850) {
      return validationFailed(spec.name, `${spec.name} must be a real date (YYYY-MM-DD) after 1850`);
    }
    if (value > new Date().toISOString().slice(0, 10)) {
      return validationFailed(spec.name, `${spec.name} must not be in the future`);
    }
  }
  return undefined;
}

/**
 * Judges `fields` by the field set of `destinationCountry` (D19) and resolves the bank. Unknown keys of
 * `address` and `account` are refused first (422 naming them), then every field in the set's order.
 */
export async function validateFields(
  db: Queryable,
  set: FieldSet,
  destinationCountry: string,
  fields: BeneficiaryFields,
): Promise<ValidatedBeneficiary> {
  const specs = allFields(set);
  const known = new Set(specs.map((spec) => spec.name));
  for (const group of ['address', 'account'] as const) {
    for (const key of Object.keys(fields[group] ?? {})) {
      const name = `${group}.${key}`;
      if (!known.has(name)) {
        throw validationFailed(
          name,
          group === 'account'
            ? `${name} is not a field of the ${set.label} ${set.payoutMethod} field set (GET /api/v1/beneficiaries/requirements)`
            : `${name} is not a recognised field`,
        );
      }
    }
  }

  const values = new Map<string, string>();
  let bank: ValidatedBeneficiary['bank'] = null;
  for (const spec of specs) {
    const raw = valueAt(fields, spec.name);
    if (
      raw === undefined ||
      raw === null ||
      (typeof raw === 'string' && raw.trim() === '' && !spec.required)
    ) {
      if (spec.required) throw validationFailed(spec.name, `${spec.name} is required`);
      continue;
    }
    if (typeof raw !== 'string') throw validationFailed(spec.name, `${spec.name} must be of type string`);
    const value = normalise(raw, spec.normalise);
    if (spec.code) {
      const check = await validateWithDirectory(db, {
        code_type: spec.code,
        code: value,
        country: destinationCountry,
        ...(spec.bankCodeField ? { bank_code: values.get(spec.bankCodeField) ?? '' } : {}),
      });
      if (check.country !== null && check.country !== destinationCountry) {
        throw validationFailed(
          spec.name,
          `${spec.name} is ${CODE_NAMES[spec.code]} of ${check.country}, not of the destination country ${destinationCountry}`,
        );
      }
      const shape = checkShape(spec, value);
      if (shape) throw shape;
      if (!check.valid) {
        const why =
          check.reason === 'checksum'
            ? 'its check digits do not hold'
            : check.reason === 'country'
              ? 'its country code is not one that issues it'
              : `it is not in the format of ${CODE_NAMES[spec.code]}`;
        throw validationFailed(spec.name, `${spec.name} is not a valid ${spec.code.toUpperCase()}: ${why}`);
      }
      if (bank === null && check.bank) {
        bank = { id: check.bank.id, name: check.bank.name, bic: check.bank.bic };
      }
      values.set(spec.name, check.code);
      continue;
    }
    const problem = checkShape(spec, value) ?? checkMeaning(spec, value, valueAt(fields, 'entity_type'));
    if (problem) throw problem;
    values.set(spec.name, value);
  }

  const account: Record<string, string> = {};
  let identifier = '';
  for (const spec of set.account) {
    const value = values.get(spec.name);
    if (value === undefined) continue;
    account[spec.name.slice('account.'.length)] = value;
    if (spec.identifier) identifier = value;
  }
  const text = (name: string): string | null => values.get(name) ?? null;
  return {
    entity_type: text('entity_type') as ValidatedBeneficiary['entity_type'],
    name: text('name')!,
    address: {
      line1: text('address.line1')!,
      city: text('address.city')!,
      postal_code: text('address.postal_code'),
      country: text('address.country')!,
    },
    email: text('email'),
    date_of_birth: text('date_of_birth'),
    account,
    bank,
    identifier,
  };
}
