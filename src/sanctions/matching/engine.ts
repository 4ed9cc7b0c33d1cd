// The matching engine of D18. Our scoring rules over a maintained string metric (talisman's Jaro-Winkler):
//
// - Names are normalised (normalise.ts) into words ("tokens").
// - Two tokens score their Jaro-Winkler similarity, lowered by LENGTH_PENALTY times their relative
//   difference in length (so that "petrov" is not almost "petrovsky", nor "vladimir" "vladimirovich": Jaro-
//   Winkler rewards a shared prefix whatever follows it). A single letter against a word it starts
//   ("v" / "vladimir") scores INITIAL_SCORE: abbreviated given names. Below TOKEN_FLOOR a pair does not match.
// - Tokens are aligned one to one, best pairs first (greedy), whatever their order in either name.
// - A name scores QUERY_WEIGHT x (the share of the screened name's letters matched, weighted by each pair's
//   score) + (1 - QUERY_WEIGHT) x (the same share of the list name's letters): every word screened must be
//   found, and a list name with more words (a patronymic) costs a little.
// - An entry scores its best name (its primary name or any alias). A date of birth outside all of the
//   entry's dates lowers it by DOB_PENALTY, a country outside the entry's countries by COUNTRY_PENALTY;
//   agreement adds nothing, so no score exceeds 1.
// - Scores are rounded to 2 decimals; an entry is a hit at or above the threshold; hits best first, at most
//   MAX_HITS.
//
// Blocking (so a screening does not score every name of 80,000): each distinct token of the lists is
// indexed by its character trigrams (padded as PostgreSQL's pg_trgm pads them), and each name by its
// tokens. A screened token looks up the list tokens sharing at least TRIGRAM_SHARE of its trigrams and
// scores them; every name holding such a token gains, per screened token, its best token score. Only names
// whose gains can still reach the threshold (an upper bound of the first term above, with the second term
// at its maximum) are scored in full. A pair that matches above TOKEN_FLOOR while sharing fewer trigrams
// is missed (short words with letters swapped, "lima" / "imna", share none): the price of not scanning. At a
// tenth, blocked results equal a full scan's on the tests' generated list; a quarter missed one hit in 45
// there, at half the match time. A name whose initials alone could reach the threshold has no word to block
// on: it is scored against the names with enough words to match that many of its words, an exact bound.
import jaroWinkler from 'talisman/metrics/jaro-winkler.js';
import { withinAny } from '../formats/dates.ts';
import { ENTRY_TYPES, type EntryType, type ListEntry } from '../formats/types.ts';
import { normaliseName } from './normalise.ts';

export const TOKEN_FLOOR = 0.8;
export const INITIAL_SCORE = 0.9;
export const LENGTH_PENALTY = 0.5;
export const QUERY_WEIGHT = 0.75;
export const DOB_PENALTY = 0.15;
export const COUNTRY_PENALTY = 0.1;
export const MAX_HITS = 10;
export const TRIGRAM_SHARE = 0.1;
const MAX_LENGTH_GAP = (1 - TOKEN_FLOOR) / LENGTH_PENALTY;

export type ScreenedType = 'individual' | 'organisation';

export interface IndexedEntry extends ListEntry {
  /** The code of the list the entry belongs to. */
  list: string;
}

export interface MatchQuery {
  entityType: ScreenedType;
  name: string;
  /** `YYYY-MM-DD`. */
  dateOfBirth?: string | null;
  /** ISO 3166-1 alpha-2. */
  country?: string | null;
}

export interface Hit {
  list: string;
  entry_id: string;
  matched_name: string;
  /** 0..1 with 2 decimals. */
  score: string;
  entity_type: EntryType;
  programs: string[];
  countries: string[];
}

/** Rounded to 2 decimals; the epsilon keeps 0.855 (0.8549999... in binary) at 0.86. */
export const roundScore = (score: number): number => Math.round(score * 100 + 1e-6) / 100;

/** Individuals are screened against individuals, organisations against every other kind; `unknown` both. */
function comparable(screened: ScreenedType, entry: EntryType): boolean {
  if (entry === 'unknown') return true;
  return screened === 'individual' ? entry === 'individual' : entry !== 'individual';
}

