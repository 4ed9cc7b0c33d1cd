// The national codes the directory holds (D17): which code types a bank or a branch may carry, the one
// country of each, and the form of a stored code. The import checks every row against these rules, so that
// what the look-ups of service.ts search for is what is stored.
import { type CodeCheck, normaliseCode, validateAba, validateIfsc, validateSortCode } from './validation.ts';

/** `national_code_type` of a bank (D17, plus `es_bank`: Spain's 4-digit código de entidad, the ES IBAN's bank code). */
export const BANK_CODE_TYPES = [
  'blz',
  'sort_code',
  'aba',
  'ifsc',
  'clabe',
  'nuban',
  'fr_bank',
  'es_bank',
] as const;
export type BankCodeType = (typeof BANK_CODE_TYPES)[number];

/** `code_type` of a branch: the schemes that identify a branch (or a bank's office) on their own. */
export const BRANCH_CODE_TYPES = ['blz', 'sort_code', 'aba', 'ifsc'] as const;
export type BranchCodeType = (typeof BRANCH_CODE_TYPES)[number];

interface CodeRule {
  country: string;
  /** What the code looks like, for messages. */
  describe: string;
  check(code: string): boolean;
}

const digits = (count: number) => (code: string) => new RegExp(`^[0-9]{${count}}$`).test(code);
const valid = (validate: (code: string) => CodeCheck) => (code: string) => validate(code).valid;

/** A bank's national code: the code of the bank as a whole (for IFSC, its 4-letter bank part). */
export const BANK_CODE_RULES: Record<BankCodeType, CodeRule> = {
  blz: { country: 'DE', describe: 'a Bankleitzahl of 8 digits', check: digits(8) },
  sort_code: { country: 'GB', describe: 'a sort code of 6 digits', check: valid(validateSortCode) },
  aba: {
    country: 'US',
    describe: 'an ABA routing number (9 digits, 3-7-1 checksum)',
    check: valid(validateAba),
  },
  ifsc: {
    country: 'IN',
    describe: 'the 4-letter bank code of its IFSCs',
    check: (code) => /^[A-Z]{4}$/.test(code),
  },
  clabe: { country: 'MX', describe: 'the 3-digit bank code of its CLABEs', check: digits(3) },
  nuban: { country: 'NG', describe: 'the 3-digit CBN bank code', check: digits(3) },
  fr_bank: { country: 'FR', describe: 'a code banque of 5 digits', check: digits(5) },
  es_bank: { country: 'ES', describe: 'a código de entidad of 4 digits', check: digits(4) },
};

export const BRANCH_CODE_RULES: Record<BranchCodeType, CodeRule> = {
  blz: BANK_CODE_RULES.blz,
  sort_code: BANK_CODE_RULES.sort_code,
  aba: BANK_CODE_RULES.aba,
  ifsc: { country: 'IN', describe: 'an IFSC (11 characters)', check: valid(validateIfsc) },
};

/** A code as the directory stores it: upper-case, no spaces or hyphens (`60-16-13` -> `601613`). */
export function storedCode(value: string): string {
  return normaliseCode(value).replace(/-/g, '');
}
