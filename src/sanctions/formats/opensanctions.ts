// OpenSanctions' "targets.simple.csv" export (docs.opensanctions.org, simplified CSV): one row per target
// entity with a header row; columns id, schema, name, aliases, birth_date, countries, addresses,
// identifiers, sanctions, phones, emails, [program_ids,] dataset, first_seen, last_seen, last_change, and
// several values in one cell separated by `;`. Columns are read by name, so a column OpenSanctions adds
// later does not break the import; id, schema and name are required.

import { ownEntry } from '../../platform/lookup.ts';
import { countryCode } from './countries.ts';
import { readCsv } from './csv.ts';
import { isoBirthInterval } from './dates.ts';
import { distinctAliases, type EntryType, type ListEntry, ListFormatError, uniqueValues } from './types.ts';

export const OPENSANCTIONS_FILE = 'targets.simple.csv';

/**
 * FollowTheMoney schemata of the entities a name can be screened against. Other targets (crypto wallets,
 * securities) carry no name of a party and are left out.
 */
const SCHEMA_TYPES: Readonly<Record<string, EntryType>> = {
  Person: 'individual',
  Organization: 'organisation',
  Company: 'organisation',
  PublicBody: 'organisation',
  LegalEntity: 'unknown',
  Vessel: 'vessel',
  Airplane: 'aircraft',
};

const REQUIRED = ['id', 'schema', 'name'] as const;

const split = (cell: string | undefined): string[] => uniqueValues((cell ?? '').split(';'));

export function parseOpenSanctions(text: string): ListEntry[] {
  const file = OPENSANCTIONS_FILE;
  let header: string[] | undefined;
  let columns = new Map<string, number>();
  const cell = (fields: string[], column: string): string | undefined => {
    const index = columns.get(column);
    return index === undefined ? undefined : fields[index];
  };
  const entries: ListEntry[] = [];
  const seen = new Set<string>();
  readCsv(file, text, (fields, line) => {
    if (header === undefined) {
      header = fields;
      columns = new Map(fields.map((column, index) => [column.trim().toLowerCase(), index]));
      for (const column of REQUIRED) {
        if (!columns.has(column))
          throw new ListFormatError(file, line, `the header has no "${column}" column`);
      }
      return;
    }
    if (fields.length !== header.length) {
      throw new ListFormatError(
        file,
        line,
        `expected ${header.length} fields as in the header, found ${fields.length}`,
      );
    }
    const id = (cell(fields, 'id') ?? '').trim();
    const schema = (cell(fields, 'schema') ?? '').trim();
    const name = (cell(fields, 'name') ?? '').trim();
    if (id === '') throw new ListFormatError(file, line, 'id is empty');
    if (seen.has(id)) throw new ListFormatError(file, line, `id ${id} appears twice`);
    seen.add(id);
    if (schema === '') throw new ListFormatError(file, line, 'schema is empty');
    const entityType = ownEntry(SCHEMA_TYPES, schema);
    if (entityType === undefined) return;
    if (name === '') throw new ListFormatError(file, line, 'name is empty');
    const programIds = split(cell(fields, 'program_ids'));
    entries.push({
      entryId: id,
      entityType,
      name,
      aliases: distinctAliases(name, split(cell(fields, 'aliases'))),
      programs: programIds.length > 0 ? programIds : split(cell(fields, 'sanctions')),
      countries: uniqueValues(split(cell(fields, 'countries')).flatMap((code) => countryCode(code) ?? [])),
      birthDates: uniqueValues(
        split(cell(fields, 'birth_date')).flatMap((date) => isoBirthInterval(date) ?? []),
      ),
    });
  });
  if (header === undefined) {
    throw new ListFormatError(file, undefined, 'is empty: expected a header row and entries');
  }
  if (entries.length === 0) throw new ListFormatError(file, undefined, 'holds no entries to screen against');
  return entries;
}
