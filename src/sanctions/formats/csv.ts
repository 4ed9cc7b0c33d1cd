// Reading a CSV file of a list into records with the line each starts on, so that every refusal can name it.
import { CsvError, parse } from 'csv-parse/sync';
import { ListFormatError } from './types.ts';

/** SUB (Ctrl-Z), the end-of-file mark of old DOS files. */
const SUB = String.fromCharCode(0x1a);

/**
 * One line break per line (CR LF and CR become LF), so that the parser's line count is the file's (it
 * counts a quoted CR LF twice). Done in the bytes the parser reads anyway (it parses bytes, not text):
 * a normalised copy of the text would be one more copy of the file. CR and LF bytes occur in UTF-8 only
 * as those characters.
 */
function withLineFeeds(bytes: Buffer): Buffer {
  const CR = 0x0d;
  const LF = 0x0a;
  let written = 0;
  for (let read = 0; read < bytes.length; read++) {
    const byte = bytes[read]!;
    if (byte === CR) {
      bytes[written++] = LF;
      if (bytes[read + 1] === LF) read++;
    } else bytes[written++] = byte;
  }
  return bytes.subarray(0, written);
}

/**
 * Reads `text` (RFC 4180 quoting) and hands each record to `visit` with the 1-based line it starts on, as
 * the parser reads it: no array of all records is built, so a large file costs little more memory than
 * its entries. Line breaks are CR LF, LF or CR; a trailing SUB (Ctrl-Z), which OFAC's files end with, is
 * dropped; empty lines are skipped (and counted). A syntax error names its line.
 */
export function readCsv(file: string, text: string, visit: (fields: string[], line: number) => void): void {
  let trimmed = text.replace(/^\uFEFF/, '').trimEnd();
  while (trimmed.endsWith(SUB)) trimmed = trimmed.slice(0, -1).trimEnd();
  if (trimmed === '') return;
  const normalised = withLineFeeds(Buffer.from(trimmed, 'utf8'));
  // A record takes one line plus the line breaks inside its quoted fields; an empty line is one empty field.
  let line = 1;
  try {
    parse(normalised, {
      relax_column_count: true,
      on_record: (fields: string[]) => {
        // PostgreSQL text cannot hold NUL: such a file is refused here, naming the line, not at the insert.
        if (fields.some((field) => field.includes('\u0000'))) {
          throw new ListFormatError(file, line, 'holds a NUL character, which no entry can hold');
        }
        if (!(fields.length === 1 && fields[0] === '')) visit(fields, line);
        line += 1;
        for (const field of fields) {
          for (let at = field.indexOf('\n'); at >= 0; at = field.indexOf('\n', at + 1)) line++;
        }
        return null;
      },
    });
  } catch (error) {
    if (error instanceof CsvError) {
      const at = (error as CsvError & { lines?: number }).lines;
      throw new ListFormatError(file, at, `not valid CSV (${error.message.replace(/ at line \d+/, '')})`);
    }
    throw error;
  }
}