export function tokenScore(a: string, b: string): number {
  if (a === b) return 1;
  if (a.length === 1 || b.length === 1) {
    const [initial, word] = a.length === 1 ? [a, b] : [b, a];
    return word.length > 1 && word.startsWith(initial) ? INITIAL_SCORE : 0;
  }
  const lengthGap = Math.abs(a.length - b.length) / Math.max(a.length, b.length);
  // Jaro-Winkler is at most 1: a gap this wide cannot reach the floor, whatever the letters.
  if (lengthGap > MAX_LENGTH_GAP) return 0;
  const similarity = jaroWinkler(a, b) * (1 - LENGTH_PENALTY * lengthGap);
  return similarity >= TOKEN_FLOOR ? similarity : 0;
}

const letters = (tokens: readonly string[]): number => tokens.reduce((sum, token) => sum + token.length, 0);

/** The score of one name against another, both normalised (see the rules at the top of this file). */
export function nameScore(query: readonly string[], name: readonly string[]): number {
  const rows = query.length;
  const columns = name.length;
  if (rows === 0 || columns === 0) return 0;
  const scores = new Float64Array(rows * columns);
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < columns; j++) scores[i * columns + j] = tokenScore(query[i]!, name[j]!);
  }
  const rowUsed = new Uint8Array(rows);
  const columnUsed = new Uint8Array(columns);
  let queryMatched = 0;
  let nameMatched = 0;
  for (let pair = Math.min(rows, columns); pair > 0; pair--) {
    let best = 0;
    let bestRow = -1;
    let bestColumn = -1;
    for (let i = 0; i < rows; i++) {
      if (rowUsed[i]) continue;
      for (let j = 0; j < columns; j++) {
        const score = scores[i * columns + j]!;
        if (score > best && !columnUsed[j]) {
          best = score;
          bestRow = i;
          bestColumn = j;
        }
      }
    }
    if (bestRow < 0) break;
    rowUsed[bestRow] = 1;
    columnUsed[bestColumn] = 1;
    queryMatched += best * query[bestRow]!.length;
    nameMatched += best * name[bestColumn]!.length;
  }
  return QUERY_WEIGHT * (queryMatched / letters(query)) + (1 - QUERY_WEIGHT) * (nameMatched / letters(name));
}

/** pg_trgm's padding: two spaces before the word, one after. */
function trigrams(token: string): string[] {
  const padded = `  ${token} `;
  const found = new Set<string>();
  for (let i = 0; i + 3 <= padded.length; i++) found.add(padded.slice(i, i + 3));
  return [...found];
}

const CHUNK_BITS = 14;
const CHUNK_SIZE = 1 << CHUNK_BITS;

/**
 * A growable array of 32-bit integers (off the JavaScript heap, 4 bytes each), in chunks of 16,384: it
 * grows without copying, so a build leaves no outgrown arrays behind (a doubling array leaves about as
 * many bytes of them as it keeps, freed only by the next full collection).
 */
class IntBuffer {
  private readonly chunks: Int32Array[] = [];
  length = 0;
  push(value: number): void {
    const offset = this.length & (CHUNK_SIZE - 1);
    if (offset === 0) this.chunks.push(new Int32Array(CHUNK_SIZE));
    this.chunks[this.chunks.length - 1]![offset] = value;
    this.length++;
  }
  at(index: number): number {
    return this.chunks[index >>> CHUNK_BITS]![index & (CHUNK_SIZE - 1)]!;
  }
  /** The values, in an array of their own length. */
  toArray(): Int32Array {
    const values = new Int32Array(this.length);
    this.chunks.forEach((chunk, k) => {
      const start = k * CHUNK_SIZE;
      values.set(chunk.subarray(0, Math.min(CHUNK_SIZE, this.length - start)), start);
    });
    return values;
  }
}

/**
 * Lists of integers packed into two typed arrays (compressed sparse rows): list `k` is
 * `values[offsets[k] .. offsets[k + 1])`. Two allocations instead of one small array per list keeps the
 * index compact: tens of thousands of tiny typed arrays cost far more memory than their contents.
 */
class PackedLists {
  readonly offsets: Int32Array;
  readonly values: Int32Array;
  constructor(offsets: Int32Array, values: Int32Array) {
    this.offsets = offsets;
    this.values = values;
  }

