// The sandbox's bank directory (D24): real, public identifiers of real banks in every country a sandbox
// corridor pays to, with valid check digits where the scheme has them (test/banks/sandbox.test.ts checks each
// one with the validators, and every IFSC against Razorpay's list). It includes the banks behind the IBAN
// registry's example IBANs DE89370400440532013000 (Commerzbank), GB29NWBK60161331926819 (NatWest) and
// FR1420041010050500013M02606 (La Banque Postale), and branches where a country's scheme is per branch
// (IFSC in India, routing numbers in the US, sort codes in the UK, Bankleitzahlen in Germany).
// Seeded on every sandbox start through the import's upsert, so a second start changes nothing.
import type { AppDeps } from '../platform/deps.ts';
import { type DirectoryRow, rowsSource } from './directory.ts';
import { importDirectory } from './service.ts';

type Bank = Pick<DirectoryRow, 'country' | 'bank_name' | 'bank_bic' | 'bank_code_type' | 'bank_code'>;
type Branch = Omit<DirectoryRow, keyof Bank>;

const bank = (country: string, name: string, bic: string, codeType?: string, code?: string): Bank => ({
  country,
  bank_name: name,
  bank_bic: bic,
  bank_code_type: codeType ?? null,
  bank_code: code ?? null,
});

