// A synthetic bank directory for the banks scenario: `branches` branches as a directory CSV file (the operator
// import's format), with codes that pass the validators: IFSCs in India (75 %), ABA routing numbers with their
// 3-7-1 check digit in the US (15 %), sort codes in the UK (10 %). Names and cities come from fixed word
// lists, so free text matches like a real directory's does: a city matches a few thousand branches, a
// locality a few dozen. Deterministic (a seeded generator), so every run searches the same data.
import { DIRECTORY_COLUMNS } from '../../src/banks/directory.ts';

const CITIES: Record<'IN' | 'US' | 'GB', string[]> = {
  IN: [
    'Mumbai',
    'Delhi',
    'Bengaluru',
    'Hyderabad',
    'Ahmedabad',
    'Chennai',
    'Kolkata',
    'Pune',
    'Jaipur',
    'Surat',
    'Lucknow',
    'Kanpur',
    'Nagpur',
    'Indore',
    'Thane',
    'Bhopal',
    'Visakhapatnam',
    'Patna',
    'Vadodara',
    'Ghaziabad',
    'Ludhiana',
    'Agra',
    'Nashik',
    'Faridabad',
    'Meerut',
    'Rajkot',
    'Varanasi',
    'Srinagar',
    'Aurangabad',
    'Dhanbad',
    'Amritsar',
    'Allahabad',
    'Ranchi',
    'Howrah',
    'Coimbatore',
    'Jabalpur',
    'Gwalior',
    'Vijayawada',
    'Jodhpur',
    'Madurai',
    'Raipur',
    'Kota',
    'Guwahati',
    'Chandigarh',
    'Solapur',
    'Bareilly',
    'Moradabad',
    'Mysuru',
    'Tiruchirappalli',
    'Belgaum',
    'Mangaluru',
    'Thiruvananthapuram',
    'Kochi',
    'Dehradun',
    'Udaipur',
    'Ajmer',
    'Bhubaneswar',
    'Cuttack',
    'Jalandhar',
    'Siliguri',
  ],
  US: [
    'New York',
    'Los Angeles',
    'Chicago',
    'Houston',
    'Phoenix',
    'Philadelphia',
    'San Antonio',
    'San Diego',
    'Dallas',
    'San Jose',
    'Austin',
    'Jacksonville',
    'Columbus',
    'Charlotte',
    'Indianapolis',
    'Seattle',
    'Denver',
    'Boston',
    'Nashville',
    'Detroit',
    'Portland',
    'Memphis',
    'Louisville',
    'Baltimore',
    'Milwaukee',
  ],
  GB: [
    'London',
    'Birmingham',
    'Manchester',
    'Leeds',
    'Glasgow',
    'Liverpool',
    'Newcastle',
    'Sheffield',
    'Bristol',
    'Edinburgh',
    'Leicester',
    'Coventry',
    'Nottingham',
    'Cardiff',
    'Belfast',
    'Southampton',
    'Aberdeen',
    'York',
  ],
};

const SYLLABLES = [
  'an',
  'ba',
  'chi',
  'da',
  'ga',
  'har',
  'ka',
  'la',
  'ma',
  'na',
  'pa',
  'ra',
  'sa',
  'ta',
  'va',
  'wa',
  'ya',
  'jo',
  'ko',
  'lo',
  'mo',
  'no',
  'po',
  'ro',
  'so',
  'to',
  'vi',
  'ri',
  'ni',
  'mi',
  'li',
  'ki',
  'di',
  'bi',
  'gu',
  'ru',
  'pur',
  'nag',
  'gar',
  'bad',
  'wal',
  'ton',
  'ley',
  'field',
  'ford',
  'ham',
  'wick',
  'bury',
  'dale',
  'brook',
];
const SUFFIXES = [
  'Main Branch',
  'Market',
  'Road',
  'Nagar',
  'Colony',
  'Square',
  'Station',
  'Bazar',
  'Park',
  'Cross',
];

/** Mulberry32: a small seeded generator, so every run builds the same directory. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const capitalise = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** A name made of 2 or 3 syllables: about 2,000 distinct localities. */
function wordOf(random: () => number): string {
  const count = random() < 0.6 ? 2 : 3;
  let word = '';
  for (let index = 0; index < count; index++) word += SYLLABLES[Math.floor(random() * SYLLABLES.length)];
  return capitalise(word);
}

