// The sandbox list (D24): fictional entries seeded on every sandbox start (idempotent), and the magic names
// integrators use to provoke hits: a name containing "Sanctioned" matches the list with score 1.00, one
// containing "Lookalike" at 0.90. Every entry here is invented.
import { withTransaction } from '../db/pool.ts';
import type { AppDeps } from '../platform/deps.ts';
import type { ListEntry } from './formats/types.ts';
import { type Hit, type MatchIndex, type MatchQuery, sortHits, toHit } from './matching/engine.ts';
import { nameTokens } from './matching/normalise.ts';
import * as repo from './repository.ts';

export const SANDBOX_LIST = 'sandbox';
export const SANDBOX_LIST_NAME = 'Sandbox list (fictional entries)';

export const SANDBOX_ENTRIES: readonly ListEntry[] = [
  {
    entryId: 'SBX-0001',
    entityType: 'individual',
    name: 'SANCTIONED, Sandbox Person',
    aliases: [],
    programs: ['SANDBOX'],
    countries: [],
    birthDates: [],
  },
  {
    entryId: 'SBX-0002',
    entityType: 'organisation',
    name: 'SANCTIONED SANDBOX TRADING LTD',
    aliases: [],
    programs: ['SANDBOX'],
    countries: [],
    birthDates: [],
  },
  {
    entryId: 'SBX-0003',
    entityType: 'individual',
    name: 'LOOKALIKE, Sandbox Person',
    aliases: [],
    programs: ['SANDBOX'],
    countries: [],
    birthDates: [],
  },
  {
    entryId: 'SBX-0004',
    entityType: 'organisation',
    name: 'LOOKALIKE SANDBOX HOLDINGS LLC',
    aliases: [],
    programs: ['SANDBOX'],
    countries: [],
    birthDates: [],
  },
  {
    entryId: 'SBX-0005',
    entityType: 'individual',
    name: 'QUARRINGTON, Zebulon Ambrose',
    aliases: ['QUARRINGTON, Zeb', 'KVARRINGTON, Zebulon'],
    programs: ['SANDBOX'],
    countries: ['GB'],
    birthDates: ['1961-07-14/1961-07-14'],
  },
  {
    entryId: 'SBX-0006',
    entityType: 'individual',
    name: 'VANTREIGHT, Orla Maren',
    aliases: ['VAN TREIGHT, Orla'],
    programs: ['SANDBOX'],
    countries: ['IE', 'MT'],
    birthDates: ['1979-01-01/1979-12-31'],
  },
  {
    entryId: 'SBX-0007',
    entityType: 'organisation',
    name: 'FICTIONAL ARMS EXPORT COMPANY',
    aliases: ['FAEC', 'FICTIONAL ARMS EXPORTS'],
    programs: ['SANDBOX'],
    countries: ['ZW'],
    birthDates: [],
  },
  {
    entryId: 'SBX-0008',
    entityType: 'vessel',
    name: 'PAPER TIGER',
    aliases: ['MV PAPER TIGER'],
    programs: ['SANDBOX'],
    countries: ['PA'],
    birthDates: [],
  },
];

/** The magic words, the score they give, and the entry they hit for each kind of name screened. */
export const SANDBOX_MAGIC_NAMES = [
  { word: 'sanctioned', score: 1, entries: { individual: 'SBX-0001', organisation: 'SBX-0002' } },
  { word: 'lookalike', score: 0.9, entries: { individual: 'SBX-0003', organisation: 'SBX-0004' } },
] as const;

/** Seeds the sandbox list once (D24); a later start finds it and changes nothing. */
export async function seedSandboxList(deps: AppDeps): Promise<void> {
  await withTransaction(deps.pool, async (tx) => {
    const created = await repo.insertListIfAbsent(tx, {
      code: SANDBOX_LIST,
      name: SANDBOX_LIST_NAME,
      format: 'sandbox',
      entries: SANDBOX_ENTRIES.length,
      aliases: SANDBOX_ENTRIES.reduce((sum, entry) => sum + entry.aliases.length, 0),
    });
    if (created) await repo.insertEntries(tx, SANDBOX_LIST, SANDBOX_ENTRIES);
  });
}

/**
 * The engine's hits with the magic names' hits in place of any the engine found on the same entries, best
 * first, at most `limit`. The magic needs the sandbox list in the index (it is seeded in sandbox only).
 */
export function withMagicHits(
  index: MatchIndex,
  query: MatchQuery,
  hits: readonly Hit[],
  threshold: number,
  limit: number,
): Hit[] {
  const words = nameTokens(query.name).join(' ');
  const magic: { hit: Hit; score: number }[] = [];
  for (const rule of SANDBOX_MAGIC_NAMES) {
    if (!words.includes(rule.word) || rule.score < threshold) continue;
    const entry = index.entry(SANDBOX_LIST, rule.entries[query.entityType]);
    if (entry) magic.push({ score: rule.score, hit: toHit(entry, entry.name, rule.score) });
  }
  if (magic.length === 0) return [...hits];
  const replaced = new Set(magic.map(({ hit }) => hit.entry_id));
  const kept = hits
    .filter((hit) => !(hit.list === SANDBOX_LIST && replaced.has(hit.entry_id)))
    .map((hit) => ({ hit, score: Number(hit.score) }));
  return sortHits([...magic, ...kept]).slice(0, limit);
}
