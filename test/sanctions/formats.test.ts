// The list formats: OFAC SDN CSV (sdn.csv, alt.csv, add.csv; no header, `-0-` for empty) and OpenSanctions
// targets.simple.csv, read from the committed fixtures; every malformed file refused with its line named;
// dates of birth, countries, and the CLI's file decoding and request.
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { decodeListFile, importSanctionsCommand } from '../../src/sanctions/cli.ts';
import { countryCode, isCountryCode } from '../../src/sanctions/formats/countries.ts';
import { isoBirthInterval, ofacBirthInterval, withinAny } from '../../src/sanctions/formats/dates.ts';
import { parseOfacSdn } from '../../src/sanctions/formats/ofac.ts';
import { parseOpenSanctions } from '../../src/sanctions/formats/opensanctions.ts';
import { ListFormatError } from '../../src/sanctions/formats/types.ts';
import {
  OFAC_DIR,
  OFAC_SPILLOVER_DIR,
  OPENSANCTIONS_FILE,
  ofacFiles,
  ofacSpilloverFiles,
  openSanctionsText,
} from './fixtures.ts';

function refused(work: () => unknown, file: string, line: number | undefined, problem: RegExp): void {
  assert.throws(work, (error: unknown) => {
    assert.ok(error instanceof ListFormatError, String(error));
    assert.equal(error.file, file);
    assert.equal(error.line, line);
    assert.match(error.message, problem);
    return true;
  });
}

