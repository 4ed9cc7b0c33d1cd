// `payment-service admin import-banks ...`: sends a directory CSV file to the operator API, or asks it to load
// India's IFSC directory from the bundled ifsc package (D17, D23).
import { readFile } from 'node:fs/promises';
import type { CliCommand } from '../platform/area.ts';

export const importBanksCommand: CliCommand = {
  name: 'import-banks',
  usage: 'import-banks FILE.csv | import-banks --ifsc-package [--ifsc-banks SBIN,HDFC]',
  options: { 'ifsc-package': { type: 'boolean' }, 'ifsc-banks': { type: 'string' } },
  async requests(positionals, values) {
    if (values['ifsc-package']) {
      if (positionals.length > 0) throw new Error('give either FILE.csv or --ifsc-package, not both');
      const banks =
        typeof values['ifsc-banks'] === 'string'
          ? values['ifsc-banks']
              .split(',')
              .map((code) => code.trim().toUpperCase())
              .filter(Boolean)
          : undefined;
      return [{ method: 'POST', path: '/admin/v1/banks/import/ifsc-package', body: banks ? { banks } : {} }];
    }
    if (values['ifsc-banks'] !== undefined) throw new Error('--ifsc-banks goes with --ifsc-package');
    const [file, ...rest] = positionals;
    if (!file) throw new Error('needs the CSV file to import (or --ifsc-package)');
    if (rest.length > 0) throw new Error('takes one file');
    const text = await readFile(file, 'utf8');
    return [{ method: 'POST', path: '/admin/v1/banks/import', body: text, contentType: 'text/csv' }];
  },
};
