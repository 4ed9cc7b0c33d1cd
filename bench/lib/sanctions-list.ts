// A generated sanctions list in OFAC's SDN CSV layout (sdn.csv, alt.csv, add.csv), deterministic for a
// seed: individuals ("SURNAME, Given Middle", dates of birth and nationalities in the remarks),
// organisations with legal forms, vessels and aircraft, and aliases that are variant spellings, other word
// orders, shortened forms and unrelated names, as OFAC's aliases are. Surnames and company words are built
// from syllables, so the vocabulary is large (like the real list's transliterated names), while given
// names come from a short list, so some tokens are very common (as "MOHAMMED" is on the real list).
// Used by the `screening` benchmark and by the tests that compare blocked and full-scan matching.

/** mulberry32: a small seeded PRNG (uniform in [0, 1)). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const GIVEN = (
  'Mohammed Ahmad Ali Hassan Hussein Omar Khalid Abdullah Ibrahim Yusuf Mahmoud Mustafa Karim Tariq ' +
  'Ivan Sergei Dmitri Aleksandr Vladimir Nikolai Alexei Mikhail Andrei Pavel Oleg Yuri Igor Viktor ' +
  'Jose Carlos Luis Miguel Juan Pedro Rafael Diego Fernando Jorge Maria Ana Carmen Lucia Rosa ' +
  'Wei Jun Ming Hui Li Chen Jian Hong Kim Park Min Jong Sung Hyun Nguyen Thanh Minh Van ' +
  'Reza Ali Mehdi Hossein Javad Farhad Amir Said Nasser Fatima Aisha Leila Zainab Mariam ' +
  'John James Robert Michael David Peter Thomas George Paul Mark Anna Elena Olga Natalia Irina'
).split(' ');

const SYLLABLES = (
  'ka ra mo ha sa li na ba ta ri ko ya da za fa ma ni la ve ro zo ga du ki sha kha gha al el ' +
  'ov ev in an on ar or ur ad ud ed im am em ib ab ur ik ak ek sk st tr dr pr gr br vl vr ch zh ts'
).split(' ');

const SURNAME_ENDINGS = ['', '', '', 'ov', 'ova', 'enko', 'ski', 'i', 'ani', 'ez', 'es', 'in', 'yan', 'ovic'];

const INDUSTRY = (
  'TRADING SHIPPING INVESTMENT HOLDING INDUSTRIAL EXCHANGE BANK PETROLEUM CONSTRUCTION ENGINEERING ' +
  'LOGISTICS MARITIME AVIATION ELECTRONICS CHEMICALS METALS MINING ENERGY FINANCE CAPITAL GROUP ' +
  'TECHNOLOGY SERVICES IMPORT EXPORT DEVELOPMENT MANUFACTURING'
).split(' ');

const LEGAL_FORMS = [
  'LLC',
  'LTD',
  'CO.',
  'S.A.',
  'GMBH',
  'JSC',
  'FZE',
  'LIMITED',
  'COMPANY',
  'PJSC',
  'CORP.',
  '',
];

const COUNTRIES = [
  'Iran',
  'Russia',
  'Syria',
  'Korea, North',
  'Venezuela',
  'Cuba',
  'United Arab Emirates',
  'China',
  'Turkey',
  'Lebanon',
  'Iraq',
  'Yemen',
  'Belarus',
  'Burma',
  'Afghanistan',
  'Mexico',
  'Colombia',
  'Hong Kong',
];

const PROGRAMS = ['SDGT', 'IRAN', 'RUSSIA-EO14024', 'SDNTK', 'DPRK3', 'SYRIA', 'VENEZUELA-EO13850', 'CYBER2'];

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

export interface GeneratedEntry {
  id: number;
  type: 'individual' | 'organisation' | 'vessel' | 'aircraft';
  name: string;
  aliases: string[];
}

export interface GeneratedList {
  files: { 'sdn.csv': string; 'alt.csv': string; 'add.csv': string };
  entries: GeneratedEntry[];
  aliasCount: number;
}

/** Quoted as OFAC quotes text; `-0- ` is its empty field. */
const quote = (text: string): string => `"${text.replace(/"/g, "'")}"`;
const EMPTY = '-0- ';

