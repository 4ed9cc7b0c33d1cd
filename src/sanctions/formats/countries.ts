// Countries as ISO 3166-1 alpha-2 codes (D14). The codes and their English names come from ICU (the
// Unicode CLDR data built into Node, through Intl), not a hand-typed table; OFAC writes some countries its
// own way ("Korea, North", "Burma"), and those spellings are listed here.
import { nameTokens } from '../matching/normalise.ts';

const displayNames = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });

/**
 * Region codes CLDR names that ISO 3166-1 does not assign to a country: exceptionally reserved codes and
 * groupings (AC, CP, CQ, DG, EA, EU, EZ, IC, TA, UN) and user-assigned ones (QO, XA, XB, XK, ZZ).
 */
const NOT_COUNTRIES = new Set([
  'AC',
  'CP',
  'CQ',
  'DG',
  'EA',
  'EU',
  'EZ',
  'IC',
  'QO',
  'TA',
  'UN',
  'XA',
  'XB',
  'XK',
  'ZZ',
]);

function currentCode(code: string): boolean {
  if (NOT_COUNTRIES.has(code) || displayNames.of(code) === undefined) return false;
  // Withdrawn codes (BU, SU, YU, ...) canonicalise to their successor.
  return Intl.getCanonicalLocales(`und-${code}`)[0] === `und-${code}`;
}

const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
export const COUNTRY_CODES: readonly string[] = [...LETTERS]
  .flatMap((first) => [...LETTERS].map((second) => first + second))
  .filter(currentCode);
const CODE_SET = new Set(COUNTRY_CODES);

export const isCountryCode = (code: string): boolean => CODE_SET.has(code);

/** Words that do not tell countries apart ("Bahamas, The", "Saint" / "St."). */
const FILLER = new Set(['the', 'and', 'of']);
function key(name: string): string {
  return nameTokens(name.replace(/&/g, ' and '))
    .map((token) => (token === 'saint' ? 'st' : token))
    .filter((token) => !FILLER.has(token))
    .join(' ');
}

/** Spellings of OFAC's address and nationality fields (and common English ones) that CLDR does not use. */
const OTHER_NAMES: Readonly<Record<string, string>> = {
  'korea north': 'KP',
  'korea democratic peoples republic': 'KP',
  dprk: 'KP',
  'korea south': 'KR',
  'korea republic': 'KR',
  burma: 'MM',
  'congo democratic republic': 'CD',
  'democratic republic congo': 'CD',
  'congo republic': 'CG',
  'ivory coast': 'CI',
  turkey: 'TR',
  'czech republic': 'CZ',
  macedonia: 'MK',
  macau: 'MO',
  macao: 'MO',
  'hong kong': 'HK',
  'cabo verde': 'CV',
  swaziland: 'SZ',
  'east timor': 'TL',
  'united states america': 'US',
  usa: 'US',
  uk: 'GB',
  'great britain': 'GB',
  'west bank': 'PS',
  gaza: 'PS',
  palestinian: 'PS',
  palestine: 'PS',
  'holy see': 'VA',
  vatican: 'VA',
  'micronesia federated states': 'FM',
  'virgin islands british': 'VG',
  'virgin islands us': 'VI',
  'russian federation': 'RU',
  'syrian arab republic': 'SY',
  'lao peoples democratic republic': 'LA',
  'viet nam': 'VN',
  'brunei darussalam': 'BN',
};

const BY_NAME: ReadonlyMap<string, string> = new Map([
  ...COUNTRY_CODES.map((code) => [key(displayNames.of(code)!), code] as const),
  ...Object.entries(OTHER_NAMES),
]);

/**
 * The alpha-2 code of a country name ("Iran", "Korea, North", "Iran, Islamic Republic of"), or of an alpha-2
 * code in any case; undefined when it names no country ("undetermined", "Region: Crimea").
 */
export function countryCode(text: string): string | undefined {
  const trimmed = text.trim();
  if (/^[A-Za-z]{2}$/.test(trimmed)) {
    const code = trimmed.toUpperCase();
    return CODE_SET.has(code) ? code : undefined;
  }
  const found = BY_NAME.get(key(trimmed));
  if (found) return found;
  // "Iran, Islamic Republic of" -> "Iran"
  const beforeComma = trimmed.split(',')[0];
  return beforeComma !== undefined && beforeComma !== trimmed ? BY_NAME.get(key(beforeComma)) : undefined;
}
