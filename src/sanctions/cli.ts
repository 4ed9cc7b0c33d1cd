// `payment-service admin import-sanctions --format ofac-sdn-csv|opensanctions-csv PATH...`: reads the
// publisher's files and sends them, as text, in one request to the operator API's import route (one
// request, so one transaction: the list is replaced whole or not at all).
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { CliCommand, CliRequest } from '../platform/area.ts';
import { OFAC_COMMENTS_FILE, OFAC_FILES } from './formats/ofac.ts';
import { OPENSANCTIONS_FILE } from './formats/opensanctions.ts';
import { DEFAULT_LISTS } from './lists-service.ts';
import { LIST_FORMATS, type ListFormat } from './schemas.ts';

/**
 * A list file as text. The publishers write UTF-8; a file that is not valid UTF-8 is read as Windows-1252
 * (what older exports of the OFAC files use), never with replacement characters.
 */
export function decodeListFile(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return new TextDecoder('windows-1252').decode(bytes);
  }
}

/**
 * The OFAC files named by `paths` (a directory holding them, or the files), by their names in any case:
 * sdn.csv, alt.csv and add.csv are required; sdn_comments.csv is sent when it is there.
 */
async function ofacFiles(paths: string[]): Promise<Record<string, string>> {
  const wanted: readonly string[] = [...OFAC_FILES, OFAC_COMMENTS_FILE];
  let byName: Map<string, string>;
  if (paths.length === 1 && (await stat(paths[0]!)).isDirectory()) {
    const directory = paths[0]!;
    const present = new Map(
      (await readdir(directory)).map((file) => [file.toLowerCase(), path.join(directory, file)] as const),
    );
    byName = new Map(wanted.flatMap((file) => (present.has(file) ? [[file, present.get(file)!]] : [])));
  } else {
    byName = new Map(paths.map((file) => [path.basename(file).toLowerCase(), file] as const));
    // A file named otherwise would be left out unsaid: sdn_comments.csv under another name, say, whose
    // dates of birth and nationalities the import would then lack.
    for (const [name, file] of byName) {
      if (!wanted.includes(name)) {
        throw new Error(`${file} is not an OFAC file: give files named ${wanted.join(', ')}`);
      }
    }
  }
  const files: Record<string, string> = {};
  for (const name of OFAC_FILES) {
    const file = byName.get(name);
    if (!file)
      throw new Error(
        `${name} not found: give a directory holding sdn.csv, alt.csv and add.csv, or the three files`,
      );
    files[name] = decodeListFile(await readFile(file));
  }
  const comments = byName.get(OFAC_COMMENTS_FILE);
  if (comments) files[OFAC_COMMENTS_FILE] = decodeListFile(await readFile(comments));
  return files;
}

export const importSanctionsCommand: CliCommand = {
  name: 'import-sanctions',
  usage:
    'import-sanctions --format ofac-sdn-csv|opensanctions-csv PATH... [--list <code>] [--name <list name>]\n' +
    '      ofac-sdn-csv: PATH is a directory holding sdn.csv, alt.csv, add.csv and, when published,\n' +
    '      sdn_comments.csv, or those files;\n' +
    '      opensanctions-csv: PATH is targets.simple.csv. Default codes: ofac-sdn, opensanctions',
  options: { format: { type: 'string' }, list: { type: 'string' } },
  async requests(positionals, values): Promise<CliRequest[]> {
    const format = values.format;
    if (typeof format !== 'string' || !(LIST_FORMATS as readonly string[]).includes(format)) {
      throw new Error(`--format must be one of ${LIST_FORMATS.join(', ')}`);
    }
    if (positionals.length === 0) throw new Error('give the PATH of the list files');
    const listFormat = format as ListFormat;
    const files =
      listFormat === 'ofac-sdn-csv'
        ? await ofacFiles(positionals)
        : { [OPENSANCTIONS_FILE]: decodeListFile(await readFile(positionals[0]!)) };
    if (listFormat === 'opensanctions-csv' && positionals.length > 1) {
      throw new Error('opensanctions-csv takes one file, targets.simple.csv');
    }
    const code = typeof values.list === 'string' ? values.list : DEFAULT_LISTS[listFormat].code;
    return [
      {
        method: 'POST',
        path: `/admin/v1/sanctions/lists/${encodeURIComponent(code)}/import`,
        body: {
          format: listFormat,
          ...(typeof values.name === 'string' ? { name: values.name } : {}),
          files,
        },
      },
    ];
  },
};
