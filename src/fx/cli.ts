// `payment-service admin import-fx-rates FILE` (D15, D23): parses an ECB reference rates XML file here,
// in the CLI, and posts its latest day to the operator API as one rate set.
import { readFile } from 'node:fs/promises';
import type { CliCommand } from '../platform/area.ts';
import { parseEcbXml } from './ecb.ts';

export const FX_RATES_ADMIN_PATH = '/admin/v1/fx-rates';

export const importFxRatesCommand: CliCommand = {
  name: 'import-fx-rates',
  usage: 'import-fx-rates FILE   (ECB eurofxref-daily.xml, or a 90-day/historical file: its latest day)',
  async requests(positionals) {
    const [file] = positionals;
    if (file === undefined) throw new Error('the ECB XML file to import is missing');
    const xml = await readFile(file, 'utf8');
    return [{ method: 'POST', path: FX_RATES_ADMIN_PATH, body: parseEcbXml(xml) }];
  },
};
