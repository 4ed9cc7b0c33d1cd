// What an import brings into the directory (D17): rows (from a CSV file, the IFSC package or the sandbox seed)
// checked one by one as they are read. Banks are gathered here (a few thousand at most); each branch goes on to
// the import's staging table as soon as its row is checked (repository.stageBranches), so an import's memory
// does not grow with the file. A row that breaks a rule stops the whole import with an error naming its line
// and column; the import runs in one transaction, so nothing is half-imported.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CsvError, parse } from 'csv-parse';
import {
  BANK_CODE_RULES,
  BANK_CODE_TYPES,
  type BankCodeType,
  BRANCH_CODE_RULES,
  BRANCH_CODE_TYPES,
  type BranchCodeType,
  storedCode,
} from './codes.ts';
import { isCountryCode, validateBic } from './validation.ts';

/** The columns of a directory CSV file (operator guide: docs/operator/bank-directory.md). */
export const DIRECTORY_COLUMNS = [
  'country',
  'bank_name',
  'bank_bic',
  'bank_code_type',
  'bank_code',
  'branch_name',
  'branch_code_type',
  'branch_code',
  'branch_bic',
  'city',
  'address',
] as const;
export type DirectoryColumn = (typeof DIRECTORY_COLUMNS)[number];
const REQUIRED_COLUMNS: readonly DirectoryColumn[] = ['country', 'bank_name'];

/** One row: every column optional except country and bank_name; an empty cell is the same as no cell. */
export type DirectoryRow = Partial<Record<DirectoryColumn, string | null>> & {
  country: string;
  bank_name: string;
};

export interface BankRecord {
  line: number;
  name: string;
  country: string;
  bic: string | null;
  codeType: BankCodeType | null;
  code: string | null;
}

export interface BranchRecord {
  /** The row's line: unique per branch of one import. */
  line: number;
  /** Index of its bank in DirectoryBuilder.banks. */
  bank: number;
  name: string | null;
  country: string;
  city: string | null;
  address: string | null;
  bic: string | null;
  codeType: BranchCodeType | null;
  code: string | null;
}

/** Receives each row of a source, with its line (the header of a file is line 1). */
export type RowSink = (row: DirectoryRow, line: number) => Promise<void>;
/** Reads a directory source, handing every row to the sink in order; rejects with the sink's errors. */
export type RowSource = (sink: RowSink) => Promise<void>;

/** A row (or the file) the import refuses: names the line (the header is line 1) and the column. */
export class DirectoryRowError extends Error {
  readonly line: number;
  readonly column: string | undefined;
  /** What is wrong, without the line and column. */
  readonly detail: string;
  constructor(line: number, column: string | undefined, detail: string) {
    super(`line ${line}${column ? `, ${column}` : ''}: ${detail}`);
    this.name = 'DirectoryRowError';
    this.line = line;
    this.column = column;
    this.detail = detail;
  }
}

const LIMITS: Partial<Record<DirectoryColumn, number>> = {
  bank_name: 200,
  branch_name: 200,
  city: 100,
  address: 500,
};

/** Columns whose values repeat from row to row. */
const INTERNED: ReadonlySet<DirectoryColumn> = new Set([
  'country',
  'bank_code_type',
  'branch_code_type',
  'city',
] as const);

type Fail = (column: DirectoryColumn | undefined, message: string) => never;

/**
 * Checks rows and gathers their banks; `add` answers the row's branch (or undefined for a bank-only row) and
 * throws DirectoryRowError for a row that breaks a rule. A branch given twice is found by the staging table
 * (repository.applyStaging), which holds every branch.
 */
export class DirectoryBuilder {
  readonly banks: BankRecord[] = [];
  rows = 0;
  private readonly bankByCode = new Map<string, number>();
  private readonly bankByBic = new Map<string, number>();
  private readonly interned = new Map<string, string>();

  /** One string for every repeat of a value (a country, a city, a code type): 200,000 rows hold a few hundred. */
  private intern(value: string): string {
    const known = this.interned.get(value);
    if (known !== undefined) return known;
    this.interned.set(value, value);
    return value;
  }

