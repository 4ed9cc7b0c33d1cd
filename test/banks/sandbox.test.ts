// The sandbox directory (D24): real public identifiers with valid check digits for every sandbox corridor's
// country, the banks behind the IBAN registry's examples, seeded idempotently; none in production.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { extractIBAN } from 'ibantools';
import { BANK_CODE_RULES, type BankCodeType, storedCode } from '../../src/banks/codes.ts';
import { ifscOf, loadIfscPackage } from '../../src/banks/ifsc-package.ts';
import { sandboxDirectoryRows, seedSandboxDirectory } from '../../src/banks/sandbox.ts';
import {
  validateAba,
  validateBic,
  validateIban,
  validateIfsc,
  validateSortCode,
} from '../../src/banks/validation.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

/** The countries of the sandbox corridors (D24). */
const CORRIDOR_COUNTRIES = ['DE', 'FR', 'ES', 'GB', 'IN', 'MX', 'NG', 'PH', 'KE', 'US'];

describe('sandbox bank directory', () => {
  const rows = sandboxDirectoryRows();

  it('holds banks of every sandbox corridor country', () => {
    const countries = new Set(rows.map((row) => row.country));
    for (const country of CORRIDOR_COUNTRIES) assert.ok(countries.has(country), country);
  });

  it('holds only valid identifiers: BICs of the row country, national codes, and branch codes with their check digits', async () => {
    const { ifsc } = await loadIfscPackage();
    const knownIfscs = new Set(
      Object.entries(ifsc).flatMap(([bank, branches]) => branches.map((branch) => ifscOf(bank, branch))),
    );
    for (const row of rows) {
      const label = `${row.bank_name} ${row.branch_code ?? ''}`;
      const bic = validateBic(row.bank_bic!);
      assert.equal(bic.valid, true, label);
      assert.equal(bic.country, row.country, label);
      if (row.bank_code_type) {
        const rule = BANK_CODE_RULES[row.bank_code_type as BankCodeType];
        assert.ok(rule.check(storedCode(row.bank_code!)), label);
        assert.equal(rule.country, row.country, label);
      }
      if (row.branch_bic) assert.equal(validateBic(row.branch_bic).valid, true, label);
      switch (row.branch_code_type) {
        case 'aba':
          assert.equal(validateAba(row.branch_code!).valid, true, label);
          break;
        case 'sort_code':
          assert.equal(validateSortCode(row.branch_code!).valid, true, label);
          break;
        case 'ifsc':
          assert.equal(validateIfsc(row.branch_code!).valid, true, label);
          assert.ok(knownIfscs.has(row.branch_code!), `${label} is in Razorpay's IFSC list`);
          assert.equal(row.branch_code!.slice(0, 4), row.bank_code, label);
          break;
        case 'blz':
          assert.match(row.branch_code!, /^[0-9]{8}$/, label);
          break;
        case undefined:
          assert.equal(row.branch_code, undefined, label);
          break;
        default:
          assert.fail(`unexpected branch code type ${row.branch_code_type}`);
      }
      if (row.bank_code_type === 'aba') assert.equal(validateAba(row.bank_code!).valid, true, label);
    }
  });

  it('holds the banks behind the IBAN registry examples of DE, GB and FR, by the codes in those IBANs', () => {
    const find = (predicate: (row: (typeof rows)[number]) => boolean) => rows.filter(predicate);
    const de = extractIBAN('DE89370400440532013000');
    assert.equal(validateIban(de.iban).valid, true);
    assert.deepEqual(
      find((row) => row.bank_code === de.bankIdentifier).map((row) => [row.bank_name, row.bank_bic]),
      [['Commerzbank', 'COBADEFFXXX']],
    );
    const gb = extractIBAN('GB29NWBK60161331926819');
    assert.deepEqual(
      find((row) => storedCode(row.branch_code ?? '') === gb.branchIdentifier).map((row) => row.bank_bic),
      ['NWBKGB2L'],
    );
    assert.equal(gb.bankIdentifier, 'NWBK');
    const fr = extractIBAN('FR1420041010050500013M02606');
    assert.deepEqual(
      find((row) => row.bank_code === fr.bankIdentifier).map((row) => [row.bank_name, row.bank_bic]),
      [['La Banque Postale', 'PSSTFRPPXXX']],
    );
  });

  describe('seeding', () => {
    let sandbox: TestApp;
    let production: TestApp;
    before(async () => {
      [sandbox, production] = await Promise.all([
        startTestApp(),
        startTestApp({ env: { APP_ENV: 'production' } }),
      ]);
    });
    after(() => Promise.all([sandbox.close(), production.close()]));

    const snapshot = async (t: TestApp) => ({
      banks: (await t.db.pool.query('SELECT * FROM banks ORDER BY id')).rows,
      branches: (await t.db.pool.query('SELECT * FROM bank_branches ORDER BY id')).rows,
    });

    it('seeds every bank and branch on a sandbox start; another start changes nothing', async () => {
      const seeded = await snapshot(sandbox);
      const banks = new Set(rows.map((row) => row.bank_bic!.slice(0, 8)));
      assert.equal(seeded.banks.length, banks.size);
      assert.equal(seeded.branches.length, rows.filter((row) => row.branch_code).length);
      await seedSandboxDirectory(sandbox.deps);
      assert.deepEqual(await snapshot(sandbox), seeded);
    });

    it('seeds nothing in production', async () => {
      assert.deepEqual(await snapshot(production), { banks: [], branches: [] });
    });
  });
});