/** 4 letters for the index-th bank: distinct for every index below 26^4. */
function letters4(index: number): string {
  let code = '';
  let rest = index;
  for (let position = 0; position < 4; position++) {
    code = LETTERS[rest % 26] + code;
    rest = Math.floor(rest / 26);
  }
  return code;
}

function abaCheckDigit(first8: string): number {
  const weights = [3, 7, 1, 3, 7, 1, 3, 7];
  const sum = weights.reduce((total, weight, index) => total + weight * Number(first8[index]), 0);
  return (10 - (sum % 10)) % 10;
}

function csvField(value: string | null): string {
  if (value === null) return '';
  return /[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

export interface SyntheticDirectory {
  csv: string;
  branches: number;
  banks: number;
  /** Samples for the load: codes that exist, and free text that matches. */
  samples: {
    ifsc: string[];
    aba: string[];
    sortCodes: string[];
    bics: string[];
    cities: string[];
    localities: string[];
  };
}

export function syntheticDirectory(branches: number, seed = 20261123): SyntheticDirectory {
  const random = generator(seed);
  const lines = [DIRECTORY_COLUMNS.join(',')];
  const samples: SyntheticDirectory['samples'] = {
    ifsc: [],
    aba: [],
    sortCodes: [],
    bics: [],
    cities: [],
    localities: [],
  };
  const shares = [
    { country: 'IN' as const, count: Math.round(branches * 0.75), banks: 200 },
    { country: 'US' as const, count: Math.round(branches * 0.15), banks: 80 },
    { country: 'GB' as const, count: 0, banks: 40 },
  ];
  shares[2]!.count = branches - shares[0]!.count - shares[1]!.count;
  let bankIndex = 0;
  let banks = 0;
  for (const share of shares) {
    const perBank = Math.ceil(share.count / share.banks);
    let made = 0;
    for (let bank = 0; bank < share.banks && made < share.count; bank++, bankIndex++) {
      banks++;
      const code = letters4(bankIndex);
      const bic = `${code}${share.country}${LETTERS[bank % 26]}${(bank % 9) + 1}`;
      const bankName = `${wordOf(random)} ${share.country === 'IN' ? 'Sahakari Bank' : 'Bank'}`;
      if (samples.bics.length < 200 && bank % 2 === 0) samples.bics.push(bic);
      for (let index = 0; index < perBank && made < share.count; index++, made++) {
        const cities = CITIES[share.country];
        const city = cities[Math.floor(random() * cities.length)]!;
        const locality = wordOf(random);
        const name = `${locality} ${SUFFIXES[Math.floor(random() * SUFFIXES.length)]}`;
        let branchCodeType: string;
        let branchCode: string;
        let bankCodeType = '';
        let bankCode = '';
        if (share.country === 'IN') {
          branchCodeType = 'ifsc';
          branchCode = `${code}0${String(index).padStart(6, '0')}`;
          bankCodeType = 'ifsc';
          bankCode = code;
          if (index % 600 === 7) samples.ifsc.push(branchCode);
        } else if (share.country === 'US') {
          // 8 digits unique per branch (Federal Reserve district 01-12 first), then the check digit.
          const first8 = `${String((made % 12) + 1).padStart(2, '0')}${String(Math.floor(made / 12)).padStart(6, '0')}`;
          branchCodeType = 'aba';
          branchCode = `${first8}${abaCheckDigit(first8)}`;
          if (index % 150 === 3) samples.aba.push(branchCode);
        } else {
          branchCodeType = 'sort_code';
          branchCode = String(100_000 + made + 1);
          if (index % 100 === 5) samples.sortCodes.push(branchCode);
        }
        if (random() < 0.01 && samples.localities.length < 200) samples.localities.push(locality);
        lines.push(
          [
            share.country,
            bankName,
            bic,
            bankCodeType,
            bankCode,
            name,
            branchCodeType,
            branchCode,
            '',
            city,
            `${Math.floor(random() * 300) + 1} ${locality} ${SUFFIXES[Math.floor(random() * SUFFIXES.length)]}, ${city}`,
          ]
            .map((value) => csvField(value === '' ? null : value))
            .join(','),
        );
      }
    }
  }
  samples.cities = [...CITIES.IN, ...CITIES.US, ...CITIES.GB];
  return { csv: `${lines.join('\n')}\n`, branches, banks, samples };
}
