// Sanctions lists (D18): imports from the publishers' own formats, each replacing its list in one
// transaction and bumping its version; the list of lists. A file the parser refuses changes nothing: it is
// parsed whole before the transaction starts, and the error names the file and the line.
import { withTransaction } from '../db/pool.ts';
import type { AppDeps } from '../platform/deps.ts';
import { validationFailed } from '../platform/errors.ts';
import { toIso } from '../platform/time.ts';
import { OFAC_COMMENTS_FILE, OFAC_FILES, type OfacFiles, parseOfacSdn } from './formats/ofac.ts';
import { OPENSANCTIONS_FILE, parseOpenSanctions } from './formats/opensanctions.ts';
import { type ListEntry, ListFormatError } from './formats/types.ts';
import * as repo from './repository.ts';
import { SANDBOX_LIST } from './sandbox.ts';
import type { ImportListInput, ListFormat, SanctionsListView } from './schemas.ts';

/** The list code and name an import gets when the operator names none. */
export const DEFAULT_LISTS: Readonly<Record<ListFormat, { code: string; name: string }>> = {
  'ofac-sdn-csv': { code: 'ofac-sdn', name: 'OFAC Specially Designated Nationals (SDN)' },
  'opensanctions-csv': { code: 'opensanctions', name: 'OpenSanctions' },
};

export function listView(row: repo.ListRow): SanctionsListView {
  return {
    code: row.code,
    name: row.name,
    entries: row.entries,
    aliases: row.aliases,
    version: row.version,
    imported_at: toIso(row.imported_at),
  };
}

export async function listLists(deps: AppDeps): Promise<SanctionsListView[]> {
  return (await repo.listLists(deps.pool)).map(listView);
}

function requiredFile(files: ImportListInput['files'], name: keyof ImportListInput['files']): string {
  const text = files[name];
  if (text === undefined)
    throw validationFailed(`files.${name}`, `files.${name} is required for this format`);
  return text;
}

/** Parses the files of one import; a refused file is 422 naming it (`files.sdn.csv`) and its line. */
export function parseImport(input: ImportListInput): ListEntry[] {
  const expected: readonly string[] =
    input.format === 'ofac-sdn-csv' ? [...OFAC_FILES, OFAC_COMMENTS_FILE] : [OPENSANCTIONS_FILE];
  for (const name of Object.keys(input.files)) {
    if (!expected.includes(name)) {
      throw validationFailed(`files.${name}`, `files.${name} is not a file of format ${input.format}`);
    }
  }
  try {
    if (input.format === 'ofac-sdn-csv') {
      const files: OfacFiles = {
        'sdn.csv': requiredFile(input.files, 'sdn.csv'),
        'alt.csv': requiredFile(input.files, 'alt.csv'),
        'add.csv': requiredFile(input.files, 'add.csv'),
      };
      const comments = input.files[OFAC_COMMENTS_FILE];
      if (comments !== undefined) files[OFAC_COMMENTS_FILE] = comments;
      return parseOfacSdn(files);
    }
    return parseOpenSanctions(requiredFile(input.files, OPENSANCTIONS_FILE));
  } catch (error) {
    if (error instanceof ListFormatError) throw validationFailed(`files.${error.file}`, error.message);
    throw error;
  }
}

/**
 * Replaces list `code` with the entries of the files, in one transaction: the previous entries and version
 * stay until it commits, and stay for good when anything fails. The sandbox list is seeded, not imported.
 */
export async function importList(
  deps: AppDeps,
  code: string,
  input: ImportListInput,
): Promise<SanctionsListView> {
  if (code === SANDBOX_LIST) {
    throw validationFailed('code', `The list code ${SANDBOX_LIST} is reserved for the sandbox list`);
  }
  const entries = parseImport(input);
  // The file texts (megabytes, held by the request body until the answer) are not needed any more.
  for (const name of Object.keys(input.files)) delete input.files[name as keyof ImportListInput['files']];
  const row = await withTransaction(deps.pool, async (tx) => {
    const list = await repo.upsertListVersion(tx, {
      code,
      name: input.name,
      defaultName: DEFAULT_LISTS[input.format].name,
      format: input.format,
      entries: entries.length,
      aliases: entries.reduce((sum, entry) => sum + entry.aliases.length, 0),
    });
    await repo.deleteEntries(tx, code);
    await repo.insertEntries(tx, code, entries);
    return list;
  });
  return listView(row);
}
