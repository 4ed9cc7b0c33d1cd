// OpenSanctions' "targets.simple.csv" export (docs.opensanctions.org, simplified CSV): one row per target
// entity with a header row; columns id, schema, name, aliases, birth_date, countries, addresses,
// identifiers, sanctions, phones, emails, [program_ids,] dataset, first_seen, last_seen, last_change, and
// several values in one cell separated by `;`. Columns are read by name, so a column OpenSanctions adds
// later does not break the import; id, schema and name are required.
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
  const [header, ...rows] = readCsv(file, text);
  if (!header) throw new ListFormatError(file, undefined, 'is empty: expected a header row and entries');
  const columns = new Map(header.fields.map((column, index) => [column.trim().toLowerCase(), index]));
  for (const column of REQUIRED) {
    if (!columns.has(column)) {
      throw new ListFormatError(file, header.line, `the header has no "${column}" column`);
    }
  }
  const cell = (fields: string[], column: string): string | undefined => {
    const index = columns.get(column);
    return index === undefined ? undefined : fields[index];
  };
  const entries: ListEntry[] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    if (row.fields.length !== header.fields.length) {
      throw new ListFormatError(
        file,
        row.line,
        `expected ${header.fields.length} fields as in the header, found ${row.fields.length}`,
      );
    }
    const id = (cell(row.fields, 'id') ?? '').trim();
    const schema = (cell(row.fields, 'schema') ?? '').trim();
    const name = (cell(row.fields, 'name') ?? '').trim();
    if (id === '') throw new ListFormatError(file, row.line, 'id is empty');
    if (seen.has(id)) throw new ListFormatError(file, row.line, `id ${id} appears twice`);
    seen.add(id);
    if (schema === '') throw new ListFormatError(file, row.line, 'schema is empty');
    const entityType = SCHEMA_TYPES[schema];
    if (entityType === undefined) continue;
    if (name === '') throw new ListFormatError(file, row.line, 'name is empty');
    const programIds = split(cell(row.fields, 'program_ids'));
    entries.push({
      entryId: id,
      entityType,
      name,
      aliases: distinctAliases(name, split(cell(row.fields, 'aliases'))),
      programs: programIds.length > 0 ? programIds : split(cell(row.fields, 'sanctions')),
      countries: uniqueValues(
        split(cell(row.fields, 'countries')).flatMap((code) => countryCode(code) ?? []),
      ),
      birthDates: uniqueValues(
        split(cell(row.fields, 'birth_date')).flatMap((date) => isoBirthInterval(date) ?? []),
      ),
    });
  }
  if (entries.length === 0) throw new ListFormatError(file, undefined, 'holds no entries to screen against');
  return entries;
}
