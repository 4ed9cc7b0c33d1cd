// The match index of one process, kept consistent with the lists in PostgreSQL across every API process:
// each screening reads the lists' versions (one small indexed read, in its own transaction) and, when
// they differ from those the index was built from, the index is rebuilt from the lists before matching.
// An import in one process is thus seen by the next screening in every process, without messaging
// between them. Matching in memory instead of in PostgreSQL (pg_trgm) keeps the scoring rules in one
// place and the database's CPU free; operator guide "Sanctions lists" has the figures.
import type { Pool, Queryable } from '../../db/pool.ts';
import * as repo from '../repository.ts';
import { MatchIndex, MatchIndexBuilder } from './engine.ts';

export interface VersionedIndex {
  index: MatchIndex;
  /** `code:version` of every list, joined by commas (the screenings' `lists_version`). */
  version: string;
}

interface Cache {
  current: VersionedIndex | undefined;
  /** A build under way, and the versions it was started for. */
  building: { version: string; promise: Promise<VersionedIndex> } | undefined;
}

// One cache per database pool: an app (and a test) has one pool per database.
const caches = new WeakMap<Pool, Cache>();

const versionOf = (lists: readonly { code: string; version: number }[]): string =>
  lists.map((list) => `${list.code}:${list.version}`).join(',');

async function build(db: Queryable): Promise<VersionedIndex> {
  const builder = new MatchIndexBuilder();
  const lists = await repo.loadLists(db, (entry) => builder.add(entry));
  return { index: new MatchIndex(builder), version: versionOf(lists) };
}

/**
 * The index for the lists as `db` sees them now. `db` may be the caller's transaction; the rebuild reads
 * through it (one statement, one snapshot). Concurrent callers that need the same rebuild share it.
 */
export async function currentIndex(
  pool: Pool,
  db: Queryable,
  onBuilt?: (seconds: number) => void,
): Promise<VersionedIndex> {
  let cache = caches.get(pool);
  if (!cache) {
    cache = { current: undefined, building: undefined };
    caches.set(pool, cache);
  }
  const wanted = versionOf(await repo.listVersions(db));
  if (cache.current?.version === wanted) return cache.current;
  const building = cache.building;
  if (building?.version === wanted) {
    try {
      return await building.promise;
    } catch {
      // The sharing caller's transaction failed: build through ours.
    }
  }
  const own = cache;
  // The old index is of no use once the lists have changed: let it go before the new one is built, so
  // that a process never holds two.
  own.current = undefined;
  const started = performance.now();
  const promise = build(db).then((built) => {
    onBuilt?.((performance.now() - started) / 1000);
    return built;
  });
  own.building = { version: wanted, promise };
  try {
    const built = await promise;
    // Builds that overlap may finish out of order; a stale one is replaced at the next screening.
    own.current = built;
    return built;
  } finally {
    if (own.building?.promise === promise) own.building = undefined;
  }
}

/** Drops the cached index of `pool` (tests that change lists behind the service's back). */
export function forgetIndex(pool: Pool): void {
  caches.delete(pool);
}
