// OFAC's SDN list in its legacy CSV release (OFAC "SDN data specification"): files without a header row,
// records of comma-separated fields, text quoted with double quotes, `-0-` for an empty field.
//   sdn.csv           ent_num, SDN_Name, SDN_Type, Program, Title, Call_Sign, Vess_type, Tonnage, GRT,
//                     Vess_flag, Vess_owner, Remarks
//   alt.csv           ent_num, alt_num, alt_type, alt_name, alt_remarks
//   add.csv           ent_num, add_num, address, city/state/province/postal code, country, add_remarks
//   sdn_comments.csv  ent_num, Remarks_Extended (optional)
// Dates of birth and nationalities are in the Remarks (`DOB 28 Jul 1963; nationality Russia; ...`).
// An individual's name is written `LAST, First Middle`; word order does not matter to the matching.
//
// sdn_comments.csv is OFAC's "spillover file". OFAC's data specification (dat_spec.txt, updated
// 09/25/2023, section "SPILLOVER FILES"; read in the copy at zk-passport/openpassport,
// common/ofacdata/original/dataspec.txt) limits Remarks to 1000 characters: a longer one is truncated in
// sdn.csv and the truncated data published in sdn_comments.csv, which follows the data specification of
// the file it belongs to, with no upper limit on row length. It gives no column table. OFAC's published
// files (copies in moov-io/watchman, test/testdata/) have two fields, ent_num and the rest of the Remarks,
// and the cut falls anywhere, mid-word too: ent_num 28264's Remarks (1000 characters) ends `...; P` and
// its comment record starts `hone Number 8613314257947; ...`; another comment record starts with the
// space after a `;`. So an entry's remarks are its Remarks and its Remarks_Extended joined with nothing
// between and neither trimmed first. Those files hold one record per ent_num (with no row limit, one is
// enough); the specification does not rule out several, so several are appended in file order.

import { ownEntry } from '../../platform/lookup.ts';
import { countryCode } from './countries.ts';
import { readCsv } from './csv.ts';
import { ofacBirthInterval } from './dates.ts';
import { distinctAliases, type EntryType, type ListEntry, ListFormatError, uniqueValues } from './types.ts';

/** The files an import needs. */
export const OFAC_FILES = ['sdn.csv', 'alt.csv', 'add.csv'] as const;
/** The spillover file: OFAC publishes it beside the others, and an import without it reads the rest. */
export const OFAC_COMMENTS_FILE = 'sdn_comments.csv';
export type OfacFiles = Record<(typeof OFAC_FILES)[number], string> & { [OFAC_COMMENTS_FILE]?: string };

const FIELD_COUNTS = { 'sdn.csv': 12, 'alt.csv': 5, 'add.csv': 6, [OFAC_COMMENTS_FILE]: 2 } as const;

/** `-0-` (often followed by a space) is OFAC's empty field. */
function value(field: string | undefined): string {
  const trimmed = (field ?? '').trim();
  return trimmed === '-0-' ? '' : trimmed;
}

/** A Remarks or Remarks_Extended field as written: a cut between the two may fall next to a space. */
function untrimmed(field: string | undefined): string {
  return value(field) === '' ? '' : (field ?? '');
}

/** Visits the records of one OFAC file, checking the field count and the ids every record has. */
function eachRecord(
  file: keyof typeof FIELD_COUNTS,
  text: string,
  visit: (id: string, fields: string[], line: number, raw: string[]) => void,
): void {
  const expected = FIELD_COUNTS[file];
  readCsv(file, text, (raw, line) => {
    if (raw.length !== expected) {
      throw new ListFormatError(file, line, `expected ${expected} fields, found ${raw.length}`);
    }
    const fields = raw.map(value);
    const id = fields[0]!;
    if (!/^[1-9]\d{0,9}$/.test(id)) {
      throw new ListFormatError(file, line, `ent_num must be a positive whole number, got "${id}"`);
    }
    if ((file === 'alt.csv' || file === 'add.csv') && !/^[1-9]\d{0,9}$/.test(fields[1]!)) {
      const column = file === 'alt.csv' ? 'alt_num' : 'add_num';
      throw new ListFormatError(file, line, `${column} must be a positive whole number`);
    }
    visit(id, fields, line, raw);
  });
}

