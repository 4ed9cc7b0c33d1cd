// Reading a CSV file of a list into records with the line each starts on, so that every refusal can name it.
import { CsvError, parse } from 'csv-parse/sync';
import { ListFormatError } from './types.ts';

/** SUB (Ctrl-Z), the end-of-file mark of old DOS files. */
const SUB = String.fromCharCode(0x1a);

export interface CsvRecord {
  fields: string[];
  /** 1-based line of the file where the record starts. */
  line: number;
}

/**
 * Parses `text` (RFC 4180 quoting). Line breaks are CR LF, LF or CR; a trailing SUB (Ctrl-Z), which OFAC's
 * files end with, is dropped; empty lines are skipped. A syntax error names its line.
 */
export function readCsv(file: string, text: string): CsvRecord[] {
  // One line break per line, so that the parser's line count is the file's (it counts a quoted CR LF twice).
  let normalised = text
    .replace(/^\uFEFF/, '')
    .replace(/\r\n?/g, '\n')
    .trimEnd();
  while (normalised.endsWith(SUB)) normalised = normalised.slice(0, -1).trimEnd();
  if (normalised === '') return [];
  let parsed: { record: string[]; info: { lines: number }; raw: string }[];
  try {
    parsed = parse(normalised, {
      info: true,
      raw: true,
      relax_column_count: true,
      skip_empty_lines: true,
    }) as unknown as typeof parsed;
  } catch (error) {
    if (error instanceof CsvError) {
      const line = (error as CsvError & { lines?: number }).lines;
      throw new ListFormatError(file, line, `not valid CSV (${error.message.replace(/ at line \d+/, '')})`);
    }
    throw error;
  }
  return parsed.map((entry) => {
    const breaks = entry.raw.replace(/\n$/, '').split('\n').length - 1;
    return { fields: entry.record, line: entry.info.lines - breaks };
  });
}
