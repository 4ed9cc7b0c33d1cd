// Rules of the bank directory (D17): reading and searching banks and branches, validating a code and looking
// it up in the directory, and importing the directory (CSV file, the IFSC package, the sandbox seed).
import { extractIBAN } from 'ibantools';
import { type Queryable, withTransaction } from '../db/pool.ts';
import type { AppDeps } from '../platform/deps.ts';
import { AppError, notFound, validationFailed } from '../platform/errors.ts';
import { isPublicId, newPublicId } from '../platform/ids.ts';
import { type Page, toPage, toSearchQuery } from '../platform/search.ts';
import { toIso } from '../platform/time.ts';
import { storedCode } from './codes.ts';
import {
  type BranchRecord,
  csvSource,
  DirectoryBuilder,
  DirectoryRowError,
  DirectoryTooLargeError,
  type RowSource,
  rowsSource,
} from './directory.ts';
import { ifscPackageRowsOf } from './ifsc-package.ts';
import * as repo from './repository.ts';
import type {
  BankFilters,
  BankSearchInput,
  BankSortKey,
  BankView,
  BranchFilters,
  BranchSearchInput,
  BranchView,
  ImportResultView,
  ValidateInput,
  ValidateResultView,
} from './schemas.ts';
import { type CodeCheck, type ValidateCodeInput, validateCode } from './validation.ts';

export const BANK_ID_PREFIX = 'bnk';
export const BRANCH_ID_PREFIX = 'brn';