  add(row: DirectoryRow, line: number): BranchRecord | undefined {
    this.rows++;
    const fail: Fail = (column, message) => {
      throw new DirectoryRowError(line, column, message);
    };
    const text = (column: DirectoryColumn): string | null => {
      const value = row[column]?.trim();
      if (value === undefined || value === '') return null;
      if (value.includes('\u0000')) fail(column, 'must not contain NUL characters');
      const limit = LIMITS[column];
      if (limit !== undefined && value.length > limit) fail(column, `is longer than ${limit} characters`);
      return INTERNED.has(column) ? this.intern(value) : value;
    };

    const country = text('country') ?? fail('country', 'is required');
    if (!isCountryCode(country))
      fail('country', `"${country}" is not an ISO 3166-1 alpha-2 country (upper-case)`);
    const bankName = text('bank_name') ?? fail('bank_name', 'is required');

    const bank = this.bankOf(line, country, bankName, text, fail);
    const branchCodeType = text('branch_code_type');
    const branchCodeText = text('branch_code');
    const branchBicText = text('branch_bic');
    const branchName = text('branch_name');
    const city = text('city');
    const address = text('address');
    if (branchCodeText === null && branchBicText === null) {
      if (branchCodeType !== null) fail('branch_code', 'is required with branch_code_type');
      if (branchName !== null || city !== null || address !== null) {
        fail('branch_code', 'a branch needs branch_code (with branch_code_type) or branch_bic');
      }
      return;
    }
    let codeType: BranchCodeType | null = null;
    let code: string | null = null;
    if (branchCodeText !== null || branchCodeType !== null) {
      if (branchCodeType === null) fail('branch_code_type', 'is required with branch_code');
      if (branchCodeText === null) fail('branch_code', 'is required with branch_code_type');
      if (!(BRANCH_CODE_TYPES as readonly string[]).includes(branchCodeType)) {
        fail('branch_code_type', `must be one of: ${BRANCH_CODE_TYPES.join(', ')}`);
      }
      codeType = branchCodeType as BranchCodeType;
      const rule = BRANCH_CODE_RULES[codeType];
      code = storedCode(branchCodeText);
      if (!rule.check(code)) fail('branch_code', `"${branchCodeText}" is not ${rule.describe}`);
      if (country !== rule.country)
        fail('branch_code', `a ${codeType} code belongs to ${rule.country}, not ${country}`);
    }
    let bic: string | null = null;
    if (branchBicText !== null) {
      const check = validateBic(branchBicText);
      if (!check.valid) fail('branch_bic', `"${branchBicText}" is not a BIC (${check.reason})`);
      if (check.country !== country)
        fail('branch_bic', `the BIC's country is ${check.country}, not ${country}`);
      bic = check.code.length === 8 ? `${check.code}XXX` : check.code;
    }
    return { line, bank, name: branchName, country, city, address, bic, codeType, code };
  }

  /** The bank of a row: found again by its national code or its BIC, or new; its fields must agree. */
  private bankOf(
    line: number,
    country: string,
    name: string,
    text: (column: DirectoryColumn) => string | null,
    fail: Fail,
  ): number {
    const codeTypeText = text('bank_code_type');
    const codeText = text('bank_code');
    const bicText = text('bank_bic');
    let codeType: BankCodeType | null = null;
    let code: string | null = null;
    if (codeTypeText !== null || codeText !== null) {
      if (codeTypeText === null) fail('bank_code_type', 'is required with bank_code');
      if (codeText === null) fail('bank_code', 'is required with bank_code_type');
      if (!(BANK_CODE_TYPES as readonly string[]).includes(codeTypeText)) {
        fail('bank_code_type', `must be one of: ${BANK_CODE_TYPES.join(', ')}`);
      }
      codeType = codeTypeText as BankCodeType;
      const rule = BANK_CODE_RULES[codeType];
      code = storedCode(codeText);
      if (!rule.check(code)) fail('bank_code', `"${codeText}" is not ${rule.describe}`);
      if (country !== rule.country)
        fail('bank_code', `a ${codeType} code belongs to ${rule.country}, not ${country}`);
    }
    let bic: string | null = null;
    if (bicText !== null) {
      const check = validateBic(bicText);
      if (!check.valid) fail('bank_bic', `"${bicText}" is not a BIC (${check.reason})`);
      if (check.country !== country)
        fail('bank_bic', `the BIC's country is ${check.country}, not ${country}`);
      bic = check.code.slice(0, 8);
    }
    if (code === null && bic === null) {
      fail('bank_code', 'a bank needs bank_code (with bank_code_type) or bank_bic, to be found again');
    }
    const codeKey = code === null ? undefined : `${country}|${codeType}|${code}`;
    const byCode = codeKey === undefined ? undefined : this.bankByCode.get(codeKey);
    const byBic = bic === null ? undefined : this.bankByBic.get(bic);
    if (byCode !== undefined && byBic !== undefined && byCode !== byBic) {
      fail('bank_bic', `${bic} is the BIC of another bank, on line ${this.banks[byBic]!.line}`);
    }
    const found = byCode ?? byBic;
    if (found === undefined) {
      const index = this.banks.length;
      this.banks.push({ line, name, country, bic, codeType, code });
      if (codeKey !== undefined) this.bankByCode.set(codeKey, index);
      if (bic !== null) this.bankByBic.set(bic, index);
      return index;
    }
    const bank = this.banks[found]!;
    if (bank.name !== name)
      fail('bank_name', `"${name}" differs from "${bank.name}" for the same bank on line ${bank.line}`);
    if (bank.country !== country)
      fail('country', `differs from ${bank.country} for the same bank on line ${bank.line}`);
    if (code !== null) {
      if (bank.code === null) {
        bank.codeType = codeType;
        bank.code = code;
        this.bankByCode.set(codeKey!, found);
      } else if (bank.code !== code || bank.codeType !== codeType) {
        fail('bank_code', `the same bank has ${bank.codeType} ${bank.code} on line ${bank.line}`);
      }
    }
    if (bic !== null) {
      if (bank.bic === null) {
        bank.bic = bic;
        this.bankByBic.set(bic, found);
      } else if (bank.bic !== bic) {
        fail('bank_bic', `the same bank has BIC ${bank.bic} on line ${bank.line}`);
      }
    }
    return found;
  }
}

