// Bank and account codes judged by their own rules (D17): one pure function per code type, shared by the
// banks area (POST /api/v1/banks/validate, the directory import) and the beneficiaries area (D19). Each
// returns the normalised code (upper-case, no spaces), whether it is valid, the first rule it breaks and the
// country the code belongs to. The directory look-up that fills `bank` and `branch` is in service.ts.
//
// Maintained packages do the checks where one exists: `ibantools` (IBAN: ISO 13616 mod-97 with the SWIFT IBAN
// registry's per-country length and BBAN format, and the national check digits it knows, e.g. the French RIB
// key and the Spanish DC; BIC: ISO 9362 format and country) and `abavalidator` (ABA routing number 3-7-1
// checksum). CLABE and NUBAN check digits have no well-kept package and are written here, each citing its
// published algorithm; IFSC and UK sort codes carry no check digit, so only their format is checked.
import { validate as abaChecksumHolds } from 'abavalidator';
import { countrySpecs, ValidationErrorsIBAN, validateIBAN } from 'ibantools';

export const CODE_TYPES = ['iban', 'bic', 'aba', 'sort_code', 'ifsc', 'clabe', 'nuban'] as const;
export type CodeType = (typeof CODE_TYPES)[number];

export const INVALID_REASONS = ['format', 'length', 'checksum', 'country'] as const;
export type InvalidReason = (typeof INVALID_REASONS)[number];

export interface CodeCheck {
  valid: boolean;
  /** The code as checked: upper-case, without spaces (and, for sort codes, without hyphens). */
  code: string;
  /** null when valid; otherwise the first rule the code breaks. */
  reason: InvalidReason | null;
  /** ISO 3166-1 alpha-2 of the code (IBAN and BIC: from the code; others: the scheme's country), or null. */
  country: string | null;
}

/**
 * Countries a BIC or a directory row may name: ISO 3166-1 alpha-2 plus XK (Kosovo), as the SWIFT registries
 * use them: the country table of `ibantools`, which its BIC check reads too.
 */
export function isCountryCode(value: string): boolean {
  return /^[A-Z]{2}$/.test(value) && Object.hasOwn(countrySpecs, value);
}

/** The one country of each national scheme. */
export const SCHEME_COUNTRY = {
  aba: 'US',
  sort_code: 'GB',
  ifsc: 'IN',
  clabe: 'MX',
  nuban: 'NG',
} as const satisfies Partial<Record<CodeType, string>>;

const ok = (code: string, country: string | null): CodeCheck => ({
  valid: true,
  code,
  reason: null,
  country,
});
const bad = (code: string, reason: InvalidReason, country: string | null): CodeCheck => ({
  valid: false,
  code,
  reason,
  country,
});

/** Upper-case without whitespace: how every code type is written before it is judged. */
export function normaliseCode(value: string): string {
  return value.replace(/\s+/g, '').toUpperCase();
}

/**
 * IBAN (ISO 13616): two letters of a country of the IBAN registry, two check digits, the country's BBAN.
 * Reasons in order: characters other than A-Z/0-9 or no two letters first `format`; a country without IBANs
 * `country`; check digits that are not two digits `format`; the wrong length for the country `length`; a BBAN not in the country's format `format`; mod-97
 * or a national check digit that does not hold `checksum`.
 */
export function validateIban(input: string): CodeCheck {
  const code = normaliseCode(input);
  if (code.length === 0) return bad(code, 'length', null);
  if (!/^[A-Z]{2}[A-Z0-9]*$/.test(code)) return bad(code, 'format', null);
  const country = code.slice(0, 2);
  const spec = countrySpecs[country];
  if (!spec?.chars || !spec.bban_regexp) return bad(code, 'country', null);
  if (!/^[A-Z]{2}[0-9]{2}/.test(code)) return bad(code, 'format', country);
  if (code.length !== spec.chars) return bad(code, 'length', country);
  const { errorCodes } = validateIBAN(code);
  if (errorCodes.includes(ValidationErrorsIBAN.WrongBBANFormat)) return bad(code, 'format', country);
  if (
    errorCodes.includes(ValidationErrorsIBAN.WrongIBANChecksum) ||
    errorCodes.includes(ValidationErrorsIBAN.WrongAccountBankBranchChecksum)
  ) {
    return bad(code, 'checksum', country);
  }
  if (errorCodes.length > 0) return bad(code, 'format', country);
  return ok(code, country);
}

/**
 * BIC (ISO 9362): 4 letters (institution), 2 letters (country), 2 letters or digits (location), optionally
 * 3 letters or digits (branch; `XXX` is the head office). 8 or 11 characters, else `length`; then `format`;
 * then the country must exist (`country`).
 */
export function validateBic(input: string): CodeCheck {
  const code = normaliseCode(input);
  if (code.length !== 8 && code.length !== 11) return bad(code, 'length', null);
  if (!/^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$/.test(code)) return bad(code, 'format', null);
  const country = code.slice(4, 6);
  if (!isCountryCode(country)) return bad(code, 'country', null);
  return ok(code, country);
}

/**
 * ABA routing transit number (US): 9 digits whose 3-7-1 weighted sum is a non-zero multiple of 10
 * (checked by `abavalidator`).
 */
export function validateAba(input: string): CodeCheck {
  const code = normaliseCode(input);
  if (!/^[0-9]*$/.test(code)) return bad(code, 'format', SCHEME_COUNTRY.aba);
  if (code.length !== 9) return bad(code, 'length', SCHEME_COUNTRY.aba);
  if (!abaChecksumHolds(code)) return bad(code, 'checksum', SCHEME_COUNTRY.aba);
  return ok(code, SCHEME_COUNTRY.aba);
}