describe('OFAC SDN CSV', () => {
  it('reads the three files into entries with aliases, programs, countries and dates of birth', () => {
    const entries = parseOfacSdn(ofacFiles());
    assert.equal(entries.length, 10);
    assert.deepEqual(entries[0], {
      entryId: '1001',
      entityType: 'individual',
      name: 'PETROV, Ivan Sergeyevich',
      aliases: ['PETROV, Ivan', 'PETROFF, Ivan'],
      programs: ['RUSSIA-EO14024'],
      countries: ['RU'],
      birthDates: ['1965-03-12/1965-03-12'],
    });
    const byId = new Map(entries.map((entry) => [entry.entryId, entry]));
    assert.deepEqual(byId.get('1002')!.birthDates, ['1969-01-01/1971-12-31', '1972-01-01/1972-12-31']);
    assert.deepEqual(byId.get('1002')!.countries, ['YE']);
    assert.deepEqual(byId.get('1003')!.programs, ['IRAN', 'IFSR']);
    assert.deepEqual(byId.get('1003')!.countries, ['AE', 'IR']);
    assert.equal(byId.get('1003')!.entityType, 'organisation');
    assert.deepEqual(byId.get('1003')!.aliases, ['NORTH WIND SHIPPING CO.', 'NORTHWIND MARITIME']);
    assert.equal(byId.get('1004')!.entityType, 'vessel');
    assert.equal(byId.get('1010')!.entityType, 'aircraft');
    assert.deepEqual(byId.get('1007')!.countries, ['KP'], '"Korea, North"');
    assert.deepEqual(byId.get('1009')!.countries, ['RU'], '"citizen Russia"');
    assert.deepEqual(byId.get('1009')!.birthDates, ['1972-06-01/1972-06-30']);
    assert.deepEqual(byId.get('1008')!.countries, ['AF'], 'an address row of only -0- adds nothing');
    assert.equal(
      entries.reduce((sum, entry) => sum + entry.aliases.length, 0),
      8,
    );
  });

  it('takes LF line ends, a trailing SUB (Ctrl-Z) and empty alt.csv and add.csv', () => {
    const files = ofacFiles();
    const entries = parseOfacSdn({
      'sdn.csv': `${files['sdn.csv'].replace(/\r\n/g, '\n')}\u001a`,
      'alt.csv': '',
      'add.csv': '\r\n',
    });
    assert.equal(entries.length, 10);
    assert.deepEqual(entries[0]!.aliases, []);
    assert.deepEqual(entries[0]!.countries, ['RU'], 'nationality from the remarks');
  });

  it('leaves out aliases and addresses of an ent_num sdn.csv does not hold', () => {
    const files = ofacFiles();
    const entries = parseOfacSdn({
      ...files,
      'alt.csv': `${files['alt.csv']}9999,2999,"aka","NOBODY",-0- \r\n`,
    });
    assert.ok(!entries.some((entry) => entry.aliases.includes('NOBODY')));
  });

  it('refuses a malformed file, naming the file and the line', () => {
    const files = ofacFiles();
    const lines = files['sdn.csv'].split('\r\n');
    const withLine = (index: number, text: string) =>
      [...lines.slice(0, index), text, ...lines.slice(index + 1)].join('\r\n');
    refused(
      () => parseOfacSdn({ ...files, 'sdn.csv': withLine(2, '1003,"NORTHWIND",-0- ,"IRAN"') }),
      'sdn.csv',
      3,
      /expected 12 fields, found 4/,
    );
    refused(
      () => parseOfacSdn({ ...files, 'sdn.csv': withLine(4, '1005,"MULLER, Hans "Peter",-0- ') }),
      'sdn.csv',
      5,
      /not valid CSV/,
    );
    refused(
      () => parseOfacSdn({ ...files, 'sdn.csv': withLine(1, lines[1]!.replace(/^1002/, 'X1002')) }),
      'sdn.csv',
      2,
      /ent_num must be a positive whole number, got "X1002"/,
    );
    refused(
      () => parseOfacSdn({ ...files, 'sdn.csv': withLine(3, lines[0]!) }),
      'sdn.csv',
      4,
      /ent_num 1001 appears twice/,
    );
    refused(
      () =>
        parseOfacSdn({
          ...files,
          'sdn.csv': withLine(5, lines[5]!.replace('"BANCO DEL SUR DE CARACAS, C.A."', '-0- ')),
        }),
      'sdn.csv',
      6,
      /SDN_Name is empty/,
    );
    for (const type of ['"person"', '"constructor"']) {
      refused(
        () => parseOfacSdn({ ...files, 'sdn.csv': withLine(0, lines[0]!.replace('"individual"', type)) }),
        'sdn.csv',
        1,
        /SDN_Type must be individual, vessel, aircraft or -0-/,
      );
    }
    refused(
      () => parseOfacSdn({ ...files, 'sdn.csv': withLine(1, lines[1]!.replace(/"([A-Z])/, '"$1\u0000')) }),
      'sdn.csv',
      2,
      /holds a NUL character/,
    );
    refused(() => parseOfacSdn({ ...files, 'sdn.csv': '' }), 'sdn.csv', undefined, /holds no entries/);
    refused(
      () => parseOfacSdn({ ...files, 'alt.csv': `${files['alt.csv']}1001,2009,"aka"\r\n` }),
      'alt.csv',
      9,
      /expected 5 fields, found 3/,
    );
    refused(
      () => parseOfacSdn({ ...files, 'add.csv': files['add.csv'].replace('1003,3003,', '1003,x,') }),
      'add.csv',
      3,
      /add_num must be a positive whole number/,
    );
  });

  it('continues the Remarks in sdn_comments.csv: dates of birth and nationalities found there are read', () => {
    const { 'sdn_comments.csv': comments, ...three } = ofacSpilloverFiles();
    const withComments = parseOfacSdn({ ...three, 'sdn_comments.csv': comments });
    assert.deepEqual(
      withComments.map(({ entryId, birthDates, countries }) => ({ entryId, birthDates, countries })),
      [
        // Cut inside `DOB`: `...; D` + `OB 14 Aug 1968; nationality Lebanon; ...`.
        { entryId: '1101', birthDates: ['1968-08-14/1968-08-14'], countries: ['LB'] },
        // Cut after a space: `...; DOB 03 Sep ` + `1971; citizen Syria; ...`.
        { entryId: '1102', birthDates: ['1971-09-03/1971-09-03'], countries: ['SY'] },
        { entryId: '1103', birthDates: [], countries: ['LB'] },
      ],
      'the record of 1199, which sdn.csv does not hold, is left out',
    );
    // Without the file the same entries come out as from sdn.csv alone: the overflowed remarks are missing.
    const withoutComments = parseOfacSdn(three);
    assert.deepEqual(
      withoutComments.map(({ entryId, birthDates, countries }) => ({ entryId, birthDates, countries })),
      [
        { entryId: '1101', birthDates: [], countries: [] },
        { entryId: '1102', birthDates: [], countries: [] },
        { entryId: '1103', birthDates: [], countries: ['LB'] },
      ],
    );
    assert.deepEqual(
      withoutComments.map(({ birthDates: _, countries: __, ...rest }) => rest),
      withComments.map(({ birthDates: _, countries: __, ...rest }) => rest),
    );
  });

  it('appends several sdn_comments.csv records of one ent_num in file order', () => {
    const { 'sdn_comments.csv': _, ...three } = ofacSpilloverFiles();
    const entries = parseOfacSdn({
      ...three,
      'sdn_comments.csv':
        '1101,"OB 14 Aug"\r\n1102,-0- \r\n1101," 1968; nationality Leb"\r\n1101,"anon."\r\n',
    });
    assert.deepEqual(entries[0]!.birthDates, ['1968-08-14/1968-08-14']);
    assert.deepEqual(entries[0]!.countries, ['LB']);
    assert.deepEqual(entries[1]!.birthDates, [], 'a -0- record adds nothing');
  });

  it('refuses a malformed sdn_comments.csv, naming it and the line', () => {
    const files = ofacSpilloverFiles();
    const comments = files['sdn_comments.csv'];
    refused(
      () => parseOfacSdn({ ...files, 'sdn_comments.csv': `${comments}1103,"Linked To",-0- \r\n` }),
      'sdn_comments.csv',
      4,
      /^sdn_comments\.csv line 4: expected 2 fields, found 3$/,
    );
    refused(
      () => parseOfacSdn({ ...files, 'sdn_comments.csv': comments.replace('1102,', '-0- ,') }),
      'sdn_comments.csv',
      2,
      /^sdn_comments\.csv line 2: ent_num must be a positive whole number, got ""$/,
    );
    refused(
      () => parseOfacSdn({ ...files, 'sdn_comments.csv': `${comments}1103,"Linked "To"\r\n` }),
      'sdn_comments.csv',
      4,
      /not valid CSV/,
    );
  });

  it('counts the lines of a quoted field that spans lines (the record is named by its first line)', () => {
    const files = ofacFiles();
    const sdn = files['sdn.csv'].replace('"DOB 12 Mar 1965;', '"DOB 12 Mar 1965;\r\n');
    refused(
      () => parseOfacSdn({ ...files, 'sdn.csv': `${sdn}1011,"BROKEN"\r\n` }),
      'sdn.csv',
      12,
      /expected 12 fields, found 2/,
    );
    // Empty lines are skipped but counted.
    refused(
      () => parseOfacSdn({ ...files, 'sdn.csv': `${sdn}\r\n\r\n1011,"BROKEN"\r\n` }),
      'sdn.csv',
      14,
      /expected 12 fields, found 2/,
    );
  });
});

describe('OpenSanctions targets.simple.csv', () => {
  it('reads the rows by column name, splitting the ;-separated cells', () => {
    const entries = parseOpenSanctions(openSanctionsText());
    assert.deepEqual(
      entries.map((entry) => [entry.entryId, entry.entityType]),
      [
        ['NK-4Fk2qTzv9d3uXn', 'individual'],
        ['NK-7Hc1mWpQ2sLr8e', 'organisation'],
        ['NK-2Bv8yRt5nKq4Zw', 'individual'],
        ['NK-9Dq3wEr6tYu1Io', 'vessel'],
        ['NK-3Mn4bVc8xZa6Sd', 'unknown'],
      ],
      'the CryptoWallet row names no party and is left out',
    );
    assert.deepEqual(entries[0], {
      entryId: 'NK-4Fk2qTzv9d3uXn',
      entityType: 'individual',
      name: 'Dmitri Aleksandrovich Sokolov',
      aliases: ['Дмитрий Александрович Соколов', 'Dmitry Sokolov'],
      programs: ['EU Council Regulation 269/2014', 'UK Russia Regulations'],
      countries: ['RU'],
      birthDates: ['1971-04-23/1971-04-23'],
    });
    assert.deepEqual(entries[1]!.countries, ['CH', 'LV']);
    assert.deepEqual(entries[2]!.birthDates, ['1980-01-01/1980-12-31']);
  });

  it('leaves out rows of a schema it does not screen, Object member names included', () => {
    const text =
      'id,schema,name,aliases,birth_date,countries,addresses,identifiers,sanctions,phones,emails,program_ids,dataset,first_seen,last_seen,last_change\n' +
      'os-1,Person,Jan Kowalski,,,,,,,,,,eu_fsf,,,\n' +
      'os-2,constructor,Not An Entity,,,,,,,,,,eu_fsf,,,\n' +
      'os-3,CryptoWallet,0xabc,,,,,,,,,,eu_fsf,,,\n';
    assert.deepEqual(
      parseOpenSanctions(text).map((entry) => entry.entryId),
      ['os-1'],
    );
  });

  it('prefers program_ids when the file has them, and ignores columns it does not know', () => {
    const text =
      'id,schema,name,aliases,birth_date,countries,addresses,identifiers,sanctions,phones,emails,program_ids,dataset,first_seen,last_seen,last_change,new_column\n' +
      'os-1,Person,Jan Kowalski,,1970-05,pl;suhh,,,Some sanction text,,,EU-RUS;GB-RUS,eu_fsf,,,,x\n';
    assert.deepEqual(parseOpenSanctions(text), [
      {
        entryId: 'os-1',
        entityType: 'individual',
        name: 'Jan Kowalski',
        aliases: [],
        programs: ['EU-RUS', 'GB-RUS'],
        countries: ['PL'],
        birthDates: ['1970-05-01/1970-05-31'],
      },
    ]);
  });

  it('refuses a malformed file, naming the line', () => {
    const text = openSanctionsText();
    const lines = text.split('\n');
    refused(
      () => parseOpenSanctions(lines.map((line, i) => (i === 3 ? line.replace(/,/g, ';') : line)).join('\n')),
      'targets.simple.csv',
      4,
      /expected 15 fields as in the header, found 1/,
    );
    refused(
      () => parseOpenSanctions(text.replace('NK-7Hc1mWpQ2sLr8e', 'NK-4Fk2qTzv9d3uXn')),
      'targets.simple.csv',
      3,
      /id NK-4Fk2qTzv9d3uXn appears twice/,
    );
    refused(
      () => parseOpenSanctions(text.replace(',Company,Baltic Amber Holdings AG,', ',Company,,')),
      'targets.simple.csv',
      3,
      /name is empty/,
    );
    refused(
      () => parseOpenSanctions(text.replace('id,schema,name,', 'identifier,schema,name,')),
      'targets.simple.csv',
      1,
      /the header has no "id" column/,
    );
    refused(
      () => parseOpenSanctions(text.replace('Baltic Amber Holdings AG', 'Baltic\u0000Amber Holdings AG')),
      'targets.simple.csv',
      3,
      /holds a NUL character/,
    );
    refused(() => parseOpenSanctions(''), 'targets.simple.csv', undefined, /is empty/);
    refused(() => parseOpenSanctions(`${lines[0]}\n`), 'targets.simple.csv', undefined, /holds no entries/);
  });
});

describe('dates of birth and countries', () => {
  it('reads OFAC and ISO dates into intervals', () => {
    assert.equal(ofacBirthInterval('28 Jul 1963'), '1963-07-28/1963-07-28');
    assert.equal(ofacBirthInterval('Feb 1964'), '1964-02-01/1964-02-29');
    assert.equal(ofacBirthInterval('1963'), '1963-01-01/1963-12-31');
    assert.equal(ofacBirthInterval('circa 1963'), '1962-01-01/1964-12-31');
    assert.equal(ofacBirthInterval('1960 to 1962'), '1960-01-01/1962-12-31');
    assert.equal(ofacBirthInterval('01 Jan 1960 to 31 Dec 1962'), '1960-01-01/1962-12-31');
    assert.equal(ofacBirthInterval('31 Feb 1960'), undefined);
    assert.equal(ofacBirthInterval('unknown'), undefined);
    assert.equal(isoBirthInterval('1954-09-13'), '1954-09-13/1954-09-13');
    assert.equal(isoBirthInterval('1954'), '1954-01-01/1954-12-31');
    assert.equal(isoBirthInterval('1954-13'), undefined);
    assert.equal(withinAny(['1960-01-01/1962-12-31'], '1961-06-01'), true);
    assert.equal(withinAny(['1960-01-01/1962-12-31'], '1963-01-01'), false);
  });

  it('maps country names of the lists to ISO 3166-1 alpha-2 codes', () => {
    assert.equal(countryCode('Korea, North'), 'KP');
    assert.equal(countryCode('Burma'), 'MM');
    assert.equal(countryCode('Iran, Islamic Republic of'), 'IR');
    assert.equal(countryCode('Congo, Democratic Republic of the'), 'CD');
    assert.equal(countryCode('Bahamas, The'), 'BS');
    assert.equal(countryCode('Saint Kitts and Nevis'), 'KN');
    assert.equal(countryCode('United Arab Emirates'), 'AE');
    assert.equal(countryCode('ru'), 'RU');
    assert.equal(countryCode('undetermined'), undefined);
    assert.equal(isCountryCode('DE'), true);
    assert.equal(isCountryCode('UK'), false);
    assert.equal(isCountryCode('EU'), false);
    assert.equal(isCountryCode('SU'), false, 'withdrawn codes are not countries');
  });
});

describe('import-sanctions CLI', () => {
  it('reads a UTF-8 file as UTF-8 and any other as Windows-1252', () => {
    assert.equal(decodeListFile(Buffer.from('Müller', 'utf8')), 'Müller');
    assert.equal(decodeListFile(Buffer.from([0x4d, 0xfc, 0x6c, 0x6c, 0x65, 0x72])), 'Müller');
  });

  it('turns a directory of OFAC files into one import request of the ofac-sdn list', async () => {
    const [request, ...rest] = await importSanctionsCommand.requests([OFAC_DIR], { format: 'ofac-sdn-csv' });
    assert.equal(rest.length, 0);
    assert.equal(request!.method, 'POST');
    assert.equal(request!.path, '/admin/v1/sanctions/lists/ofac-sdn/import');
    assert.deepEqual(request!.body, { format: 'ofac-sdn-csv', files: ofacFiles() });
  });

  it('takes the three files, a list code and a name', async () => {
    const paths = ['sdn.csv', 'alt.csv', 'add.csv'].map((file) => path.join(OFAC_DIR, file));
    const [request] = await importSanctionsCommand.requests(paths, {
      format: 'ofac-sdn-csv',
      list: 'ofac-sdn-test',
      name: 'OFAC test copy',
    });
    assert.equal(request!.path, '/admin/v1/sanctions/lists/ofac-sdn-test/import');
    assert.deepEqual(request!.body, { format: 'ofac-sdn-csv', name: 'OFAC test copy', files: ofacFiles() });
  });

  it('sends sdn_comments.csv with the other three when the directory holds it, or it is given', async () => {
    const [fromDirectory] = await importSanctionsCommand.requests([OFAC_SPILLOVER_DIR], {
      format: 'ofac-sdn-csv',
    });
    assert.deepEqual(fromDirectory!.body, { format: 'ofac-sdn-csv', files: ofacSpilloverFiles() });
    const paths = ['sdn_comments.csv', 'sdn.csv', 'alt.csv', 'add.csv'].map((file) =>
      path.join(OFAC_SPILLOVER_DIR, file),
    );
    const [fromPaths] = await importSanctionsCommand.requests(paths, { format: 'ofac-sdn-csv' });
    assert.deepEqual(fromPaths!.body, { format: 'ofac-sdn-csv', files: ofacSpilloverFiles() });
  });

  it('reads targets.simple.csv for opensanctions-csv', async () => {
    const [request] = await importSanctionsCommand.requests([OPENSANCTIONS_FILE], {
      format: 'opensanctions-csv',
    });
    assert.equal(request!.path, '/admin/v1/sanctions/lists/opensanctions/import');
    assert.deepEqual(request!.body, {
      format: 'opensanctions-csv',
      files: { 'targets.simple.csv': openSanctionsText() },
    });
  });

  it('refuses a missing format, a missing path and a directory without the three files', async () => {
    await assert.rejects(importSanctionsCommand.requests([OFAC_DIR], {}), /--format must be one of/);
    await assert.rejects(importSanctionsCommand.requests([], { format: 'ofac-sdn-csv' }), /give the PATH/);
    const empty = mkdtempSync(path.join(tmpdir(), 'sanctions-cli-'));
    writeFileSync(path.join(empty, 'sdn.csv'), '1,"X",-0- ');
    await assert.rejects(
      importSanctionsCommand.requests([empty], { format: 'ofac-sdn-csv' }),
      /alt\.csv not found/,
    );
  });

  it('refuses a file given by a name that is not an OFAC file, rather than leave it out', async () => {
    const renamed = mkdtempSync(path.join(tmpdir(), 'sanctions-cli-'));
    const comments = path.join(renamed, 'sdn_comments (1).csv');
    copyFileSync(path.join(OFAC_SPILLOVER_DIR, 'sdn_comments.csv'), comments);
    const paths = ['sdn.csv', 'alt.csv', 'add.csv'].map((file) => path.join(OFAC_SPILLOVER_DIR, file));
    await assert.rejects(importSanctionsCommand.requests([...paths, comments], { format: 'ofac-sdn-csv' }), {
      message: `${comments} is not an OFAC file: give files named sdn.csv, alt.csv, add.csv, sdn_comments.csv`,
    });
  });
});