/** Rows given in code (the sandbox seed, the IFSC package): line n is the n-th row. */
export function rowsSource(rows: Iterable<DirectoryRow>): RowSource {
  return async (sink) => {
    let line = 0;
    for (const row of rows) await sink(row, ++line);
  };
}

/** A directory file larger than the import takes. */
export class DirectoryTooLargeError extends Error {
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super(`The directory file is larger than ${Math.round(maxBytes / 1_048_576)} MiB`);
    this.name = 'DirectoryTooLargeError';
    this.maxBytes = maxBytes;
  }
}

/**
 * A directory CSV file, read as it arrives: RFC 4180 (quotes, commas and line breaks inside quotes), UTF-8
 * with or without a byte-order mark, a header line naming the columns in any order (country and bank_name
 * required, unknown names refused), blank lines skipped. Each record goes to the sink as it is parsed; neither
 * the file nor its records are held (for 200,000 rows the parser's records and line info alone would hold
 * about 200 MB, the file as one string another 20-40 MB). More than `maxBytes` bytes: DirectoryTooLargeError.
 */
export function csvSource(
  file: AsyncIterable<Buffer | string> | string,
  options: { maxBytes?: number } = {},
): RowSource {
  return async (sink) => {
    const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
    let bytes = 0;
    // Bytes that are not UTF-8 refuse the file, naming their line: decoding them would store U+FFFD in the
    // directory (a Latin-1 file's "München" as "M\uFFFDnchen"). A line break byte never occurs inside a UTF-8
    // sequence, so each line is decoded on its own and a sequence split between chunks still decodes.
    const decoder = new TextDecoder('utf-8', { fatal: true });
    let line = 1;
    const decode = (piece: Buffer, stream: boolean): string => {
      try {
        return decoder.decode(piece, { stream });
      } catch {
        throw new DirectoryRowError(line, undefined, 'the file is not valid UTF-8: save it as UTF-8');
      }
    };
    const counted = async function* (chunks: AsyncIterable<Buffer | string>) {
      for await (const chunk of chunks) {
        bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
        if (bytes > maxBytes) throw new DirectoryTooLargeError(maxBytes);
        if (typeof chunk === 'string') {
          yield chunk;
          continue;
        }
        let text = '';
        for (let start = 0; start < chunk.length; ) {
          const end = chunk.indexOf(0x0a, start) + 1 || chunk.length;
          text += decode(chunk.subarray(start, end), true);
          if (chunk[end - 1] === 0x0a) line++;
          start = end;
        }
        yield text;
      }
      const rest = decode(Buffer.alloc(0), false);
      if (rest) yield rest;
    };
    let columns: DirectoryColumn[] | undefined;
    const consume = async (records: AsyncIterable<{ record: string[]; info: { lines: number } }>) => {
      for await (const { record, info } of records) {
        if (columns === undefined) {
          columns = headerColumns(record, info.lines);
          continue;
        }
        const row: Record<string, string | null> = {};
        for (let index = 0; index < columns.length; index++) row[columns[index]!] = record[index] ?? null;
        await sink(row as DirectoryRow, info.lines);
      }
    };
    try {
      await pipeline(
        Readable.from(typeof file === 'string' ? [file] : file),
        counted,
        parse({ bom: true, skip_empty_lines: true, relax_column_count: false, info: true }),
        consume,
      );
    } catch (error) {
      // By class, not by code: csv-parse names most codes CSV_..., but not all (INVALID_OPENING_QUOTE).
      if (!(error instanceof CsvError)) throw error;
      const lines = (error as { lines?: number }).lines;
      throw new DirectoryRowError(lines ?? 1, undefined, `not valid CSV: ${(error as Error).message}`);
    }
    if (columns === undefined) {
      throw new DirectoryRowError(1, undefined, 'the file is empty: it needs a header line');
    }
  };
}

function headerColumns(record: string[], line: number): DirectoryColumn[] {
  const columns = record.map((name) => name.trim());
  columns.forEach((name, index) => {
    if (!(DIRECTORY_COLUMNS as readonly string[]).includes(name)) {
      throw new DirectoryRowError(
        line,
        undefined,
        `unknown column "${name}" (column ${index + 1}); the columns are ${DIRECTORY_COLUMNS.join(', ')}`,
      );
    }
    if (columns.indexOf(name) !== index)
      throw new DirectoryRowError(line, undefined, `column "${name}" is named twice`);
  });
  for (const required of REQUIRED_COLUMNS) {
    if (!columns.includes(required))
      throw new DirectoryRowError(line, undefined, `the header has no "${required}" column`);
  }
  return columns as DirectoryColumn[];
}
