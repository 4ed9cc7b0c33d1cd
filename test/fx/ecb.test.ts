// The ECB reference rates XML parser (D15): the daily file, files of several days (the latest is taken),
// the Frankfurt snapshot time across daylight saving, and files that are not ECB rates.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ecbSnapshotTime, parseEcbXml } from '../../src/fx/ecb.ts';

const FIXTURE = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'fixtures',
  'eurofxref-daily.xml',
);

const envelope = (days: string) => `<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
	<gesmes:subject>Reference rates</gesmes:subject>
	<gesmes:Sender><gesmes:name>European Central Bank</gesmes:name></gesmes:Sender>
	<Cube>${days}</Cube>
</gesmes:Envelope>`;

describe('ECB reference rates XML (D15)', () => {
  it('reads the daily file: every rate per 1 EUR as the file writes it, as of 14:15 Frankfurt time', () => {
    const set = parseEcbXml(readFileSync(FIXTURE, 'utf8'));
    assert.equal(set.base, 'EUR');
    assert.equal(set.provider, 'ecb');
    assert.equal(set.as_of, '2024-06-28T12:15:00.000Z');
    assert.deepEqual(Object.keys(set.rates), [
      'USD',
      'JPY',
      'BGN',
      'CZK',
      'DKK',
      'GBP',
      'HUF',
      'PLN',
      'RON',
      'SEK',
      'CHF',
      'ISK',
      'NOK',
      'TRY',
      'AUD',
      'BRL',
      'CAD',
      'CNY',
      'HKD',
      'IDR',
      'ILS',
      'INR',
      'KRW',
      'MXN',
      'MYR',
      'NZD',
      'PHP',
      'SGD',
      'THB',
      'ZAR',
    ]);
    assert.equal(set.rates.USD, '1.0705');
    assert.equal(set.rates.GBP, '0.84638');
    assert.equal(set.rates.HUF, '395.10');
    assert.equal(set.rates.PHP, '62.560');
  });

  it('takes the latest day of a file holding several (the 90-day and historical files)', () => {
    const xml = envelope(`
      <Cube time="2024-06-27"><Cube currency="USD" rate="1.0702"/></Cube>
      <Cube time="2024-06-28"><Cube currency="USD" rate="1.0705"/><Cube currency="JPY" rate="171.94"/></Cube>
      <Cube time="2024-06-26"><Cube currency="USD" rate="1.0683"/></Cube>`);
    const set = parseEcbXml(xml);
    assert.equal(set.as_of, '2024-06-28T12:15:00.000Z');
    assert.deepEqual(set.rates, { USD: '1.0705', JPY: '171.94' });
  });

  it('places the snapshot at 14:15 CET in winter and CEST in summer', () => {
    assert.equal(ecbSnapshotTime('2024-01-15'), '2024-01-15T13:15:00.000Z');
    assert.equal(ecbSnapshotTime('2024-03-29'), '2024-03-29T13:15:00.000Z');
    assert.equal(ecbSnapshotTime('2024-04-02'), '2024-04-02T12:15:00.000Z');
    assert.equal(ecbSnapshotTime('2024-10-25'), '2024-10-25T12:15:00.000Z');
    assert.equal(ecbSnapshotTime('2024-10-28'), '2024-10-28T13:15:00.000Z');
  });

  it('says what is wrong with a file that is not ECB rates', () => {
    const cases: Array<[string, RegExp]> = [
      ['<a><b></a>', /: not well-formed XML/],
      ['{"USD": 1.07}', /: not well-formed XML/],
      ['<rates><USD>1.07</USD></rates>', /: not an ECB reference rates file/],
      [envelope('<Cube><Cube currency="USD" rate="1.07"/></Cube>'), /no time='YYYY-MM-DD'/],
      [envelope('<Cube time="28.06.2024"><Cube currency="USD" rate="1.07"/></Cube>'), /no time='YYYY-MM-DD'/],
      [envelope('<Cube time="2024-06-28"><Cube currency="USD"/></Cube>'), /lacks its currency= or rate=/],
      [envelope('<Cube time="2024-06-28"></Cube>'), /holds no rate for 2024-06-28/],
      [
        envelope(
          '<Cube time="2024-06-28"><Cube currency="USD" rate="1"/><Cube currency="USD" rate="2"/></Cube>',
        ),
        /USD appears twice/,
      ],
    ];
    for (const [xml, message] of cases) assert.throws(() => parseEcbXml(xml), message, xml);
  });
});
