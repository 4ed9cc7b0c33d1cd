// India's IFSC directory from Razorpay's `ifsc` package (MIT; the data is scraped from the RBI's NEFT and
// RTGS lists and NPCI's lists, see the package README). What the npm package ships offline, and so what this
// import loads:
//   - src/IFSC.json: every IFSC it knows (about 177,000), as branch codes grouped by the 4-letter bank code;
//   - src/banknames.json: the names of the bank codes;
//   - src/sublet.json and src/custom-sublets.json: IFSCs (or IFSC prefixes) that a sponsor bank lends to a
//     sub-member bank (a co-operative bank that clears through it): the branch belongs to the sub-member.
// It has no branch names, cities or addresses (those are only in the release CSV and the online API), and no
// BICs. So each IFSC becomes a branch (code_type ifsc) with name, city and address null, under the bank that
// owns it; each owning bank becomes a bank with national_code_type ifsc and its 4-letter code. A custom
// sublet that names its sub-member only by name, without a bank code (36 prefixes in version 2.0.50), stays
// with the sponsor bank: the directory finds a bank again by its code.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { validationFailed } from '../platform/errors.ts';
import type { DirectoryRow } from './directory.ts';

const require = createRequire(import.meta.url);

async function packageJson<T>(file: string): Promise<T> {
  return JSON.parse(await readFile(require.resolve(`ifsc/src/${file}`), 'utf8')) as T;
}

export interface IfscPackageData {
  /** Bank code -> branch codes (numbers are zero-padded to 6 digits). */
  ifsc: Record<string, (number | string)[]>;
  names: Record<string, string>;
  sublet: Record<string, string>;
  customSublets: Record<string, string>;
}

export async function loadIfscPackage(): Promise<IfscPackageData> {
  const [ifsc, names, sublet, customSublets] = await Promise.all([
    packageJson<IfscPackageData['ifsc']>('IFSC.json'),
    packageJson<IfscPackageData['names']>('banknames.json'),
    packageJson<IfscPackageData['sublet']>('sublet.json'),
    packageJson<IfscPackageData['customSublets']>('custom-sublets.json'),
  ]);
  return { ifsc, names, sublet, customSublets };
}

/** The IFSC of a bank code and a branch code as IFSC.json lists it (numbers lose their leading zeros there). */
export function ifscOf(bankCode: string, branch: number | string): string {
  return `${bankCode}0${typeof branch === 'number' ? String(branch).padStart(6, '0') : branch}`;
}

/** Directory rows of the package: one per IFSC, sorted by IFSC, each naming the bank that owns the branch. */
export function* ifscPackageRows(
  data: IfscPackageData,
  bankCodes?: readonly string[],
): Generator<DirectoryRow> {
  // Custom sublets that name a bank code, longest prefix first (Razorpay's own libraries match by prefix).
  const prefixes = Object.entries(data.customSublets)
    .filter(([, owner]) => /^[A-Z]{4}$/.test(owner))
    .sort(([a], [b]) => b.length - a.length);
  const ownerOf = (ifsc: string, bankCode: string): string =>
    data.sublet[ifsc] ?? prefixes.find(([prefix]) => ifsc.startsWith(prefix))?.[1] ?? bankCode;
  const codes = (bankCodes ?? Object.keys(data.ifsc)).toSorted();
  for (const bankCode of codes) {
    const ifscs = (data.ifsc[bankCode] ?? []).map((branch) => ifscOf(bankCode, branch)).sort();
    for (const ifsc of ifscs) {
      const owner = ownerOf(ifsc, bankCode);
      yield {
        country: 'IN',
        bank_name: data.names[owner] ?? owner,
        bank_code_type: 'ifsc',
        bank_code: owner,
        branch_code_type: 'ifsc',
        branch_code: ifsc,
      };
    }
  }
}

/** The package's rows, or only those of the IFSCs of `bankCodes` (4-letter IFSC bank codes, 422 if unknown). */
export async function ifscPackageRowsOf(bankCodes?: readonly string[]): Promise<Iterable<DirectoryRow>> {
  const data = await loadIfscPackage();
  bankCodes?.forEach((code, index) => {
    if (!Object.hasOwn(data.ifsc, code)) {
      throw validationFailed(`banks[${index}]`, `The ifsc package lists no IFSC of bank code ${code}`);
    }
  });
  return ifscPackageRows(data, bankCodes ? [...new Set(bankCodes)] : undefined);
}