/**
 * UK sort code: 6 digits, written `60-16-13`, `60 16 13` or `601613` (normalised to the last). A sort code
 * has no check digit of its own (Vocalink's modulus checks judge an account number with its sort code).
 */
export function validateSortCode(input: string): CodeCheck {
  const code = normaliseCode(input).replace(/-/g, '');
  if (!/^[0-9]*$/.test(code)) return bad(code, 'format', SCHEME_COUNTRY.sort_code);
  if (code.length !== 6) return bad(code, 'length', SCHEME_COUNTRY.sort_code);
  return ok(code, SCHEME_COUNTRY.sort_code);
}

/**
 * IFSC (India, RBI): 11 characters: 4 letters (the bank), `0` (reserved), 6 letters or digits (the branch).
 * It has no check digit; whether the branch exists is the directory's question, not the code's.
 */
export function validateIfsc(input: string): CodeCheck {
  const code = normaliseCode(input);
  if (code.length !== 11) return bad(code, 'length', SCHEME_COUNTRY.ifsc);
  if (!/^[A-Z]{4}0[A-Z0-9]{6}$/.test(code)) return bad(code, 'format', SCHEME_COUNTRY.ifsc);
  return ok(code, SCHEME_COUNTRY.ifsc);
}

const CLABE_WEIGHTS = [3, 7, 1] as const;

/**
 * The CLABE control digit (Clave Bancaria Estandarizada, Asociación de Bancos de México with Banco de
 * México, 2004): each of the first 17 digits times its weight 3, 7, 1, 3, 7, 1, ... taken modulo 10, summed,
 * and the control digit is (10 − sum mod 10) mod 10. Published example: 03218000011835971 → 9.
 */
export function clabeControlDigit(first17: string): number {
  let sum = 0;
  for (let index = 0; index < 17; index++) {
    sum += (Number(first17[index]) * CLABE_WEIGHTS[index % 3]!) % 10;
  }
  return (10 - (sum % 10)) % 10;
}

/** CLABE (Mexico): 18 digits: bank (3), plaza (3), account (11), control digit (1). */
export function validateClabe(input: string): CodeCheck {
  const code = normaliseCode(input);
  if (!/^[0-9]*$/.test(code)) return bad(code, 'format', SCHEME_COUNTRY.clabe);
  if (code.length !== 18) return bad(code, 'length', SCHEME_COUNTRY.clabe);
  if (clabeControlDigit(code) !== Number(code[17])) return bad(code, 'checksum', SCHEME_COUNTRY.clabe);
  return ok(code, SCHEME_COUNTRY.clabe);
}

const NUBAN_WEIGHTS = [3, 7, 3, 3, 7, 3, 3, 7, 3, 3, 7, 3] as const;

/**
 * The NUBAN check digit (Central Bank of Nigeria, "Proposals on the implementation of NUBAN scheme",
 * version 0.4, 2010): with ABC the 3-digit CBN bank code and DEFGHIJKL the 9-digit account serial number,
 * sum A*3 + B*7 + C*3 + D*3 + E*7 + F*3 + G*3 + H*7 + I*3 + J*3 + K*7 + L*3; the check digit is
 * 10 − (sum mod 10), and 0 when that is 10. Published examples (bank 011): serial 000001457 → 9
 * (NUBAN 0000014579), serial 000000022 → 0 (NUBAN 0000000220).
 */
export function nubanCheckDigit(bankCode: string, serial: string): number {
  const digits = `${bankCode}${serial}`;
  let sum = 0;
  for (let index = 0; index < 12; index++) sum += Number(digits[index]) * NUBAN_WEIGHTS[index]!;
  return (10 - (sum % 10)) % 10;
}

export const NUBAN_BANK_CODE_PATTERN = /^[0-9]{3}$/;

/**
 * NUBAN (Nigeria): a 10-digit account number (9-digit serial and the check digit) judged with the account's
 * 3-digit CBN bank code, which the check digit covers. A bank code that is not 3 digits is `format`.
 */
export function validateNuban(input: string, bankCode: string): CodeCheck {
  const code = normaliseCode(input);
  if (!/^[0-9]*$/.test(code)) return bad(code, 'format', SCHEME_COUNTRY.nuban);
  if (code.length !== 10) return bad(code, 'length', SCHEME_COUNTRY.nuban);
  if (!NUBAN_BANK_CODE_PATTERN.test(bankCode)) return bad(code, 'format', SCHEME_COUNTRY.nuban);
  if (nubanCheckDigit(bankCode, code.slice(0, 9)) !== Number(code[9])) {
    return bad(code, 'checksum', SCHEME_COUNTRY.nuban);
  }
  return ok(code, SCHEME_COUNTRY.nuban);
}

export interface ValidateCodeInput {
  code_type: CodeType;
  code: string;
  /** The country the caller expects: a valid code of another country is `country`. */
  country?: string | undefined;
  /** NUBAN only: the 3-digit CBN bank code. */
  bank_code?: string | undefined;
}

/** Any code type, plus the caller's expected country: a code valid by its own rules but of another country is `country`. */
export function validateCode(input: ValidateCodeInput): CodeCheck {
  const check = checkByType(input);
  if (check.valid && input.country !== undefined && check.country !== input.country) {
    return bad(check.code, 'country', check.country);
  }
  return check;
}

function checkByType(input: ValidateCodeInput): CodeCheck {
  switch (input.code_type) {
    case 'iban':
      return validateIban(input.code);
    case 'bic':
      return validateBic(input.code);
    case 'aba':
      return validateAba(input.code);
    case 'sort_code':
      return validateSortCode(input.code);
    case 'ifsc':
      return validateIfsc(input.code);
    case 'clabe':
      return validateClabe(input.code);
    case 'nuban':
      return validateNuban(input.code, input.bank_code ?? '');
  }
}
