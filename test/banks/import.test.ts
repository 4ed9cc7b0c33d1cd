// The directory import (D17, D23): the operator route taking a CSV file, the CLI command that sends it, the
// IFSC package import; an idempotent upsert; a bad row refused with its line and column, the directory left
// exactly as it was.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { importBanksCommand } from '../../src/banks/cli.ts';
import { ifscPackageRows, loadIfscPackage } from '../../src/banks/ifsc-package.ts';
import { importCsv } from '../../src/banks/service.ts';
import type { AppError } from '../../src/platform/errors.ts';
import { errorBody, startTestApp, TEST_ADMIN_KEY, type TestApp } from '../helpers/app.ts';

const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };

const HEADER =
  'country,bank_name,bank_bic,bank_code_type,bank_code,branch_name,branch_code_type,branch_code,branch_bic,city,address';

describe('bank directory import', () => {
  let t: TestApp;
  before(async () => {
    // Production: no sandbox directory, so the counts below are the import's alone.
    t = await startTestApp({ env: { APP_ENV: 'production' } });
  });
  after(() => t.close());

  const postCsv = (csv: string, contentType = 'text/csv') =>
    t.app.inject({
      method: 'POST',
      url: '/admin/v1/banks/import',
      headers: { ...admin, 'content-type': contentType },
      payload: csv,
    });

  const postCsvWithoutKey = () =>
    t.app.inject({
      method: 'POST',
      url: '/admin/v1/banks/import',
      headers: { 'content-type': 'text/csv' },
      payload: HEADER,
    });

  /** Everything the directory holds, to prove a refused import changed nothing. */
  const snapshot = async () => ({
    banks: (await t.db.pool.query('SELECT * FROM banks ORDER BY id')).rows,
    branches: (await t.db.pool.query('SELECT * FROM bank_branches ORDER BY id')).rows,
  });

  const expectRefused = async (csv: string, field: string, message: RegExp) => {
    const before = await snapshot();
    const response = await postCsv(csv);
    assert.equal(response.statusCode, 422, response.body);
    const body = errorBody(response.body);
    assert.equal(body.code, 'VALIDATION_FAILED');
    assert.equal(body.field, field);
    assert.match(body.error, message);
    assert.deepEqual(await snapshot(), before, 'the directory is unchanged');
  };

  const FILE = [
    HEADER,
    'DE,Commerzbank,COBADEFFXXX,blz,37040044,Commerzbank Köln,blz,37040044,COBADEFFXXX,Köln,"Unter Sachsenhausen 21-27, 50667 Köln"',
    'DE,Commerzbank,COBADEFFXXX,,,,blz,10040000,COBADEBBXXX,Berlin,',
    'GB,National Westminster Bank,NWBKGB2L,,,,sort_code,60-16-13,,,',
    'US,JPMorgan Chase Bank,CHASUS33,aba,021000021,"Chase, New York",aba,021000021,,New York,',
    'FR,La Banque Postale,PSSTFRPP,fr_bank,20041,,,,,,',
  ].join('\n');

  it('creates the banks and branches of a file, and a second import of it changes nothing', async () => {
    const response = await postCsv(`${FILE}\n`);
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(response.json(), {
      rows: 5,
      banks: { created: 4, updated: 0, unchanged: 0 },
      branches: { created: 4, updated: 0, unchanged: 0 },
    });
    const banks = await t.db.pool.query(
      'SELECT name, country, bic, national_code_type, national_code FROM banks ORDER BY name',
    );
    assert.deepEqual(banks.rows, [
      {
        name: 'Commerzbank',
        country: 'DE',
        bic: 'COBADEFF',
        national_code_type: 'blz',
        national_code: '37040044',
      },
      {
        name: 'JPMorgan Chase Bank',
        country: 'US',
        bic: 'CHASUS33',
        national_code_type: 'aba',
        national_code: '021000021',
      },
      {
        name: 'La Banque Postale',
        country: 'FR',
        bic: 'PSSTFRPP',
        national_code_type: 'fr_bank',
        national_code: '20041',
      },
      {
        name: 'National Westminster Bank',
        country: 'GB',
        bic: 'NWBKGB2L',
        national_code_type: null,
        national_code: null,
      },
    ]);
    const branches = await t.db.pool.query(
      `SELECT b.name AS bank, r.name, r.city, r.address, r.bic, r.code_type, r.code
       FROM bank_branches r JOIN banks b ON b.id = r.bank_id ORDER BY r.code`,
    );
    assert.deepEqual(branches.rows, [
      {
        bank: 'JPMorgan Chase Bank',
        name: 'Chase, New York',
        city: 'New York',
        address: null,
        bic: null,
        code_type: 'aba',
        code: '021000021',
      },
      {
        bank: 'Commerzbank',
        name: null,
        city: 'Berlin',
        address: null,
        bic: 'COBADEBBXXX',
        code_type: 'blz',
        code: '10040000',
      },
      {
        bank: 'Commerzbank',
        name: 'Commerzbank Köln',
        city: 'Köln',
        address: 'Unter Sachsenhausen 21-27, 50667 Köln',
        bic: 'COBADEFFXXX',
        code_type: 'blz',
        code: '37040044',
      },
      {
        bank: 'National Westminster Bank',
        name: null,
        city: null,
        address: null,
        bic: null,
        code_type: 'sort_code',
        code: '601613',
      },
    ]);

    const before = await snapshot();
    const again = await postCsv(FILE);
    assert.deepEqual(again.json(), {
      rows: 5,
      banks: { created: 0, updated: 0, unchanged: 4 },
      branches: { created: 0, updated: 0, unchanged: 4 },
    });
    assert.deepEqual(await snapshot(), before, 'updated_at did not move either');
  });

  it('updates what a later file changes, finds a bank again by its BIC, and keeps what an empty cell leaves out', async () => {
    const response = await postCsv(
      [
        HEADER,
        // NatWest found by its BIC, given a name change; its branch gets a name and a city.
        'GB,National Westminster Bank (NatWest),NWBKGB2L,,,Leeds,sort_code,601613,,Leeds,',
        // Commerzbank found by its BLZ; the empty BIC cell keeps COBADEFF.
        'DE,Commerzbank,,blz,37040044,,,,,,',
        'ES,CaixaBank,CAIXESBBXXX,es_bank,2100,,,,,,',
      ].join('\r\n'),
    );
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(response.json(), {
      rows: 3,
      banks: { created: 1, updated: 1, unchanged: 1 },
      branches: { created: 0, updated: 1, unchanged: 0 },
    });
    const natwest = await t.db.pool.query(
      `SELECT b.name, r.name AS branch, r.city, b.updated_at > b.created_at AS moved
       FROM banks b JOIN bank_branches r ON r.bank_id = b.id WHERE b.bic = 'NWBKGB2L'`,
    );
    assert.deepEqual(natwest.rows, [
      { name: 'National Westminster Bank (NatWest)', branch: 'Leeds', city: 'Leeds', moved: true },
    ]);
    const commerzbank = await t.db.pool.query("SELECT bic FROM banks WHERE national_code = '37040044'");
    assert.deepEqual(commerzbank.rows, [{ bic: 'COBADEFF' }]);
  });

  it('refuses a bad row naming its line and column, and imports nothing of the file', async () => {
    const good = 'DE,Deutsche Bank,DEUTDEFF,blz,50070010,,,,,,';
    await expectRefused(
      [HEADER, good, 'DE,Berliner Sparkasse,BELADEBE,blz,1005000,,,,,,'].join('\n'),
      'line[3].bank_code',
      /^line 3, bank_code: "1005000" is not a Bankleitzahl of 8 digits$/,
    );
    await expectRefused(
      [HEADER, good, 'US,Citibank,CITIUS33,aba,021000088,,,,,,'].join('\n'),
      'line[3].bank_code',
      /ABA/,
    );
    await expectRefused(
      [HEADER, good, 'DX,Bank,DEUTDEFF,,,,,,,,'].join('\n'),
      'line[3].country',
      /ISO 3166-1/,
    );
    await expectRefused(
      [HEADER, good, 'DE,,DEUTDEFF,,,,,,,,'].join('\n'),
      'line[3].bank_name',
      /is required/,
    );
    await expectRefused(
      [HEADER, good, 'FR,Banque,C0BAFRPP,,,,,,,,'].join('\n'),
      'line[3].bank_bic',
      /not a BIC/,
    );
    await expectRefused(
      [HEADER, good, 'FR,Banque,COBADEFF,,,,,,,,'].join('\n'),
      'line[3].bank_bic',
      /country is DE/,
    );
    await expectRefused(
      [HEADER, good, 'DE,Bank ohne Code,,,,,,,,,'].join('\n'),
      'line[3].bank_code',
      /needs bank_code/,
    );
    await expectRefused(
      [HEADER, good, 'GB,Bank,BARCGB22,,,,sort_code,20-00-0,,,'].join('\n'),
      'line[3].branch_code',
      /sort code/,
    );
    await expectRefused(
      [HEADER, good, 'GB,Bank,BARCGB22,,,,ifsc,SBIN0001707,,,'].join('\n'),
      'line[3].branch_code',
      /belongs to IN/,
    );
    await expectRefused(
      [HEADER, good, 'GB,Bank,BARCGB22,,,,clabe,002,,,'].join('\n'),
      'line[3].branch_code_type',
      /must be one of/,
    );
    await expectRefused(
      [HEADER, good, 'GB,Bank,BARCGB22,,,,,,,London,'].join('\n'),
      'line[3].branch_code',
      /a branch needs/,
    );
    await expectRefused(
      [HEADER, good, 'DE,Die Deutsche Bank,DEUTDEFF,,,,,,,,'].join('\n'),
      'line[3].bank_name',
      /differs from "Deutsche Bank" for the same bank on line 2/,
    );
    await expectRefused(
      [
        HEADER,
        'US,Citibank,CITIUS33,aba,021000089,,aba,021000089,,,',
        'US,Citibank,CITIUS33,aba,021000089,,aba,021000089,,,',
      ].join('\n'),
      'line[3].branch_code',
      /already on line 2/,
    );
    await expectRefused(
      `${HEADER}\n${good}\n${'DE,Bank,DEUTDEFF,,,,,,,,'.replace('Bank', 'x'.repeat(201))}`,
      'line[3].bank_name',
      /longer than 200/,
    );
  });

  it('refuses a row the directory contradicts: a BIC that belongs to another bank', async () => {
    const first = await postCsv([HEADER, 'FR,Société Générale,SOGEFRPP,fr_bank,30003,,,,,,'].join('\n'));
    assert.equal(first.statusCode, 200, first.body);
    // Line 3 finds La Banque Postale by its code (imported above) but gives it Société Générale's BIC;
    // line 2 alone would be fine.
    await expectRefused(
      [
        HEADER,
        'ES,Banco Santander,BSCHESMM,es_bank,0049,,,,,,',
        'FR,La Banque Postale,SOGEFRPP,fr_bank,20041,,,,,,',
      ].join('\n'),
      'line[3].bank_bic',
      /^line 3, bank_bic: SOGEFRPP is the BIC of another bank of the directory \(bnk_/,
    );
    // Line 2 finds Société Générale by its code, line 3 by its BIC: one bank of the directory, two rows.
    await expectRefused(
      [HEADER, 'FR,Société Générale,,fr_bank,30003,,,,,,', 'FR,Société Générale,SOGEFRPP,,,,,,,,'].join('\n'),
      'line[3]',
      /^line 3: this row and line 2 are the same bank of the directory/,
    );
  });

  it('refuses a file that is not CSV as it expects it: the header, quoting, column counts', async () => {
    await expectRefused('', 'line[1]', /empty/);
    await expectRefused('country,bank,bank_bic\nDE,x,DEUTDEFF', 'line[1]', /unknown column "bank"/);
    await expectRefused('bank_name,bank_bic\nx,DEUTDEFF', 'line[1]', /no "country" column/);
    await expectRefused('country,bank_name,country\nDE,x,DE', 'line[1]', /named twice/);
    await expectRefused(
      `${HEADER}\nDE,"Deutsche Bank,DEUTDEFF,blz,50070010,,,,,,\n`,
      'line[2]',
      /not valid CSV: Quote Not Closed/,
    );
    await expectRefused(`${HEADER}\nDE,Deutsche Bank,DEUTDEFF\n`, 'line[2]', /not valid CSV/);
  });

  it('takes a file in any column order, with a byte-order mark, blank lines and quoted line breaks', async () => {
    const response = await postCsv(
      '\uFEFFbank_bic,country,bank_name,branch_code_type,branch_code,address\n\n' +
        'BARCGB22,GB,Barclays Bank,sort_code,20-00-00,"1 Churchill Place\nLondon E14 5HP"\n',
    );
    assert.equal(response.statusCode, 200, response.body);
    const branch = await t.db.pool.query("SELECT address FROM bank_branches WHERE code = '200000'");
    assert.deepEqual(branch.rows, [{ address: '1 Churchill Place\nLondon E14 5HP' }]);
  });

  it('takes a file far larger than the API body limit of 1 MiB', async () => {
    const lines = [HEADER];
    for (let index = 0; index < 20_000; index++) {
      const sort = String(300_000 + index);
      lines.push(
        `GB,Lloyds Bank,LOYDGB2L,,,Lloyds Bank branch number ${index} of the test file,sort_code,${sort},,City ${index % 50},`,
      );
    }
    const csv = lines.join('\n');
    assert.ok(Buffer.byteLength(csv) > 1.5 * 1024 * 1024);
    const response = await postCsv(csv);
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(response.json(), {
      rows: 20_000,
      banks: { created: 1, updated: 0, unchanged: 0 },
      branches: { created: 20_000, updated: 0, unchanged: 0 },
    });
  });

  it('refuses a file over the size limit with 413, reading no further, and imports nothing', async () => {
    const before = await snapshot();
    const chunks = async function* () {
      yield `${HEADER}\n`;
      for (let index = 0; index < 1_000; index++) yield 'DE,Deutsche Bank,DEUTDEFF,blz,50070010,,,,,,\n';
      assert.fail('read past the limit');
    };
    await assert.rejects(importCsv(t.deps, chunks(), { maxBytes: 4_000 }), (error: AppError) => {
      assert.equal(error.code, 'PAYLOAD_TOO_LARGE');
      assert.equal(error.statusCode, 413);
      return true;
    });
    assert.deepEqual(await snapshot(), before);
  });

  it('answers 415 to a body that is not text/csv, 400 to no body, 401 without the operator key', async () => {
    const json = await postCsv(JSON.stringify({ rows: [] }), 'application/json');
    assert.equal(json.statusCode, 415, json.body);
    assert.match(errorBody(json.body).error, /text\/csv/);
    const none = await t.app.inject({ method: 'POST', url: '/admin/v1/banks/import', headers: admin });
    assert.equal(none.statusCode, 400, none.body);
    const charset = await postCsv(`${HEADER}\n`, 'text/csv; charset=utf-8');
    assert.equal(charset.statusCode, 200, charset.body);
    const anonymous = await postCsvWithoutKey();
    assert.equal(anonymous.statusCode, 401);
  });

  it('loads the IFSCs of chosen banks from the ifsc package, sub-member branches under their own bank', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/banks/import/ifsc-package',
      headers: admin,
      payload: { banks: ['ABHY', 'APBL'] },
    });
    assert.equal(response.statusCode, 200, response.body);
    const data = await loadIfscPackage();
    const expected = data.ifsc.ABHY!.length + data.ifsc.APBL!.length;
    const body = response.json() as { rows: number; branches: { created: number } };
    assert.equal(body.rows, expected);
    assert.equal(body.branches.created, expected);
    const abhyudaya = await t.db.pool.query(
      `SELECT b.name, b.national_code, r.name AS branch, r.city, r.address
       FROM bank_branches r JOIN banks b ON b.id = r.bank_id WHERE r.code = 'ABHY0065001'`,
    );
    assert.deepEqual(abhyudaya.rows, [
      { name: 'Abhyudaya Co-operative Bank', national_code: 'ABHY', branch: null, city: null, address: null },
    ]);
    // sublet.json gives APBL0001001 to the sub-member bank TSDX.
    const sublet = await t.db.pool.query(
      `SELECT b.national_code, b.name FROM bank_branches r JOIN banks b ON b.id = r.bank_id
       WHERE r.code = 'APBL0001001'`,
    );
    assert.deepEqual(sublet.rows, [{ national_code: 'TSDX', name: data.names.TSDX }]);

    const unknown = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/banks/import/ifsc-package',
      headers: admin,
      payload: { banks: ['SBIN', 'QQQQ'] },
    });
    assert.equal(unknown.statusCode, 422);
    assert.equal(errorBody(unknown.body).field, 'banks[1]');
  });

  it('logs each import as an operator action with its actor and outcome, refusals included (D23)', async () => {
    const before = t.logs.lines.length;
    const imported = await postCsv(`${HEADER}\nFR,La Banque Postale,PSSTFRPP,fr_bank,20041,,,,,,`);
    assert.equal(imported.statusCode, 200, imported.body);
    const badHeader = await postCsv('country,bank_name\nFR,La Banque Postale');
    assert.equal(badHeader.statusCode, 422, badHeader.body);
    const anonymous = await postCsvWithoutKey();
    assert.equal(anonymous.statusCode, 401);
    const ifsc = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/banks/import/ifsc-package',
      headers: admin,
      payload: { banks: ['QQQQ'] },
    });
    assert.equal(ifsc.statusCode, 422, ifsc.body);
    const actions = t.logs.lines
      .slice(before)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.operator_action !== undefined)
      .map(({ operator_action, outcome, status, error_code, actor, rows, banks, only_banks }) => ({
        operator_action,
        outcome,
        status,
        error_code,
        actor,
        rows,
        banks,
        only_banks,
      }));
    const byKey = { credential: 'ADMIN_API_KEY', address: '127.0.0.1' };
    assert.deepEqual(actions, [
      {
        operator_action: 'banks.import',
        outcome: 'succeeded',
        status: 200,
        error_code: undefined,
        actor: byKey,
        rows: 1,
        banks: JSON.parse(imported.body).banks,
        only_banks: undefined,
      },
      {
        operator_action: 'banks.import',
        outcome: 'refused',
        status: 422,
        error_code: 'VALIDATION_FAILED',
        actor: byKey,
        rows: undefined,
        banks: undefined,
        only_banks: undefined,
      },
      {
        operator_action: 'banks.import',
        outcome: 'refused',
        status: 401,
        error_code: 'UNAUTHORIZED',
        actor: { credential: 'none', address: '127.0.0.1' },
        rows: undefined,
        banks: undefined,
        only_banks: undefined,
      },
      {
        operator_action: 'banks.import_ifsc_package',
        outcome: 'refused',
        status: 422,
        error_code: 'VALIDATION_FAILED',
        actor: byKey,
        rows: undefined,
        banks: undefined,
        only_banks: ['QQQQ'],
      },
    ]);
  });

  it('the CLI command sends the file as text/csv, or asks for the ifsc package import', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'banks-cli-'));
    try {
      const file = path.join(dir, 'directory.csv');
      await writeFile(file, FILE);
      assert.deepEqual(await importBanksCommand.requests([file], {}), [
        { method: 'POST', path: '/admin/v1/banks/import', body: FILE, contentType: 'text/csv' },
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    assert.deepEqual(await importBanksCommand.requests([], { 'ifsc-package': true }), [
      { method: 'POST', path: '/admin/v1/banks/import/ifsc-package', body: {} },
    ]);
    assert.deepEqual(
      await importBanksCommand.requests([], { 'ifsc-package': true, 'ifsc-banks': 'sbin, hdfc' }),
      [{ method: 'POST', path: '/admin/v1/banks/import/ifsc-package', body: { banks: ['SBIN', 'HDFC'] } }],
    );
    await assert.rejects(importBanksCommand.requests([], {}), /needs the CSV file/);
    await assert.rejects(importBanksCommand.requests(['a.csv'], { 'ifsc-package': true }), /not both/);
  });
});

describe('the ifsc package as directory rows', () => {
  it('yields every IFSC the package lists once, well formed, under a bank of its own code', async () => {
    const data = await loadIfscPackage();
    const listed = Object.values(data.ifsc).reduce((sum, codes) => sum + codes.length, 0);
    const seen = new Set<string>();
    const owners = new Set<string>();
    for (const row of ifscPackageRows(data)) {
      assert.match(row.branch_code!, /^[A-Z]{4}0[A-Z0-9]{6}$/);
      seen.add(row.branch_code!);
      owners.add(row.bank_code!);
      assert.equal(row.bank_name, data.names[row.bank_code!] ?? row.bank_code);
    }
    assert.equal(seen.size, listed);
    assert.ok(listed > 170_000, `${listed} IFSCs`);
    assert.ok(owners.size > 1_000, `${owners.size} banks (sponsor and sub-member banks)`);
  });
});