export function bankView(row: repo.BankRow): BankView {
  return {
    id: row.id,
    name: row.name,
    country: row.country,
    bic: row.bic,
    national_code_type: row.national_code_type,
    national_code: row.national_code,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export function branchView(row: repo.BranchRow): BranchView {
  return {
    id: row.id,
    bank_id: row.bank_id,
    name: row.name,
    country: row.country,
    city: row.city,
    address: row.address,
    bic: row.bic,
    code_type: row.code_type,
    code: row.code,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export async function getBank(deps: AppDeps, id: string): Promise<BankView> {
  const row = isPublicId(BANK_ID_PREFIX, id) ? await repo.findBank(deps.pool, id) : undefined;
  if (!row) throw notFound('No bank matches the id');
  return bankView(row);
}

export async function getBranch(deps: AppDeps, id: string): Promise<BranchView> {
  const row = isPublicId(BRANCH_ID_PREFIX, id) ? await repo.findBranch(deps.pool, id) : undefined;
  if (!row) throw notFound('No bank branch matches the id');
  return branchView(row);
}

const unique = (values: string[]): string[] => [...new Set(values)];

export async function searchBanks(deps: AppDeps, body: BankSearchInput | undefined): Promise<Page<BankView>> {
  const query = toSearchQuery<BankFilters, BankSortKey>(body);
  // NUL cannot be stored in text, so a search holding it matches nothing (PostgreSQL would refuse it).
  if (query.search?.includes('\u0000')) return toPage(query, [], 0);
  const filters: BankFilters = { ...query.filters };
  // Codes are compared as stored: upper-case without spaces or hyphens; a BIC11 by its BIC8.
  if (filters.bic) filters.bic = unique(filters.bic.map((bic) => storedCode(bic).slice(0, 8)));
  if (filters.national_code) filters.national_code = unique(filters.national_code.map(storedCode));
  const { rows, total } = await repo.searchBanks(deps.pool, {
    filters,
    search: query.search,
    sortBy: query.sortBy,
    sortDirection: query.sortDirection,
    limit: query.pageSize,
    offset: query.offset,
  });
  return toPage(query, rows.map(bankView), total);
}

/** chr(31), between name, city and code in bank_branches.search_text (migration 010). */
const FIELD_SEPARATOR = '\u001f';

export async function searchBranches(
  deps: AppDeps,
  body: BranchSearchInput | undefined,
): Promise<Page<BranchView>> {
  const query = toSearchQuery<BranchFilters, BankSortKey>(body);
  // NUL cannot be stored in text, so a search holding it matches nothing (PostgreSQL would refuse it); nor
  // can the unit separator that keeps name, city and code apart in search_text, so that no match spans two.
  if (query.search?.includes('\u0000') || query.search?.includes(FIELD_SEPARATOR))
    return toPage(query, [], 0);
  const filters: BranchFilters = { ...query.filters };
  if (filters.code) filters.code = unique(filters.code.map(storedCode));
  if (filters.city) filters.city = unique(filters.city.map((city) => city.trim().toLowerCase()));
  const { rows, total } = await repo.searchBranches(deps.pool, {
    filters,
    search: query.search,
    sortBy: query.sortBy,
    sortDirection: query.sortDirection,
    limit: query.pageSize,
    offset: query.offset,
  });
  return toPage(query, rows.map(branchView), total);
}

/**
 * The IBAN countries whose IBAN carries a code the directory keeps per branch: DE (the Bankleitzahl, the
 * IBAN's bank code; a bank with several has its others as branches) and GB (the sort code, the IBAN's branch
 * code). Elsewhere the IBAN's bank code is the bank's national code.
 */
const IBAN_BRANCH_CODES = {
  DE: { type: 'blz', part: 'bankIdentifier' },
  GB: { type: 'sort_code', part: 'branchIdentifier' },
} as const;

interface Found {
  bank: repo.BankRow | undefined;
  branch: repo.BranchRow | undefined;
}

/** The branch a look-up found and its bank, or, without one, the bank `fallback` finds. */
async function branchOrBank(
  found: repo.BranchWithBank | undefined,
  fallback: () => Promise<repo.BankRow | undefined>,
): Promise<Found> {
  if (found) return found;
  return { branch: undefined, bank: await fallback() };
}

/**
 * The directory's bank and branch for a valid code (D17): an IBAN by its national bank code (and, in DE and
 * GB, the branch its code names; a GB or NL style bank code of 4 letters by the BIC it starts); a BIC by its
 * first 8 characters (the branch by the BIC11, `XXX` for a BIC8); ABA, sort code and IFSC by the branch with
 * that code, else the bank whose national code it is (IFSC: its first 4 letters); CLABE by its 3-digit bank
 * code; NUBAN by the CBN bank code given with it.
 */
async function lookUp(db: Queryable, input: ValidateCodeInput, check: CodeCheck): Promise<Found> {
  const { code } = check;
  switch (input.code_type) {
    case 'iban': {
      const parts = extractIBAN(code);
      const country = check.country!;
      const bankCode = parts.bankIdentifier;
      const branchCode = IBAN_BRANCH_CODES[country as keyof typeof IBAN_BRANCH_CODES];
      const branchValue = branchCode ? parts[branchCode.part] : undefined;
      const branch = branchValue
        ? await repo.branchByCode(db, country, branchCode!.type, branchValue)
        : undefined;
      return branchOrBank(branch, async () => {
        if (!bankCode) return undefined;
        const bank = await repo.bankByCode(db, country, null, bankCode);
        if (bank || !/^[A-Z]{4}$/.test(bankCode)) return bank;
        return repo.bankByBicPrefix(db, bankCode, country);
      });
    }
    case 'bic': {
      // Usually the BIC11 (or the head office, XXX) is a branch of the BIC8's bank: one round trip.
      const bic8 = code.slice(0, 8);
      const branch = await repo.branchByBic(db, code.length === 11 ? code : `${code}XXX`);
      if (branch && branch.bank.bic === bic8) return branch;
      const bank = await repo.bankByBic(db, bic8);
      return { bank: bank ?? branch?.bank, branch: branch?.branch };
    }
    case 'aba':
    case 'sort_code': {
      const type = input.code_type;
      return branchOrBank(await repo.branchByCode(db, check.country!, type, code), () =>
        repo.bankByCode(db, check.country!, type, code),
      );
    }
    case 'ifsc':
      return branchOrBank(await repo.branchByCode(db, 'IN', 'ifsc', code), () =>
        repo.bankByCode(db, 'IN', 'ifsc', code.slice(0, 4)),
      );
    case 'clabe':
      return { bank: await repo.bankByCode(db, 'MX', 'clabe', code.slice(0, 3)), branch: undefined };
    case 'nuban':
      return { bank: await repo.bankByCode(db, 'NG', 'nuban', input.bank_code!), branch: undefined };
  }
}

/**
 * A code judged by its own rules and, when valid, looked up in the directory: what POST /api/v1/banks/validate
 * answers, and what a beneficiary's account fields are checked with (D19). Never throws for an invalid code.
 */
export async function validateWithDirectory(
  db: Queryable,
  input: ValidateCodeInput,
): Promise<ValidateResultView> {
  const check = validateCode(input);
  const found = check.valid ? await lookUp(db, input, check) : { bank: undefined, branch: undefined };
  return {
    valid: check.valid,
    code_type: input.code_type,
    code: check.code,
    reason: check.reason,
    country: check.country,
    bank: found.bank ? bankView(found.bank) : null,
    branch: found.branch ? branchView(found.branch) : null,
  };
}

export async function validate(deps: AppDeps, input: ValidateInput): Promise<ValidateResultView> {
  if (input.code_type === 'nuban' && input.bank_code === undefined) {
    throw validationFailed('bank_code', 'bank_code (the 3-digit CBN bank code) is required for nuban');
  }
  if (input.code_type !== 'nuban' && input.bank_code !== undefined) {
    throw validationFailed('bank_code', 'bank_code is only taken with code_type nuban');
  }
  return validateWithDirectory(deps.pool, input);
}

/** PostgreSQL advisory lock key of directory imports ("payment-service bank import"): one import at a time. */
const IMPORT_LOCK_ID = 7_301_202_613;

/** A file row the import refuses, as the D5 envelope: 422 naming `line[N].column`. */
export function rowError(line: number, column: string | undefined, message: string): AppError {
  const field = column ? `line[${line}].${column}` : `line[${line}]`;
  return new AppError('VALIDATION_FAILED', `line ${line}${column ? `, ${column}` : ''}: ${message}`, {
    field,
    details: [{ line, ...(column ? { column } : {}) }],
  });
}

/**
 * Imports a directory source in one transaction: rows are checked as they are read, their branches staged in
 * batches, then everything is upserted; on any refusal nothing is changed. One import at a time (an advisory
 * lock): a second waits.
 */
export async function importDirectory(deps: AppDeps, source: RowSource): Promise<ImportResultView> {
  try {
    return await withTransaction(deps.pool, async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [IMPORT_LOCK_ID]);
      await repo.createStaging(tx);
      const builder = new DirectoryBuilder();
      const newBranchId = () => newPublicId(BRANCH_ID_PREFIX);
      let batch: BranchRecord[] = [];
      await source(async (row, line) => {
        const branch = builder.add(row, line);
        if (!branch) return;
        batch.push(branch);
        if (batch.length < repo.STAGE_BATCH) return;
        const full = batch;
        batch = [];
        await repo.stageBranches(tx, full, newBranchId);
      });
      await repo.stageBranches(tx, batch, newBranchId);
      const result = await repo.applyStaging(tx, builder.banks, () => newPublicId(BANK_ID_PREFIX));
      if ('conflict' in result) {
        const { line, column, message } = result.conflict;
        throw rowError(line, column, message);
      }
      return { rows: builder.rows, banks: result.banks, branches: result.branches };
    });
  } catch (error) {
    if (error instanceof DirectoryRowError) throw rowError(error.line, error.column, error.detail);
    if (error instanceof DirectoryTooLargeError) throw new AppError('PAYLOAD_TOO_LARGE', error.message);
    throw error;
  }
}

/**
 * `payment-service admin import-banks FILE.csv`: the operator's CSV file (docs/operator/bank-directory.md), as
 * text or as the request's body stream, read up to `maxBytes`.
 */
export function importCsv(
  deps: AppDeps,
  file: AsyncIterable<Buffer | string> | string,
  options: { maxBytes?: number } = {},
): Promise<ImportResultView> {
  return importDirectory(deps, csvSource(file, options));
}

/** India's IFSC directory as the `ifsc` package ships it (see ifsc-package.ts for what it holds). */
export async function importIfscPackage(deps: AppDeps, banks?: string[]): Promise<ImportResultView> {
  return importDirectory(deps, rowsSource(await ifscPackageRowsOf(banks)));
}