  /** `count` lists from pairs: `keys[i]` and `items[i]` are one pair; items keep their order within a key. */
  static fromPairs(count: number, keys: IntBuffer, items: IntBuffer): PackedLists {
    const offsets = new Int32Array(count + 1);
    for (let i = 0; i < keys.length; i++) offsets[keys.at(i) + 1]!++;
    for (let k = 0; k < count; k++) offsets[k + 1]! += offsets[k]!;
    const values = new Int32Array(keys.length);
    const fill = offsets.slice(0, count);
    for (let i = 0; i < keys.length; i++) values[fill[keys.at(i)]!++] = items.at(i);
    return new PackedLists(offsets, values);
  }

  /** Value -> the lists holding it (each list once, in list order), for values below `count`. */
  inverted(count: number): PackedLists {
    const lists = this.offsets.length - 1;
    const offsets = new Int32Array(count + 1);
    this.eachDistinct(lists, (_list, value) => offsets[value + 1]!++);
    for (let k = 0; k < count; k++) offsets[k + 1]! += offsets[k]!;
    const values = new Int32Array(offsets[count]!);
    const fill = offsets.slice(0, count);
    this.eachDistinct(lists, (list, value) => {
      values[fill[value]!++] = list;
    });
    return new PackedLists(offsets, values);
  }

  /** Each list's values, a value repeated within a list visited once. */
  private eachDistinct(lists: number, visit: (list: number, value: number) => void): void {
    const { offsets, values } = this;
    for (let list = 0; list < lists; list++) {
      const start = offsets[list]!;
      for (let k = start; k < offsets[list + 1]!; k++) {
        const value = values[k]!;
        let repeated = false;
        for (let earlier = start; earlier < k && !repeated; earlier++) repeated = values[earlier] === value;
        if (!repeated) visit(list, value);
      }
    }
  }
}

export interface MatchOptions {
  /** False: score every name (tests compare the blocked search against it). Default true. */
  blocking?: boolean;
  /** Filled with how many names were scored in full (benchmarks and tests of the blocking). */
  stats?: { scored: number };
}

/** What a hit shows of its entry, and what the sandbox's magic hits are made from. */
export type HitEntry = Pick<
  IndexedEntry,
  'list' | 'entryId' | 'entityType' | 'name' | 'programs' | 'countries'
>;

/** One array object per distinct list of values: most entries share their programs, countries or none. */
class ArrayPool {
  private readonly arrays = new Map<string, string[]>();
  intern(values: string[]): string[] {
    const key = values.join('\u0000');
    const known = this.arrays.get(key);
    if (known?.length === values.length && known.every((value, i) => value === values[i])) return known;
    if (known === undefined) this.arrays.set(key, values);
    return values;
  }
}

/**
 * Collects entries one at a time for a MatchIndex, keeping only what matching and hits read: an entry's
 * names become normalised tokens (and the raw names the hits show), so that the entry object itself can
 * be dropped at once. The index of a whole list can thus be built while its rows are read.
 */
export class MatchIndexBuilder {
  readonly lists: string[] = [];
  readonly entryList = new IntBuffer();
  readonly entryType = new IntBuffer();
  readonly entryIds: string[] = [];
  readonly primaryNames: string[] = [];
  readonly programs: string[][] = [];
  readonly countries: string[][] = [];
  readonly birthDates: string[][] = [];
  readonly nameEntry = new IntBuffer();
  readonly nameRaw: string[] = [];
  /** Where each name's tokens start in `nameTokens`; names are added in order, so they need no sorting. */
  readonly nameStart = new IntBuffer();
  readonly nameTokens = new IntBuffer();
  readonly vocabulary = new Map<string, number>();
  readonly vocabularyTokens: string[] = [];
  private readonly arrays = new ArrayPool();