export function generateOfacList(entryCount: number, aliasCount: number, seed = 20261123): GeneratedList {
  const random = seededRandom(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;
  const word = (syllables: number): string => {
    let text = '';
    for (let i = 0; i < syllables; i++) text += pick(SYLLABLES);
    return text;
  };
  const capital = (text: string): string => text[0]!.toUpperCase() + text.slice(1);
  const surname = (): string => (word(2 + Math.floor(random() * 2)) + pick(SURNAME_ENDINGS)).toUpperCase();
  const individual = (): string => {
    const given = pick(GIVEN);
    const middle = random() < 0.5 ? ` ${pick(GIVEN)}` : random() < 0.3 ? ` ${capital(word(3))}` : '';
    return `${surname()}, ${given}${middle}`;
  };
  const organisation = (): string => {
    const words = [capital(word(2 + Math.floor(random() * 2))).toUpperCase()];
    if (random() < 0.6) words.push(word(2).toUpperCase());
    words.push(pick(INDUSTRY));
    if (random() < 0.4) words.push(pick(INDUSTRY));
    const form = pick(LEGAL_FORMS);
    return form ? `${words.join(' ')} ${form}` : words.join(' ');
  };

  const entries: GeneratedEntry[] = [];
  const sdn: string[] = [];
  const add: string[] = [];
  for (let index = 0; index < entryCount; index++) {
    const id = 10_000 + index;
    const draw = random();
    const type: GeneratedEntry['type'] =
      draw < 0.6 ? 'individual' : draw < 0.95 ? 'organisation' : draw < 0.99 ? 'vessel' : 'aircraft';
    const name =
      type === 'individual'
        ? individual()
        : type === 'organisation'
          ? organisation()
          : type === 'vessel'
            ? `${word(2).toUpperCase()} ${word(2).toUpperCase()}`
            : `EP-${word(1).toUpperCase()}${Math.floor(random() * 90 + 10)}`;
    const country = pick(COUNTRIES);
    const remarks: string[] = [];
    if (type === 'individual') {
      const year = 1940 + Math.floor(random() * 60);
      const precision = random();
      remarks.push(
        precision < 0.6
          ? `DOB ${String(1 + Math.floor(random() * 28)).padStart(2, '0')} ${pick(MONTHS)} ${year}`
          : precision < 0.85
            ? `DOB ${year}`
            : `DOB circa ${year}`,
      );
      remarks.push(`nationality ${country}`);
    }
    entries.push({ id, type, name, aliases: [] });
    sdn.push(
      [
        String(id),
        quote(name),
        type === 'organisation' ? EMPTY : quote(type),
        quote(random() < 0.2 ? `${pick(PROGRAMS)}] [${pick(PROGRAMS)}` : pick(PROGRAMS)),
        EMPTY,
        EMPTY,
        EMPTY,
        EMPTY,
        EMPTY,
        EMPTY,
        EMPTY,
        remarks.length > 0 ? quote(`${remarks.join('; ')}.`) : EMPTY,
      ].join(','),
    );
    add.push(
      [String(id), String(50_000 + index), EMPTY, quote(capital(word(2))), quote(country), EMPTY].join(','),
    );
  }

  // Aliases: spread over the entries (3 per entry on average for 20,000 / 60,000).
  const alt: string[] = [];
  for (let index = 0; index < aliasCount; index++) {
    const entry = entries[Math.floor(random() * entries.length)]!;
    const variant = random();
    let alias: string;
    if (variant < 0.4) alias = misspell(entry.name, random);
    else if (variant < 0.6) alias = reorder(entry.name);
    else if (variant < 0.75) alias = entry.name.split(/[ ,]+/).slice(0, 2).join(' ');
    else alias = entry.type === 'individual' ? individual() : organisation();
    entry.aliases.push(alias);
    alt.push([String(entry.id), String(100_000 + index), quote('aka'), quote(alias), EMPTY].join(','));
  }
  const text = (rows: string[]) => `${rows.join('\r\n')}\r\n`;
  return { files: { 'sdn.csv': text(sdn), 'alt.csv': text(alt), 'add.csv': text(add) }, entries, aliasCount };
}

/** One letter changed, doubled or dropped in one word of four letters or more (a misspelling). */
export function misspell(name: string, random: () => number): string {
  const words = name.split(' ');
  const candidates = words.map((word, index) => [word, index] as const).filter(([word]) => word.length >= 4);
  if (candidates.length === 0) return name;
  const [word, index] = candidates[Math.floor(random() * candidates.length)]!;
  const at = 1 + Math.floor(random() * (word.length - 2));
  const kind = random();
  const letter = 'AEIOUY'[Math.floor(random() * 6)]!;
  const changed =
    kind < 0.4
      ? word.slice(0, at) + letter + word.slice(at + 1)
      : kind < 0.7
        ? word.slice(0, at) + word[at] + word.slice(at)
        : word.slice(0, at) + word.slice(at + 1);
  words[index] = changed;
  return words.join(' ');
}

/** "SURNAME, Given Middle" -> "Given Middle SURNAME"; other names: words in reverse order. */
export function reorder(name: string): string {
  if (name.includes(',')) {
    const [last, rest] = name.split(',', 2) as [string, string];
    return `${rest.trim()} ${last.trim()}`;
  }
  return name.split(' ').reverse().join(' ');
}
