// SQL of the bank directory (D17): reads, searches, the look-ups behind POST /api/v1/banks/validate, and the
// import's upsert. Banks and branches are reference data shared by every organisation.
import { pageWithTotal } from '../db/paging.ts';
import type { PoolClient, Queryable } from '../db/pool.ts';
import type { BankCodeType, BranchCodeType } from './codes.ts';
import type { BankRecord, BranchRecord } from './directory.ts';
import type { BankFilters, BankSortKey, BranchFilters } from './schemas.ts';

export interface BankRow {
  id: string;
  name: string;
  country: string;
  bic: string | null;
  national_code_type: BankCodeType | null;
  national_code: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface BranchRow {
  id: string;
  bank_id: string;
  name: string | null;
  country: string;
  city: string | null;
  address: string | null;
  bic: string | null;
  code_type: BranchCodeType | null;
  code: string | null;
  created_at: Date;
  updated_at: Date;
}

// Named columns: the statements below are prepared, and a column added later must not change what they return.
const BANK_COLUMNS = 'id, name, country, bic, national_code_type, national_code, created_at, updated_at';
const BRANCH_COLUMNS =
  'id, bank_id, name, country, city, address, bic, code_type, code, created_at, updated_at';

/** A branch and its bank, as one look-up answers them. */
export interface BranchWithBank {
  branch: BranchRow;
  bank: BankRow;
}

// A branch's columns and its bank's (prefixed `bank_`), so that one round trip answers both: validate runs one
// statement when the directory knows the code, two when it falls back to the bank.
const BRANCH_AND_BANK_COLUMNS = [
  ...BRANCH_COLUMNS.split(', ').map((column) => `r.${column}`),
  ...BANK_COLUMNS.split(', ')
    .filter((column) => column !== 'id')
    .map((column) => `b.${column} AS bank_${column}`),
].join(', ');

type BranchAndBankRow = BranchRow & {
  bank_name: string;
  bank_country: string;
  bank_bic: string | null;
  bank_national_code_type: BankCodeType | null;
  bank_national_code: string | null;
  bank_created_at: Date;
  bank_updated_at: Date;
};

function splitBranchAndBank(row: BranchAndBankRow | undefined): BranchWithBank | undefined {
  if (!row) return undefined;
  const {
    bank_name,
    bank_country,
    bank_bic,
    bank_national_code_type,
    bank_national_code,
    bank_created_at,
    bank_updated_at,
    ...branch
  } = row;
  return {
    branch,
    bank: {
      id: row.bank_id,
      name: bank_name,
      country: bank_country,
      bic: bank_bic,
      national_code_type: bank_national_code_type,
      national_code: bank_national_code,
      created_at: bank_created_at,
      updated_at: bank_updated_at,
    },
  };
}

// Look-ups are named (prepared once per connection): each is an equality on a unique or selective index, so
// the generic plan is the right one for every value.
const FIND_BANK = { name: 'banks.find', text: `SELECT ${BANK_COLUMNS} FROM banks WHERE id = $1` };
const FIND_BRANCH = {
  name: 'bank-branches.find',
  text: `SELECT ${BRANCH_COLUMNS} FROM bank_branches WHERE id = $1`,
};
const BANK_BY_BIC = { name: 'banks.by-bic', text: `SELECT ${BANK_COLUMNS} FROM banks WHERE bic = $1` };
const BANK_BY_BIC_PREFIX = {
  name: 'banks.by-bic-prefix',
  // Institution and country (the first 6 characters): the GB and NL IBANs carry a BIC's first 4 letters.
  // A BIC8 with that start lies between start||'00' and start||'ZZ' (A-Z and 0-9 only): an index range.
  text: `SELECT ${BANK_COLUMNS} FROM banks WHERE bic BETWEEN $1 || '00' AND $1 || 'ZZ' AND country = $2
         ORDER BY bic LIMIT 1`,
};
const BANK_BY_CODE = {
  name: 'banks.by-code',
  text: `SELECT ${BANK_COLUMNS} FROM banks
         WHERE national_code = $2 AND country = $1 AND ($3::text IS NULL OR national_code_type = $3)
         ORDER BY id LIMIT 1`,
};
const BRANCH_BY_BIC = {
  name: 'bank-branches.by-bic',
  text: `SELECT ${BRANCH_AND_BANK_COLUMNS} FROM bank_branches r JOIN banks b ON b.id = r.bank_id
         WHERE r.bic = $1`,
};
const BRANCH_BY_CODE = {
  name: 'bank-branches.by-code',
  text: `SELECT ${BRANCH_AND_BANK_COLUMNS} FROM bank_branches r JOIN banks b ON b.id = r.bank_id
         WHERE r.code = $2 AND r.country = $1 AND ($3::text IS NULL OR r.code_type = $3)
         ORDER BY r.id LIMIT 1`,
};

export async function findBank(db: Queryable, id: string): Promise<BankRow | undefined> {
  return (await db.query<BankRow>({ ...FIND_BANK, values: [id] })).rows[0];
}

export async function findBranch(db: Queryable, id: string): Promise<BranchRow | undefined> {
  return (await db.query<BranchRow>({ ...FIND_BRANCH, values: [id] })).rows[0];
}

export async function bankByBic(db: Queryable, bic8: string): Promise<BankRow | undefined> {
  return (await db.query<BankRow>({ ...BANK_BY_BIC, values: [bic8] })).rows[0];
}

/** The first bank (by BIC) whose BIC starts with `institution` (4 letters) followed by `country`. */
export async function bankByBicPrefix(
  db: Queryable,
  institution: string,
  country: string,
): Promise<BankRow | undefined> {
  return (await db.query<BankRow>({ ...BANK_BY_BIC_PREFIX, values: [`${institution}${country}`, country] }))
    .rows[0];
}

/** A bank by its national code in `country`; `type` null matches any type (the IBAN's bank code). */
export async function bankByCode(
  db: Queryable,
  country: string,
  type: BankCodeType | null,
  code: string,
): Promise<BankRow | undefined> {
  return (await db.query<BankRow>({ ...BANK_BY_CODE, values: [country, code, type] })).rows[0];
}

/** The branch with a BIC11, and its bank. */
export async function branchByBic(db: Queryable, bic11: string): Promise<BranchWithBank | undefined> {
  return splitBranchAndBank(
    (await db.query<BranchAndBankRow>({ ...BRANCH_BY_BIC, values: [bic11] })).rows[0],
  );
}

/** A branch by its code in `country` (`type` null: any type), and its bank. */
export async function branchByCode(
  db: Queryable,
  country: string,
  type: BranchCodeType | null,
  code: string,
): Promise<BranchWithBank | undefined> {
  return splitBranchAndBank(
    (await db.query<BranchAndBankRow>({ ...BRANCH_BY_CODE, values: [country, code, type] })).rows[0],
  );
}

export interface DirectorySearch<Filters> {
  filters: Filters;
  /** The free text as typed; matched as a case-insensitive substring. */
  search: string | undefined;
  sortBy: BankSortKey;
  sortDirection: 'asc' | 'desc';
  limit: number;
  offset: number;
}

const SORT_COLUMNS: Record<BankSortKey, string> = {
  id: 'id',
  created_at: 'created_at',
  updated_at: 'updated_at',
};

/** `%text%` for ILIKE, with the pattern characters of the text itself escaped. */
export function substringPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}