  add(entry: IndexedEntry): void {
    const entryIndex = this.entryIds.length;
    let list = this.lists.lastIndexOf(entry.list);
    if (list < 0) list = this.lists.push(entry.list) - 1;
    this.entryList.push(list);
    this.entryType.push(ENTRY_TYPES.indexOf(entry.entityType));
    this.entryIds.push(entry.entryId);
    this.primaryNames.push(entry.name);
    this.programs.push(this.arrays.intern(entry.programs));
    this.countries.push(this.arrays.intern(entry.countries));
    this.birthDates.push(this.arrays.intern(entry.birthDates));
    const organisation = entry.entityType !== 'individual';
    const seen = new Set<string>();
    for (const raw of [entry.name, ...entry.aliases]) {
      const tokens = normaliseName(raw, organisation);
      const key = tokens.join(' ');
      if (tokens.length === 0 || seen.has(key)) continue;
      seen.add(key);
      this.nameEntry.push(entryIndex);
      this.nameRaw.push(raw);
      this.nameStart.push(this.nameTokens.length);
      for (const token of tokens) this.nameTokens.push(this.intern(token));
    }
  }

  /** The vocabulary id of a token, added on first sight. */
  private intern(token: string): number {
    let id = this.vocabulary.get(token);
    if (id === undefined) {
      id = this.vocabularyTokens.length;
      this.vocabulary.set(token, id);
      this.vocabularyTokens.push(token);
    }
    return id;
  }
}

export class MatchIndex {
  readonly nameCount: number;
  private readonly lists: readonly string[];
  /** Per entry: its list (an index into `lists`), its type (an index into ENTRY_TYPES), and the rest. */
  private readonly entryList: Int32Array;
  private readonly entryType: Int32Array;
  private readonly entryIds: readonly string[];
  private readonly primaryNames: readonly string[];
  private readonly programs: readonly string[][];
  private readonly countries: readonly string[][];
  private readonly birthDates: readonly string[][];
  private readonly nameEntry: Int32Array;
  private readonly nameRaw: readonly string[];
  /** Each name's tokens, as vocabulary ids. */
  private readonly nameTokens: PackedLists;
  private readonly vocabulary: ReadonlyMap<string, number>;
  private readonly vocabularyTokens: readonly string[];
  /** Vocabulary id -> the names holding the token (each name once). */
  private readonly postings: PackedLists;
  private readonly trigramIds = new Map<string, number>();
  /** Trigram id -> the vocabulary tokens holding it. */
  private readonly trigramPostings: PackedLists;
  /** List code -> entry id -> entry index. */
  private readonly byKey = new Map<string, Map<string, number>>();
  // Scratch space of one search (matching is synchronous, so one search runs at a time per index).
  private readonly gain: Float64Array;
  private readonly nameMark: Int32Array;
  private readonly tokenMark: Int32Array;
  private readonly sharedTrigrams: Int32Array;
  private readonly vocabularyMark: Int32Array;
  private generation = 0;

  /** The index of `entries`, or of the entries a builder was given. */
  constructor(entries: Iterable<IndexedEntry> | MatchIndexBuilder) {
    let built: MatchIndexBuilder;
    if (entries instanceof MatchIndexBuilder) built = entries;
    else {
      built = new MatchIndexBuilder();
      for (const entry of entries) built.add(entry);
    }
    this.lists = built.lists;
    this.entryList = built.entryList.toArray();
    this.entryType = built.entryType.toArray();
    this.entryIds = built.entryIds;
    this.primaryNames = built.primaryNames;
    this.programs = built.programs;
    this.countries = built.countries;
    this.birthDates = built.birthDates;
    this.entryIds.forEach((entryId, entryIndex) => {
      const list = this.lists[this.entryList[entryIndex]!]!;
      let ids = this.byKey.get(list);
      if (ids === undefined) {
        ids = new Map();
        this.byKey.set(list, ids);
      }
      ids.set(entryId, entryIndex);
    });
    this.nameCount = built.nameEntry.length;
    this.nameEntry = built.nameEntry.toArray();
    this.nameRaw = built.nameRaw;
    this.vocabulary = built.vocabulary;
    this.vocabularyTokens = built.vocabularyTokens;
    // The offsets of the names' tokens, closed by their total (the builder is left as it was).
    const nameOffsets = new Int32Array(this.nameCount + 1);
    nameOffsets.set(built.nameStart.toArray());
    nameOffsets[this.nameCount] = built.nameTokens.length;
    this.nameTokens = new PackedLists(nameOffsets, built.nameTokens.toArray());
    this.postings = this.nameTokens.inverted(this.vocabularyTokens.length);
    const trigramKeys = new IntBuffer();
    const trigramTokens = new IntBuffer();
    this.vocabularyTokens.forEach((token, id) => {
      if (token.length < 2) return;
      for (const trigram of trigrams(token)) {
        let trigramId = this.trigramIds.get(trigram);
        if (trigramId === undefined) {
          trigramId = this.trigramIds.size;
          this.trigramIds.set(trigram, trigramId);
        }
        trigramKeys.push(trigramId);
        trigramTokens.push(id);
      }
    });
    this.trigramPostings = PackedLists.fromPairs(this.trigramIds.size, trigramKeys, trigramTokens);
    this.gain = new Float64Array(this.nameCount);
    this.nameMark = new Int32Array(this.nameCount);
    this.tokenMark = new Int32Array(this.nameCount);
    this.sharedTrigrams = new Int32Array(this.vocabularyTokens.length);
    this.vocabularyMark = new Int32Array(this.vocabularyTokens.length);
  }

