// What every list format is parsed into: the entries of one list, ready to store and to index.

/** The entity types of list entries (the hits' `entity_type`). `unknown`: the publisher does not say. */
export const ENTRY_TYPES = ['individual', 'organisation', 'vessel', 'aircraft', 'unknown'] as const;
export type EntryType = (typeof ENTRY_TYPES)[number];

export interface ListEntry {
  /** The publisher's id of the entry (OFAC `ent_num`, OpenSanctions `id`). */
  entryId: string;
  entityType: EntryType;
  name: string;
  /** Other names of the entry, without its primary name, each once. */
  aliases: string[];
  programs: string[];
  /** ISO 3166-1 alpha-2, upper case, each once. */
  countries: string[];
  /** Dates of birth as ISO 8601 intervals `YYYY-MM-DD/YYYY-MM-DD` (a year is its whole year). */
  birthDates: string[];
}

/** A file the import refuses: names the file and the line, and says what is wrong. */
export class ListFormatError extends Error {
  readonly file: string;
  readonly line: number | undefined;
  constructor(file: string, line: number | undefined, problem: string) {
    super(line === undefined ? `${file}: ${problem}` : `${file} line ${line}: ${problem}`);
    this.name = 'ListFormatError';
    this.file = file;
    this.line = line;
  }
}

/** Unique non-empty values in first-seen order. */
export function uniqueValues(values: Iterable<string>): string[] {
  const seen = new Set<string>();
  for (const value of values) {
    const trimmed = value.trim();
    if (trimmed !== '') seen.add(trimmed);
  }
  return [...seen];
}

/** Aliases without the primary name and without repeats (compared case-insensitively). */
export function distinctAliases(name: string, aliases: Iterable<string>): string[] {
  const seen = new Set([name.trim().toLowerCase()]);
  const kept: string[] = [];
  for (const alias of aliases) {
    const trimmed = alias.trim();
    const key = trimmed.toLowerCase();
    if (trimmed === '' || seen.has(key)) continue;
    seen.add(key);
    kept.push(trimmed);
  }
  return kept;
}