const SANDBOX_BANKS: readonly { bank: Bank; branches?: Branch[] }[] = [
  // Germany: BLZ (the DE IBAN's bank code).
  {
    bank: bank('DE', 'Commerzbank', 'COBADEFFXXX', 'blz', '37040044'),
    branches: [
      {
        branch_name: 'Commerzbank Köln',
        city: 'Köln',
        branch_code_type: 'blz',
        branch_code: '37040044',
        branch_bic: 'COBADEFFXXX',
      },
    ],
  },
  {
    bank: bank('DE', 'Deutsche Bank', 'DEUTDEFFXXX', 'blz', '50070010'),
    branches: [
      {
        branch_name: 'Deutsche Bank Frankfurt am Main',
        city: 'Frankfurt am Main',
        branch_code_type: 'blz',
        branch_code: '50070010',
        branch_bic: 'DEUTDEFFXXX',
      },
    ],
  },
  {
    bank: bank('DE', 'Berliner Sparkasse', 'BELADEBEXXX', 'blz', '10050000'),
    branches: [
      {
        branch_name: 'Berliner Sparkasse',
        city: 'Berlin',
        branch_code_type: 'blz',
        branch_code: '10050000',
        branch_bic: 'BELADEBEXXX',
      },
    ],
  },
  // France: code banque (the FR IBAN's bank code).
  { bank: bank('FR', 'La Banque Postale', 'PSSTFRPPXXX', 'fr_bank', '20041') },
  { bank: bank('FR', 'BNP Paribas', 'BNPAFRPPXXX', 'fr_bank', '30004') },
  { bank: bank('FR', 'Société Générale', 'SOGEFRPPXXX', 'fr_bank', '30003') },
  // Spain: código de entidad (the ES IBAN's bank code).
  { bank: bank('ES', 'CaixaBank', 'CAIXESBBXXX', 'es_bank', '2100') },
  { bank: bank('ES', 'Banco Santander', 'BSCHESMMXXX', 'es_bank', '0049') },
  { bank: bank('ES', 'Banco Bilbao Vizcaya Argentaria (BBVA)', 'BBVAESMMXXX', 'es_bank', '0182') },
  // United Kingdom: sort codes per branch; the GB IBAN's bank code is the BIC's first 4 letters.
  {
    bank: bank('GB', 'National Westminster Bank (NatWest)', 'NWBKGB2L'),
    branches: [{ branch_code_type: 'sort_code', branch_code: '60-16-13' }],
  },
  { bank: bank('GB', 'Barclays Bank', 'BARCGB22') },
  {
    bank: bank('GB', 'Monzo Bank', 'MONZGB2L'),
    branches: [
      { branch_name: 'Monzo Bank', city: 'London', branch_code_type: 'sort_code', branch_code: '04-00-04' },
    ],
  },
  {
    bank: bank('GB', 'Starling Bank', 'SRLGGB2L'),
    branches: [
      {
        branch_name: 'Starling Bank',
        city: 'London',
        branch_code_type: 'sort_code',
        branch_code: '60-83-71',
      },
    ],
  },
  // India: IFSC per branch; the bank's national code is the IFSC's first 4 letters.
  {
    bank: bank('IN', 'State Bank of India', 'SBININBB', 'ifsc', 'SBIN'),
    branches: [
      {
        branch_name: 'Parliament Street',
        city: 'New Delhi',
        branch_code_type: 'ifsc',
        branch_code: 'SBIN0001707',
      },
      {
        branch_name: 'Dadar',
        city: 'Mumbai',
        address: 'Near Dadar Post, Mumbai 400014',
        branch_code_type: 'ifsc',
        branch_code: 'SBIN0000353',
      },
    ],
  },
  {
    bank: bank('IN', 'HDFC Bank', 'HDFCINBB', 'ifsc', 'HDFC'),
    branches: [
      {
        branch_name: 'Belgaum',
        city: 'Belgaum',
        address: '4830/28A, Dr. Ambedkar Road, Belgaum 590002',
        branch_code_type: 'ifsc',
        branch_code: 'HDFC0000253',
      },
    ],
  },
  {
    bank: bank('IN', 'The Hongkong and Shanghai Banking Corporation', 'HSBCINBB', 'ifsc', 'HSBC'),
    branches: [
      {
        branch_name: 'Main Branch Mumbai',
        city: 'Mumbai',
        address: '52/60 M G Road, Mumbai 400001',
        branch_code_type: 'ifsc',
        branch_code: 'HSBC0400002',
      },
    ],
  },
  // Mexico: the CLABE's first 3 digits (ABM bank code).
  { bank: bank('MX', 'Banamex (Banco Nacional de México)', 'BNMXMXMM', 'clabe', '002') },
  { bank: bank('MX', 'BBVA México', 'BCMRMXMM', 'clabe', '012') },
  { bank: bank('MX', 'Banco Santander México', 'BMSXMXMM', 'clabe', '014') },
  { bank: bank('MX', 'HSBC México', 'BIMEMXMM', 'clabe', '021') },
  { bank: bank('MX', 'Banorte', 'MENOMXMT', 'clabe', '072') },
  // Nigeria: CBN bank codes (NUBAN).
  { bank: bank('NG', 'First Bank of Nigeria', 'FBNINGLA', 'nuban', '011') },
  { bank: bank('NG', 'United Bank for Africa', 'UNAFNGLA', 'nuban', '033') },
  { bank: bank('NG', 'Access Bank', 'ABNGNGLA', 'nuban', '044') },
  { bank: bank('NG', 'Zenith Bank', 'ZEIBNGLA', 'nuban', '057') },
  { bank: bank('NG', 'Guaranty Trust Bank', 'GTBINGLA', 'nuban', '058') },
  // Philippines: BIC.
  { bank: bank('PH', 'BDO Unibank', 'BNORPHMM') },
  { bank: bank('PH', 'Bank of the Philippine Islands', 'BOPIPHMM') },
  { bank: bank('PH', 'Metropolitan Bank and Trust Company (Metrobank)', 'MBTCPHMM') },
  { bank: bank('PH', 'Land Bank of the Philippines', 'TLBPPHMM') },
  // Kenya: paid to mobile wallets in the sandbox; two banks for completeness.
  { bank: bank('KE', 'KCB Bank Kenya', 'KCBLKENX') },
  { bank: bank('KE', 'Equity Bank Kenya', 'EQBLKENA') },
  // United States: ABA routing numbers per branch (office); the bank's national code is its main one.
  {
    bank: bank('US', 'JPMorgan Chase Bank', 'CHASUS33', 'aba', '021000021'),
    branches: [
      {
        branch_name: 'JPMorgan Chase Bank, New York',
        city: 'New York',
        branch_code_type: 'aba',
        branch_code: '021000021',
      },
    ],
  },
  {
    bank: bank('US', 'Bank of America', 'BOFAUS3N', 'aba', '026009593'),
    branches: [
      {
        branch_name: 'Bank of America, New York',
        city: 'New York',
        branch_code_type: 'aba',
        branch_code: '026009593',
      },
      { branch_name: 'Bank of America, California', branch_code_type: 'aba', branch_code: '121000358' },
    ],
  },
  {
    bank: bank('US', 'Wells Fargo Bank', 'WFBIUS6S', 'aba', '121000248'),
    branches: [
      {
        branch_name: 'Wells Fargo Bank, San Francisco',
        city: 'San Francisco',
        branch_code_type: 'aba',
        branch_code: '121000248',
      },
    ],
  },
  {
    bank: bank('US', 'Citibank', 'CITIUS33', 'aba', '021000089'),
    branches: [
      {
        branch_name: 'Citibank, New York',
        city: 'New York',
        branch_code_type: 'aba',
        branch_code: '021000089',
      },
    ],
  },
];

/** The sandbox directory as import rows: a bank's first row carries its first branch, if any. */
export function sandboxDirectoryRows(): DirectoryRow[] {
  return SANDBOX_BANKS.flatMap(({ bank: row, branches }) =>
    branches && branches.length > 0 ? branches.map((branch) => ({ ...row, ...branch })) : [{ ...row }],
  );
}

/** D24: the sandbox directory, upserted on every sandbox start (a second run changes nothing). */
export async function seedSandboxDirectory(deps: AppDeps): Promise<void> {
  await importDirectory(deps, rowsSource(sandboxDirectoryRows()));
}