/**
 * The Remarks_Extended of each ent_num in sdn_comments.csv (several records of one ent_num appended in
 * file order). Read before sdn.csv, so that each entry's remarks are whole when its record is read: the
 * file is small (the few entries whose remarks overflow), sdn.csv's remarks are not kept.
 */
function extendedRemarks(text: string | undefined): Map<string, string> {
  const extended = new Map<string, string>();
  if (text === undefined) return extended;
  eachRecord(OFAC_COMMENTS_FILE, text, (id, _fields, _line, raw) => {
    extended.set(id, (extended.get(id) ?? '') + untrimmed(raw[1]));
  });
  return extended;
}

const SDN_TYPES: Readonly<Record<string, EntryType>> = {
  individual: 'individual',
  vessel: 'vessel',
  aircraft: 'aircraft',
  '': 'organisation',
};

/** `SDGT] [IRGC] [IFSR`: OFAC joins several programs with `] [`. */
function programs(field: string): string[] {
  return uniqueValues(field.split(/\]\s*\[/).map((part) => part.replace(/[[\]]/g, '')));
}

/** The remark segments (`; `-separated) that start with `label` (or `alt. label`), without the label. */
function remarks(text: string, label: RegExp): string[] {
  return text
    .split(';')
    .map((segment) => segment.trim().replace(/\.$/, ''))
    .flatMap((segment) => {
      const match = label.exec(segment.replace(/^alt\.\s+/i, ''));
      return match ? [match[1]!] : [];
    });
}

export function parseOfacSdn(files: OfacFiles): ListEntry[] {
  // Until the end `countries` holds the country names the files give; then their codes.
  const entries = new Map<string, ListEntry>();
  // Records of an ent_num that sdn.csv does not hold are never looked up: they describe no entry.
  const extended = extendedRemarks(files[OFAC_COMMENTS_FILE]);
  eachRecord('sdn.csv', files['sdn.csv'], (id, fields, line, raw) => {
    if (entries.has(id)) throw new ListFormatError('sdn.csv', line, `ent_num ${id} appears twice`);
    const [, name = '', type = '', program = ''] = fields;
    if (name === '') throw new ListFormatError('sdn.csv', line, 'SDN_Name is empty');
    const entityType = ownEntry(SDN_TYPES, type.toLowerCase());
    if (entityType === undefined) {
      throw new ListFormatError(
        'sdn.csv',
        line,
        `SDN_Type must be individual, vessel, aircraft or -0-, got "${type}"`,
      );
    }
    const remark = untrimmed(raw[11]) + (extended.get(id) ?? '');
    entries.set(id, {
      entryId: id,
      entityType,
      name,
      aliases: [],
      programs: programs(program),
      countries: remarks(remark, /^(?:nationality|citizen)\s+(.+)$/i),
      birthDates: uniqueValues(
        remarks(remark, /^DOB\s+(.+)$/i).flatMap((text) => ofacBirthInterval(text) ?? []),
      ),
    });
  });
  if (entries.size === 0) throw new ListFormatError('sdn.csv', undefined, 'holds no entries');
  // Addresses and aliases of an ent_num that sdn.csv does not hold are left out: they describe no entry.
  eachRecord('alt.csv', files['alt.csv'], (id, fields, line) => {
    const aliasName = fields[3] ?? '';
    if (aliasName === '') throw new ListFormatError('alt.csv', line, 'alt_name is empty');
    entries.get(id)?.aliases.push(aliasName);
  });
  eachRecord('add.csv', files['add.csv'], (id, fields) => {
    const country = fields[4] ?? '';
    if (country !== '') entries.get(id)?.countries.push(country);
  });
  // Completed in place: a copy of every entry would double what an import holds at its peak.
  const parsed = [...entries.values()];
  for (const entry of parsed) {
    entry.aliases = distinctAliases(entry.name, entry.aliases);
    entry.countries = uniqueValues(entry.countries.flatMap((name) => countryCode(name) ?? []));
  }
  return parsed;
}
