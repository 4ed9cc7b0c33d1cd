// The ECB euro foreign exchange reference rates XML (D15): `eurofxref-daily.xml`, and the 90-day and
// historical files (`eurofxref-hist-90d.xml`, `eurofxref-hist.xml`) that hold one day per `Cube time=`:
//
//   <gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01"
//                    xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
//     <gesmes:subject>Reference rates</gesmes:subject>
//     <gesmes:Sender><gesmes:name>European Central Bank</gesmes:name></gesmes:Sender>
//     <Cube>
//       <Cube time='2024-06-28'>
//         <Cube currency='USD' rate='1.0705'/> ...
//
// Every rate is units of the currency per 1 EUR. The CLI parses the file and posts the latest day as one
// rate set to POST /admin/v1/fx-rates; only a provider's latest set is ever read, so older days of a
// historical file would serve nothing.
import { XMLParser, XMLValidator } from 'fast-xml-parser';

export const ECB_PROVIDER = 'ecb';
export const ECB_BASE = 'EUR';

export interface EcbRateSet {
  base: string;
  provider: string;
  as_of: string;
  rates: Record<string, string>;
}

interface CubeNode {
  time?: string;
  currency?: string;
  rate?: string;
  Cube?: CubeNode[];
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  removeNSPrefix: true,
  // Rates stay the exact text of the file ("0.84638", "395.10"), never JavaScript numbers.
  parseAttributeValue: false,
  parseTagValue: false,
  isArray: (name) => name === 'Cube',
  processEntities: false,
});

/**
 * The moment the ECB observes its reference rates: the daily concertation at 14:15 Frankfurt time
 * (CET or CEST); the rates are published around 16:00 CET on TARGET working days.
 */
export function ecbSnapshotTime(date: string): string {
  const noon = new Date(`${date}T12:00:00Z`);
  const offset = new Intl.DateTimeFormat('en-US', { timeZone: 'Europe/Berlin', timeZoneName: 'longOffset' })
    .formatToParts(noon)
    .find((part) => part.type === 'timeZoneName')?.value;
  const match = /^GMT([+-])(\d{2}):(\d{2})$/.exec(offset ?? '');
  if (!match) throw new Error(`cannot tell the Frankfurt time offset on ${date}`);
  const minutes = (match[1] === '-' ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3]));
  return new Date(Date.parse(`${date}T14:15:00Z`) - minutes * 60_000).toISOString();
}

/**
 * The latest day of an ECB reference rates file as a rate set against EUR. Throws an Error saying what is
 * wrong when the text is not such a file.
 */
export function parseEcbXml(xml: string): EcbRateSet {
  const valid = XMLValidator.validate(xml);
  if (valid !== true) {
    throw new Error(`not well-formed XML: ${valid.err.msg} (line ${valid.err.line})`);
  }
  const document = parser.parse(xml) as { Envelope?: { Cube?: CubeNode[] } };
  const days = document.Envelope?.Cube?.[0]?.Cube;
  if (!document.Envelope || !days) {
    throw new Error('not an ECB reference rates file: expected gesmes:Envelope > Cube > Cube time=...');
  }
  let latest: { date: string; cubes: CubeNode[] } | undefined;
  for (const day of days) {
    const date = day.time;
    if (typeof date !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(date)) {
      throw new Error(`a Cube of the file has no time='YYYY-MM-DD' attribute (${JSON.stringify(date)})`);
    }
    if (latest === undefined || date > latest.date) latest = { date, cubes: day.Cube ?? [] };
  }
  if (!latest) throw new Error('the file holds no day of rates');
  const rates: Record<string, string> = {};
  for (const cube of latest.cubes) {
    if (typeof cube.currency !== 'string' || typeof cube.rate !== 'string') {
      throw new Error(`a rate of ${latest.date} lacks its currency= or rate= attribute`);
    }
    if (rates[cube.currency] !== undefined) {
      throw new Error(`${cube.currency} appears twice on ${latest.date}`);
    }
    rates[cube.currency] = cube.rate.trim();
  }
  if (Object.keys(rates).length === 0) throw new Error(`the file holds no rate for ${latest.date}`);
  return { base: ECB_BASE, provider: ECB_PROVIDER, as_of: ecbSnapshotTime(latest.date), rates };
}
