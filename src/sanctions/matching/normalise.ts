// Name normalisation for sanctions matching (D18), as Moov Watchman and OpenSanctions prepare names before
// comparing them: Unicode NFKD with the combining marks removed (é -> e), lower case, the Latin letters NFKD
// does not decompose folded (ß -> ss, ø -> o), Cyrillic transliterated, apostrophes and full stops dropped
// inside words (O'Brien -> obrien, S.A. -> sa), every other punctuation a word break, and for organisations
// the legal forms dropped ("ltd", "llc", "gmbh", ...). The same function prepares list names and the names
// screened, so both sides always agree.

/** Latin letters that NFKD leaves whole, folded to their usual ASCII spelling (lower case). */
const LATIN_FOLDS: Readonly<Record<string, string>> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  ł: 'l',
  đ: 'd',
  ð: 'd',
  þ: 'th',
  ı: 'i',
  ħ: 'h',
  ŧ: 't',
  ŀ: 'l',
  ĸ: 'k',
  ŋ: 'ng',
  ſ: 's',
};

/**
 * Cyrillic to Latin as ICAO Doc 9303 (machine-readable travel documents), Part 3, transliterates it: the
 * spelling printed in passports, and so the one most often found in Latin-script records. Letters with
 * diacritics (й, ё, ї, ѓ, ќ, ў) reach this table already decomposed by NFKD into their base letter.
 */
const CYRILLIC: Readonly<Record<string, string>> = {
  а: 'a',
  б: 'b',
  в: 'v',
  г: 'g',
  ґ: 'g',
  д: 'd',
  ђ: 'd',
  е: 'e',
  є: 'ie',
  ж: 'zh',
  з: 'z',
  ѕ: 'dz',
  и: 'i',
  і: 'i',
  ј: 'j',
  к: 'k',
  л: 'l',
  љ: 'lj',
  м: 'm',
  н: 'n',
  њ: 'nj',
  о: 'o',
  п: 'p',
  р: 'r',
  с: 's',
  т: 't',
  ћ: 'c',
  у: 'u',
  ф: 'f',
  х: 'kh',
  ц: 'ts',
  ч: 'ch',
  џ: 'dz',
  ш: 'sh',
  щ: 'shch',
  ъ: 'ie',
  ы: 'y',
  ь: '',
  э: 'e',
  ю: 'iu',
  я: 'ia',
};

const FOLDS: Readonly<Record<string, string>> = { ...LATIN_FOLDS, ...CYRILLIC };

/**
 * Legal forms of organisations, as normalised tokens: dropped from organisation names, because "Acme
 * Trading Ltd" and "ACME TRADING LIMITED" name the same company. Multi-word forms are matched as sequences.
 */
const LEGAL_FORM_TOKENS = new Set([
  'ab',
  'ag',
  'ao',
  'aps',
  'as',
  'asa',
  'bv',
  'ca',
  'bhd',
  'cjsc',
  'co',
  'company',
  'corp',
  'corporation',
  'cv',
  'eood',
  'fze',
  'fzco',
  'fzc',
  'fzllc',
  'gmbh',
  'inc',
  'incorporated',
  'jsc',
  'kft',
  'kg',
  'kk',
  'limited',
  'llc',
  'llp',
  'lp',
  'ltd',
  'nv',
  'oao',
  'ojsc',
  'ooo',
  'oy',
  'pao',
  'pjsc',
  'plc',
  'pte',
  'pty',
  'sa',
  'sal',
  'sarl',
  'sas',
  'sdn',
  'spa',
  'srl',
  'tov',
  'zao',
  'the',
]);
const LEGAL_FORM_SEQUENCES: readonly (readonly string[])[] = [
  ['sa', 'de', 'cv'],
  ['s', 'de', 'rl'],
  ['sp', 'z', 'oo'],
  ['fz', 'llc'],
];

const MARKS = /\p{M}/gu;
/**
 * Characters that show nothing (soft hyphen, zero-width space and joiners, bidirectional controls, BOM:
 * Unicode's default-ignorable code points) and control characters that neither space nor separate text.
 * They are dropped, not read as word breaks: "Pet\u00ADrov" looks like "Petrov" and must be screened as
 * it. The controls that do separate words stay breaks: whitespace (tab to carriage return, NEL U+0085) and
 * the information separators U+001C-U+001F, which text splitters read as whitespace.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters kept as breaks are named here.
const INVISIBLE = /(?![\t\n\v\f\r\u001c-\u001f\u0085])[\p{Default_Ignorable_Code_Point}\p{Cc}]/gu;
const JOINERS = /['’‘`´.]/g;
const BREAKS = /[^\p{L}\p{N}]+/gu;
const NEEDS_FOLD = /[^a-z0-9 ]/;

function fold(text: string): string {
  if (!NEEDS_FOLD.test(text)) return text;
  let out = '';
  for (const character of text) out += FOLDS[character] ?? character;
  return out;
}

/** The words of a name, normalised (no legal-form removal). */
export function nameTokens(name: string): string[] {
  const cleaned = fold(name.replace(INVISIBLE, '').normalize('NFKD').replace(MARKS, '').toLowerCase())
    .replace(JOINERS, '')
    .replace(BREAKS, ' ')
    .trim();
  return cleaned === '' ? [] : cleaned.split(' ');
}

function withoutSequence(tokens: string[], sequence: readonly string[]): string[] {
  for (let start = 0; start + sequence.length <= tokens.length; start++) {
    if (sequence.every((token, offset) => tokens[start + offset] === token)) {
      return [...tokens.slice(0, start), ...tokens.slice(start + sequence.length)];
    }
  }
  return tokens;
}

/** Drops legal forms; a name made only of legal forms ("The Company Ltd") keeps its words. */
export function dropLegalForms(tokens: string[]): string[] {
  let kept = tokens;
  for (const sequence of LEGAL_FORM_SEQUENCES) kept = withoutSequence(kept, sequence);
  kept = kept.filter((token) => !LEGAL_FORM_TOKENS.has(token));
  return kept.length > 0 ? kept : tokens;
}

/** What a name is compared as: individuals keep every word, organisations lose their legal forms. */
export function normaliseName(name: string, organisation: boolean): string[] {
  const tokens = nameTokens(name);
  return organisation ? dropLegalForms(tokens) : tokens;
}
