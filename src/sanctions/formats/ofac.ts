// OFAC's SDN list in its legacy CSV release (OFAC "SDN data specification"): three files without a header
// row, records of comma-separated fields, text quoted with double quotes, `-0-` for an empty field.
//   sdn.csv  ent_num, SDN_Name, SDN_Type, Program, Title, Call_Sign, Vess_type, Tonnage, GRT, Vess_flag,
//            Vess_owner, Remarks
//   alt.csv  ent_num, alt_num, alt_type, alt_name, alt_remarks
//   add.csv  ent_num, add_num, address, city/state/province/postal code, country, add_remarks
// Dates of birth and nationalities are in the Remarks (`DOB 28 Jul 1963; nationality Russia; ...`).
// An individual's name is written `LAST, First Middle`; word order does not matter to the matching.

import { ownEntry } from '../../platform/lookup.ts';
import { countryCode } from './countries.ts';
import { readCsv } from './csv.ts';
import { ofacBirthInterval } from './dates.ts';
import { distinctAliases, type EntryType, type ListEntry, ListFormatError, uniqueValues } from './types.ts';

export const OFAC_FILES = ['sdn.csv', 'alt.csv', 'add.csv'] as const;
export type OfacFiles = Record<(typeof OFAC_FILES)[number], string>;

const FIELD_COUNTS = { 'sdn.csv': 12, 'alt.csv': 5, 'add.csv': 6 } as const;

/** `-0-` (often followed by a space) is OFAC's empty field. */
function value(field: string | undefined): string {
  const trimmed = (field ?? '').trim();
  return trimmed === '-0-' ? '' : trimmed;
}

/** Visits the records of one OFAC file, checking the field count and the ids every record has. */
function eachRecord(
  file: keyof typeof FIELD_COUNTS,
  text: string,
  visit: (id: string, fields: string[], line: number) => void,
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
    if (file !== 'sdn.csv' && !/^[1-9]\d{0,9}$/.test(fields[1]!)) {
      const column = file === 'alt.csv' ? 'alt_num' : 'add_num';
      throw new ListFormatError(file, line, `${column} must be a positive whole number`);
    }
    visit(id, fields, line);
  });
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
  eachRecord('sdn.csv', files['sdn.csv'], (id, fields, line) => {
    if (entries.has(id)) throw new ListFormatError('sdn.csv', line, `ent_num ${id} appears twice`);
    const [, name = '', type = '', program = '', , , , , , , , remark = ''] = fields;
    if (name === '') throw new ListFormatError('sdn.csv', line, 'SDN_Name is empty');
    const entityType = ownEntry(SDN_TYPES, type.toLowerCase());
    if (entityType === undefined) {
      throw new ListFormatError(
        'sdn.csv',
        line,
        `SDN_Type must be individual, vessel, aircraft or -0-, got "${type}"`,
      );
    }
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