class Conditions {
  readonly where: string[] = [];
  readonly values: unknown[] = [];
  bind(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
  add(condition: (placeholder: string) => string, value: unknown): void {
    this.where.push(condition(this.bind(value)));
  }
}

/**
 * A page of banks and the exact total (D4). `search` is a case-insensitive substring of the name or the BIC,
 * served by the trigram indexes (migration 010).
 */
export async function searchBanks(
  db: Queryable,
  query: DirectorySearch<BankFilters>,
): Promise<{ rows: BankRow[]; total: number }> {
  const conditions = new Conditions();
  const { filters } = query;
  if (filters.country) conditions.add((p) => `country = ANY(${p}::text[])`, filters.country);
  if (filters.bic) conditions.add((p) => `bic = ANY(${p}::text[])`, filters.bic);
  if (filters.national_code_type) {
    conditions.add((p) => `national_code_type = ANY(${p}::text[])`, filters.national_code_type);
  }
  if (filters.national_code)
    conditions.add((p) => `national_code = ANY(${p}::text[])`, filters.national_code);
  if (query.search !== undefined) {
    const pattern = conditions.bind(substringPattern(query.search));
    conditions.where.push(`(name ILIKE ${pattern} OR bic ILIKE ${pattern})`);
  }
  const direction = query.sortDirection === 'asc' ? 'ASC' : 'DESC';
  return pageWithTotal<BankRow>(db, {
    columns: BANK_COLUMNS,
    from: 'banks',
    condition: conditions.where.length > 0 ? conditions.where.join(' AND ') : 'true',
    orderBy: `${SORT_COLUMNS[query.sortBy]} ${direction}, id ${direction}`,
    limit: conditions.bind(query.limit),
    offset: conditions.bind(query.offset),
    values: conditions.values,
  });
}

/**
 * A page of branches and the exact total (D4). `search` is a case-insensitive substring of the name, the city
 * or the code, matched against `search_text` (those three lower-cased, migration 010) through its trigram
 * index; `city` filters compare case-insensitively (index on lower(city)).
 *
 * With a condition, the matching rows are found once (a MATERIALIZED CTE of their sort keys), counted, and
 * the page is the top of them, read back by primary key. pageWithTotal's shape lets the planner walk the
 * primary key backwards for the page, filtering as it goes, which it prices as cheap for a few thousand
 * matches; but matches cluster (a directory is imported bank by bank, country by country) and a search for a
 * city took 70 ms walking 51,000 rows of other countries (200,000 branches, EXPLAIN ANALYZE). Counting needs
 * every match anyway, so the page costs only a top-N sort of them on top.
 */
export async function searchBranches(
  db: Queryable,
  query: DirectorySearch<BranchFilters>,
): Promise<{ rows: BranchRow[]; total: number }> {
  const conditions = new Conditions();
  const { filters } = query;
  if (filters.bank_id) conditions.add((p) => `bank_id = ANY(${p}::text[])`, filters.bank_id);
  if (filters.country) conditions.add((p) => `country = ANY(${p}::text[])`, filters.country);
  if (filters.city) conditions.add((p) => `lower(city) = ANY(${p}::text[])`, filters.city);
  if (filters.code_type) conditions.add((p) => `code_type = ANY(${p}::text[])`, filters.code_type);
  if (filters.code) conditions.add((p) => `code = ANY(${p}::text[])`, filters.code);
  if (query.search !== undefined) {
    conditions.add((p) => `search_text LIKE lower(${p})`, substringPattern(query.search));
  }
  const direction = query.sortDirection === 'asc' ? 'ASC' : 'DESC';
  const orderBy = `${SORT_COLUMNS[query.sortBy]} ${direction}, id ${direction}`;
  if (conditions.where.length === 0) {
    return pageWithTotal<BranchRow>(db, {
      columns: BRANCH_COLUMNS,
      from: 'bank_branches',
      condition: 'true',
      orderBy,
      limit: conditions.bind(query.limit),
      offset: conditions.bind(query.offset),
      values: conditions.values,
    });
  }
  const limit = conditions.bind(query.limit);
  const offset = conditions.bind(query.offset);
  const qualified = BRANCH_COLUMNS.split(', ')
    .map((column) => `b.${column}`)
    .join(', ');
  const result = await db.query<BranchRow & { total: number }>(
    `WITH matches AS MATERIALIZED (
       SELECT id, created_at, updated_at FROM bank_branches WHERE ${conditions.where.join(' AND ')}
     ),
     page AS (
       SELECT id, created_at, updated_at FROM matches ORDER BY ${orderBy} LIMIT ${limit} OFFSET ${offset}
     )
     SELECT (SELECT count(*) FROM matches) AS total, ${qualified}
     FROM (SELECT 1) AS one
     LEFT JOIN (page JOIN bank_branches b ON b.id = page.id) ON true
     ORDER BY ${orderBy
       .split(', ')
       .map((part) => `page.${part}`)
       .join(', ')}`,
    conditions.values,
  );
  const total = result.rows[0]?.total ?? 0;
  const rows: BranchRow[] = [];
  for (const row of result.rows) {
    if (row.id === null) continue;
    const { total: _total, ...rest } = row;
    rows.push(rest);
  }
  return { rows, total };
}

export interface UpsertCounts {
  created: number;
  updated: number;
  unchanged: number;
}

/** Why the directory refuses an import that each row allowed: names the line and column of the file. */
export interface DirectoryConflict {
  line: number;
  column: string | undefined;
  message: string;
}

/** Rows per INSERT of the staging tables (bound as arrays: 11 parameters per statement). */
export const STAGE_BATCH = 5_000;

/** The items in slices of STAGE_BATCH, each with the index of its first item. */
function* batches<T>(items: readonly T[]): Generator<[number, T[]]> {
  for (let start = 0; start < items.length; start += STAGE_BATCH) {
    yield [start, items.slice(start, start + STAGE_BATCH)];
  }
}

/**
 * The staging tables of one import, in the caller's transaction (dropped at its end). Each staged row carries
 * the id of the stored record it matches (by code, else BIC), found by index as it is staged.
 */
export async function createStaging(tx: PoolClient): Promise<void> {
  await tx.query(
    `CREATE TEMP TABLE bank_import (
       ord integer PRIMARY KEY, line integer NOT NULL, new_id text NOT NULL, name text NOT NULL,
       country text NOT NULL, bic text, code_type text, code text, bank_id text
     ) ON COMMIT DROP`,
  );
  await tx.query(
    `CREATE TEMP TABLE branch_import (
       line integer PRIMARY KEY, new_id text NOT NULL, bank_ord integer NOT NULL, name text,
       country text NOT NULL, city text, address text, bic text, code_type text, code text, branch_id text
     ) ON COMMIT DROP`,
  );
}

/** Stages checked branches (at most STAGE_BATCH at a time, as the file is read). */
export async function stageBranches(
  tx: PoolClient,
  branches: readonly BranchRecord[],
  newId: () => string,
): Promise<void> {
  if (branches.length === 0) return;
  await tx.query(
    `INSERT INTO branch_import
       (line, new_id, bank_ord, name, country, city, address, bic, code_type, code, branch_id)
     SELECT u.*,
            COALESCE(
              (SELECT r.id FROM bank_branches r WHERE u.code IS NOT NULL AND r.country = u.country
                 AND r.code_type = u.code_type AND r.code = u.code),
              (SELECT r.id FROM bank_branches r WHERE u.bic IS NOT NULL AND r.bic = u.bic))
     FROM unnest($1::int[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[],
                 $8::text[], $9::text[], $10::text[])
       AS u(line, new_id, bank_ord, name, country, city, address, bic, code_type, code)`,
    [
      branches.map((branch) => branch.line),
      branches.map(() => newId()),
      branches.map((branch) => branch.bank),
      branches.map((branch) => branch.name),
      branches.map((branch) => branch.country),
      branches.map((branch) => branch.city),
      branches.map((branch) => branch.address),
      branches.map((branch) => branch.bic),
      branches.map((branch) => branch.codeType),
      branches.map((branch) => branch.code),
    ],
  );
}

/**
 * Applies an import whose branches are staged: stages its banks, refuses what the file or the directory
 * contradicts (a conflict naming a line), then upserts banks (found again by national code, else by BIC) and
 * branches (by code, else by BIC) with one UPDATE (only rows that change: updated_at moves only then) and one
 * INSERT per table. An empty cell keeps the stored value.
 */
export async function applyStaging(
  tx: PoolClient,
  banks: readonly BankRecord[],
  newBankId: () => string,
): Promise<{ banks: UpsertCounts; branches: UpsertCounts } | { conflict: DirectoryConflict }> {
  for (const [from, batch] of batches(banks)) {
    await tx.query(
      `INSERT INTO bank_import (ord, line, new_id, name, country, bic, code_type, code, bank_id)
       SELECT u.ord, u.line, u.new_id, u.name, u.country, u.bic, u.code_type, u.code,
              COALESCE(
                (SELECT b.id FROM banks b WHERE u.code IS NOT NULL AND b.country = u.country
                   AND b.national_code_type = u.code_type AND b.national_code = u.code),
                (SELECT b.id FROM banks b WHERE u.bic IS NOT NULL AND b.bic = u.bic))
       FROM unnest($1::int[], $2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
         AS u(ord, line, new_id, name, country, bic, code_type, code)`,
      [
        batch.map((_, index) => from + index),
        batch.map((bank) => bank.line),
        batch.map(() => newBankId()),
        batch.map((bank) => bank.name),
        batch.map((bank) => bank.country),
        batch.map((bank) => bank.bic),
        batch.map((bank) => bank.codeType),
        batch.map((bank) => bank.code),
      ],
    );
  }
  const conflict =
    (await repeatedBranch(tx)) ??
    (await firstConflict(tx, 'bank_import', 'bank_id', 'banks', 'bank')) ??
    (await firstConflict(tx, 'branch_import', 'branch_id', 'bank_branches', 'branch'));
  if (conflict) return { conflict };
  await tx.query('ANALYZE branch_import');

  const bankMatched = await countMatched(tx, 'bank_import', 'bank_id');
  const banksUpdated = await tx.query(
    `UPDATE banks b SET name = s.name, bic = COALESCE(s.bic, b.bic),
            national_code_type = COALESCE(s.code_type, b.national_code_type),
            national_code = COALESCE(s.code, b.national_code), updated_at = now()
     FROM bank_import s
     WHERE b.id = s.bank_id
       AND (b.name, b.bic, b.national_code_type, b.national_code) IS DISTINCT FROM
           (s.name, COALESCE(s.bic, b.bic), COALESCE(s.code_type, b.national_code_type),
            COALESCE(s.code, b.national_code))`,
  );
  const banksCreated = await tx.query(
    `INSERT INTO banks (id, name, country, bic, national_code_type, national_code)
     SELECT new_id, name, country, bic, code_type, code FROM bank_import WHERE bank_id IS NULL ORDER BY ord`,
  );

  const branchMatched = await countMatched(tx, 'branch_import', 'branch_id');
  const branchesUpdated = await tx.query(
    `UPDATE bank_branches r SET bank_id = k.id, name = COALESCE(s.name, r.name),
            city = COALESCE(s.city, r.city), address = COALESCE(s.address, r.address),
            bic = COALESCE(s.bic, r.bic), code_type = COALESCE(s.code_type, r.code_type),
            code = COALESCE(s.code, r.code), updated_at = now()
     FROM branch_import s JOIN (SELECT ord, COALESCE(bank_id, new_id) AS id FROM bank_import) k ON k.ord = s.bank_ord
     WHERE r.id = s.branch_id
       AND (r.bank_id, r.name, r.city, r.address, r.bic, r.code_type, r.code) IS DISTINCT FROM
           (k.id, COALESCE(s.name, r.name), COALESCE(s.city, r.city), COALESCE(s.address, r.address),
            COALESCE(s.bic, r.bic), COALESCE(s.code_type, r.code_type), COALESCE(s.code, r.code))`,
  );
  // New branches are written in city order, so that a city's branches share heap pages: a free-text search
  // for a city reads its matches from about 70 pages instead of about 1,900 (2,600 branches of 200,000:
  // 6.4 -> 2.3 ms). Pages and ids are independent: every search sorts its matches itself.
  const branchesCreated = await tx.query(
    `INSERT INTO bank_branches (id, bank_id, name, country, city, address, bic, code_type, code)
     SELECT s.new_id, k.id, s.name, s.country, s.city, s.address, s.bic, s.code_type, s.code
     FROM branch_import s JOIN (SELECT ord, COALESCE(bank_id, new_id) AS id FROM bank_import) k ON k.ord = s.bank_ord
     WHERE s.branch_id IS NULL ORDER BY lower(s.city), s.country, s.name, s.line`,
  );
  return {
    banks: counts(banksCreated.rowCount, banksUpdated.rowCount, bankMatched),
    branches: counts(branchesCreated.rowCount, branchesUpdated.rowCount, branchMatched),
  };
}

/** A branch the file gives twice (by code, or by BIC): the second of the first such pair, by line. */
async function repeatedBranch(tx: PoolClient): Promise<DirectoryConflict | undefined> {
  const result = await tx.query<{ line: number; first_line: number; key: string; column: string }>(
    `SELECT line, first_line, key, column_name AS column FROM (
       SELECT line, code AS key, 'branch_code' AS column_name,
              first_value(line) OVER same AS first_line, row_number() OVER same AS n
       FROM branch_import WHERE code IS NOT NULL
       WINDOW same AS (PARTITION BY country, code_type, code ORDER BY line)
       UNION ALL
       SELECT line, bic, 'branch_bic', first_value(line) OVER same, row_number() OVER same
       FROM branch_import WHERE bic IS NOT NULL
       WINDOW same AS (PARTITION BY bic ORDER BY line)
     ) repeated WHERE n = 2 ORDER BY line LIMIT 1`,
  );
  const row = result.rows[0];
  if (!row) return undefined;
  return {
    line: row.line,
    column: row.column,
    message: `the branch ${row.key} is already on line ${row.first_line}`,
  };
}

function counts(created: number | null, updated: number | null, matched: number): UpsertCounts {
  return { created: created ?? 0, updated: updated ?? 0, unchanged: matched - (updated ?? 0) };
}

async function countMatched(tx: PoolClient, stage: string, matchColumn: string): Promise<number> {
  const result = await tx.query<{ matched: number }>(
    `SELECT count(*) AS matched FROM ${stage} WHERE ${matchColumn} IS NOT NULL`,
  );
  return result.rows[0]?.matched ?? 0;
}

/**
 * What the directory refuses although every row was well-formed: two rows matching one stored record (one
 * by code, the other by BIC), or a row's BIC held by another stored record than the one the row matches.
 */
async function firstConflict(
  tx: PoolClient,
  stage: 'bank_import' | 'branch_import',
  matchColumn: 'bank_id' | 'branch_id',
  table: 'banks' | 'bank_branches',
  what: 'bank' | 'branch',
): Promise<DirectoryConflict | undefined> {
  const twice = await tx.query<{ line: number; first_line: number }>(
    `SELECT max(line) AS line, min(line) AS first_line FROM ${stage}
     WHERE ${matchColumn} IS NOT NULL GROUP BY ${matchColumn} HAVING count(*) > 1 ORDER BY 1 LIMIT 1`,
  );
  const row = twice.rows[0];
  if (row) {
    return {
      line: row.line,
      column: undefined,
      message:
        `this row and line ${row.first_line} are the same ${what} of the directory (one found by its code, ` +
        'the other by its BIC); give both codes on one row',
    };
  }
  const bicTaken = await tx.query<{ line: number; bic: string; holder: string }>(
    `SELECT s.line, s.bic, t.id AS holder FROM ${stage} s JOIN ${table} t ON t.bic = s.bic
     WHERE s.${matchColumn} <> t.id ORDER BY s.line LIMIT 1`,
  );
  const taken = bicTaken.rows[0];
  if (taken) {
    return {
      line: taken.line,
      column: `${what}_bic`,
      message: `${taken.bic} is the BIC of another ${what} of the directory (${taken.holder})`,
    };
  }
  return undefined;
}