  private entityType(entryIndex: number): EntryType {
    return ENTRY_TYPES[this.entryType[entryIndex]!]!;
  }

  private hitEntry(entryIndex: number): HitEntry {
    return {
      list: this.lists[this.entryList[entryIndex]!]!,
      entryId: this.entryIds[entryIndex]!,
      entityType: this.entityType(entryIndex),
      name: this.primaryNames[entryIndex]!,
      programs: this.programs[entryIndex]!,
      countries: this.countries[entryIndex]!,
    };
  }

  /** The tokens of a name, as strings. */
  private tokensOf(nameId: number): string[] {
    const { offsets, values } = this.nameTokens;
    const tokens: string[] = [];
    for (let k = offsets[nameId]!; k < offsets[nameId + 1]!; k++)
      tokens.push(this.vocabularyTokens[values[k]!]!);
    return tokens;
  }

  entry(list: string, entryId: string): HitEntry | undefined {
    const entryIndex = this.byKey.get(list)?.get(entryId);
    return entryIndex === undefined ? undefined : this.hitEntry(entryIndex);
  }

  /** Marks tell "touched in this pass" from stale values; a search uses a few dozen generations at most. */
  private nextGeneration(): number {
    return ++this.generation;
  }

  private beginSearch(): void {
    if (this.generation < 2_000_000_000) return;
    this.generation = 0;
    this.nameMark.fill(0);
    this.tokenMark.fill(0);
    this.vocabularyMark.fill(0);
  }

  /** List tokens that match `token` at or above TOKEN_FLOOR, best first, as [vocabulary id, score]. */
  private similarTokens(token: string): [number, number][] {
    const found: [number, number][] = [];
    const initial = this.vocabulary.get(token[0]!);
    if (initial !== undefined && token.length > 1) found.push([initial, INITIAL_SCORE]);
    const grams = trigrams(token);
    const needed = Math.max(1, Math.ceil(TRIGRAM_SHARE * grams.length));
    const mark = this.nextGeneration();
    const touched: number[] = [];
    const { offsets, values } = this.trigramPostings;
    for (const gram of grams) {
      const trigramId = this.trigramIds.get(gram);
      if (trigramId === undefined) continue;
      for (let k = offsets[trigramId]!; k < offsets[trigramId + 1]!; k++) {
        const id = values[k]!;
        if (this.vocabularyMark[id] !== mark) {
          this.vocabularyMark[id] = mark;
          this.sharedTrigrams[id] = 0;
          touched.push(id);
        }
        this.sharedTrigrams[id]!++;
      }
    }
    for (const id of touched) {
      if (this.sharedTrigrams[id]! < needed) continue;
      const score = tokenScore(token, this.vocabularyTokens[id]!);
      if (score > 0) found.push([id, score]);
    }
    return found.sort((a, b) => b[1] - a[1]);
  }

  /** Names that may reach the threshold (see Blocking above). */
  private candidates(query: readonly string[], threshold: number): number[] {
    const total = letters(query);
    // A query initial may match any name (score at most 1, weight 1): counted for every name.
    const initials = query.filter((token) => token.length === 1).length;
    const needed = (threshold - 0.005 - (1 - QUERY_WEIGHT)) / QUERY_WEIGHT;
    if (initials / total >= needed) {
      // The initials alone could make a hit: no word to block on. But a name matches at most as many
      // screened words as it has words (one to one, each at most 1), so one with fewer words than the
      // longest screened words need to reach the threshold cannot: a name of many initials scores few names.
      const lengths = query.map((token) => token.length).sort((a, b) => b - a);
      let fewest = 0;
      for (let covered = 0; covered / total < needed; fewest++) covered += lengths[fewest]!;
      const { offsets } = this.nameTokens;
      const kept: number[] = [];
      for (let nameId = 0; nameId < this.nameCount; nameId++) {
        if (offsets[nameId + 1]! - offsets[nameId]! >= fewest) kept.push(nameId);
      }
      return kept;
    }
    this.beginSearch();
    const search = this.nextGeneration();
    const touched: number[] = [];
    for (const token of query) {
      if (token.length === 1) continue;
      const similar = this.similarTokens(token);
      const pass = this.nextGeneration();
      const { offsets, values } = this.postings;
      for (const [id, score] of similar) {
        const gain = score * token.length;
        for (let k = offsets[id]!; k < offsets[id + 1]!; k++) {
          const nameId = values[k]!;
          if (this.nameMark[nameId] !== search) {
            this.nameMark[nameId] = search;
            this.gain[nameId] = 0;
            touched.push(nameId);
          }
          // Best first: the first gain of this token for a name is its best.
          if (this.tokenMark[nameId] !== pass) {
            this.tokenMark[nameId] = pass;
            this.gain[nameId]! += gain;
          }
        }
      }
    }
    return touched.filter((nameId) => (this.gain[nameId]! + initials) / total >= needed);
  }

  match(query: MatchQuery, threshold: number, options: MatchOptions = {}): Hit[] {
    const tokens = normaliseName(query.name, query.entityType === 'organisation');
    if (tokens.length === 0) return [];
    const names =
      options.blocking === false
        ? Array.from({ length: this.nameCount }, (_, index) => index)
        : this.candidates(tokens, threshold);
    if (options.stats) options.stats.scored = names.length;
    const best = new Map<number, { score: number; nameId: number }>();
    for (const nameId of names) {
      const entryIndex = this.nameEntry[nameId]!;
      if (!comparable(query.entityType, this.entityType(entryIndex))) continue;
      const score = nameScore(tokens, this.tokensOf(nameId));
      const current = best.get(entryIndex);
      if (current === undefined || score > current.score) best.set(entryIndex, { score, nameId });
    }
    const hits: { hit: Hit; score: number }[] = [];
    for (const [entryIndex, { score, nameId }] of best) {
      const dates = { birthDates: this.birthDates[entryIndex]!, countries: this.countries[entryIndex]! };
      const adjusted = roundScore(Math.max(0, score - penalty(dates, query)));
      if (adjusted < threshold) continue;
      hits.push({ score: adjusted, hit: toHit(this.hitEntry(entryIndex), this.nameRaw[nameId]!, adjusted) });
    }
    return sortHits(hits).slice(0, MAX_HITS);
  }
}

/** What a contradicting date of birth or country costs (D18); agreement costs nothing and adds nothing. */
export function penalty(entry: Pick<ListEntry, 'birthDates' | 'countries'>, query: MatchQuery): number {
  let total = 0;
  if (query.dateOfBirth && entry.birthDates.length > 0 && !withinAny(entry.birthDates, query.dateOfBirth)) {
    total += DOB_PENALTY;
  }
  if (query.country && entry.countries.length > 0 && !entry.countries.includes(query.country)) {
    total += COUNTRY_PENALTY;
  }
  return total;
}

export function toHit(entry: HitEntry, matchedName: string, score: number): Hit {
  return {
    list: entry.list,
    entry_id: entry.entryId,
    matched_name: matchedName,
    score: score.toFixed(2),
    entity_type: entry.entityType,
    programs: entry.programs,
    countries: entry.countries,
  };
}

/** Best first; equal scores by list, then entry id, so that the order is stable. */
export function sortHits<T extends { hit: Hit; score: number }>(hits: T[]): Hit[] {
  return hits
    .sort(
      (a, b) =>
        b.score - a.score ||
        (a.hit.list < b.hit.list ? -1 : a.hit.list > b.hit.list ? 1 : 0) ||
        (a.hit.entry_id < b.hit.entry_id ? -1 : a.hit.entry_id > b.hit.entry_id ? 1 : 0),
    )
    .map((entry) => entry.hit);
}
