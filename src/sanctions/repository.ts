// SQL of sanctions screening (D18): lists and their entries, screenings.

import pg from 'pg';
import { pageWithTotal } from '../db/paging.ts';
import { type Queryable, unboundedStatements } from '../db/pool.ts';
import { prepared } from '../db/prepared.ts';
import type { ListEntry } from './formats/types.ts';
import type { HitView, MatchStatus, ScreeningSortKey } from './schemas.ts';

export interface ListRow {
  code: string;
  name: string;
  format: string;
  version: number;
  entries: number;
  aliases: number;
  imported_at: Date;
  created_at: Date;
  updated_at: Date;
}

const LIST_COLUMNS = 'code, name, format, version, entries, aliases, imported_at, created_at, updated_at';

// Named: every screening reads it (one cheap statement), so each connection plans it once.
const LIST_VERSIONS = {
  name: 'sanctions.list-versions',
  text: 'SELECT code, version FROM sanctions_lists ORDER BY code',
};

/** Each list's version, by code: what the screenings compare their match index with. */
export async function listVersions(db: Queryable): Promise<{ code: string; version: number }[]> {
  return (await db.query<{ code: string; version: number }>(LIST_VERSIONS)).rows;
}

export async function listLists(db: Queryable): Promise<ListRow[]> {
  return (await db.query<ListRow>(`SELECT ${LIST_COLUMNS} FROM sanctions_lists ORDER BY code`)).rows;
}

/**
 * Hands every entry of every list to `visit` as its row arrives, in one statement (one snapshot: the
 * versions belong to the entries read), and returns each list's version. Rows are not collected: the
 * caller keeps what it needs of each entry (the match index keeps a fraction), so a list's rows never sit
 * in memory all at once. Each entry comes as one small JSON text, which parses faster than PostgreSQL
 * arrays.
 */
export async function loadLists(
  db: Queryable,
  visit: (entry: ListEntry & { list: string }) => void,
): Promise<{ code: string; version: number }[]> {
  const client = db instanceof pg.Pool ? await db.connect() : db;
  let queryError: Error | undefined;
  try {
    const lists: { code: string; version: number }[] = [];
    const config: pg.QueryArrayConfig = {
      text: `SELECT l.code, l.version,
                    CASE WHEN e.entry_id IS NULL THEN NULL ELSE
                      json_build_array(e.entry_id, e.entity_type, e.name, e.aliases, e.programs, e.countries,
                                       e.birth_dates)::text END AS entry
             FROM sanctions_lists l LEFT JOIN sanctions_entries e ON e.list_code = l.code
             ORDER BY l.code, e.entry_id`,
      rowMode: 'array',
    };
    const query = new pg.Query(config);
    let failure: unknown;
    // With a row listener and no callback, pg hands each row over without keeping it.
    query.on('row', (row: [string, number, string | null]) => {
      if (failure !== undefined) return;
      const [code, version, entry] = row;
      if (lists.at(-1)?.code !== code) lists.push({ code, version });
      if (entry === null) return;
      try {
        const [entryId, entityType, name, aliases, programs, countries, birthDates] = JSON.parse(entry) as [
          string,
          ListEntry['entityType'],
          string,
          string[],
          string[],
          string[],
          string[],
        ];
        visit({ list: code, entryId, entityType, name, aliases, programs, countries, birthDates });
      } catch (error) {
        // Thrown here, it would escape into pg's protocol handling: kept for the caller instead.
        failure = error;
      }
    });
    await new Promise<void>((resolve, reject) => {
      query.once('end', () => resolve());
      query.once('error', (error: Error) => {
        queryError = error;
        reject(error);
      });
      // One statement reads every entry of every list: it may rightly take longer than the bound.
      unboundedStatements.run(true, () => client.query(query));
    });
    if (failure !== undefined) throw failure;
    return lists;
  } finally {
    // A connection whose statement failed is discarded rather than handed to the next caller.
    if (client !== db) (client as pg.PoolClient).release(queryError);
  }
}

/**
 * Creates the list at version 1 or takes the next version of an existing one, and returns it; the row
 * stays locked until the transaction ends, so imports of one list queue one behind the other. Without a
 * `name` an existing list keeps its own, and a new one is named `defaultName`.
 */
export async function upsertListVersion(
  db: Queryable,
  list: {
    code: string;
    name: string | undefined;
    defaultName: string;
    format: string;
    entries: number;
    aliases: number;
  },
): Promise<ListRow> {
  const result = await db.query<ListRow>(
    `INSERT INTO sanctions_lists (code, name, format, version, entries, aliases, imported_at)
     VALUES ($1, COALESCE($2, $3), $4, 1, $5, $6, now())
     ON CONFLICT (code) DO UPDATE SET
       name = COALESCE($2, sanctions_lists.name), format = EXCLUDED.format,
       version = sanctions_lists.version + 1, entries = EXCLUDED.entries, aliases = EXCLUDED.aliases,
       imported_at = now(), updated_at = now()
     RETURNING ${LIST_COLUMNS}`,
    [list.code, list.name ?? null, list.defaultName, list.format, list.entries, list.aliases],
  );
  return result.rows[0]!;
}

/** Creates the list at version 1 unless it exists; undefined when it did. */
export async function insertListIfAbsent(
  db: Queryable,
  list: { code: string; name: string; format: string; entries: number; aliases: number },
): Promise<ListRow | undefined> {
  const result = await db.query<ListRow>(
    `INSERT INTO sanctions_lists (code, name, format, version, entries, aliases, imported_at)
     VALUES ($1, $2, $3, 1, $4, $5, now())
     ON CONFLICT (code) DO NOTHING
     RETURNING ${LIST_COLUMNS}`,
    [list.code, list.name, list.format, list.entries, list.aliases],
  );
  return result.rows[0];
}

export async function deleteEntries(db: Queryable, code: string): Promise<void> {
  await db.query('DELETE FROM sanctions_entries WHERE list_code = $1', [code]);
}

/** The JSON keys of ListEntry, which jsonb_to_recordset reads as the columns of the same names. */
const ENTRY_COLUMNS = ['entryId', 'entityType', 'name', 'aliases', 'programs', 'countries', 'birthDates'];

/**
 * Rows per INSERT: about 100 KiB of JSON per statement, below V8's large-object size, so that each batch's
 * text and buffers die young instead of piling up until the next full collection.
 */
const INSERT_BATCH = 500;

export async function insertEntries(
  db: Queryable,
  code: string,
  entries: readonly ListEntry[],
): Promise<void> {
  for (let start = 0; start < entries.length; start += INSERT_BATCH) {
    const batch = entries.slice(start, start + INSERT_BATCH);
    await db.query(
      `INSERT INTO sanctions_entries
         (list_code, entry_id, entity_type, name, aliases, programs, countries, birth_dates)
       SELECT $1, x."entryId", x."entityType", x.name, x.aliases, x.programs, x.countries, x."birthDates"
       FROM jsonb_to_recordset($2::jsonb) AS x("entryId" text, "entityType" text, name text, aliases text[],
                                              programs text[], countries text[], "birthDates" text[])`,
      [code, JSON.stringify(batch, ENTRY_COLUMNS)],
    );
  }
}

export interface ScreeningRow {
  id: string;
  organisation_id: string;
  entity_type: 'individual' | 'organisation';
  name: string;
  /** `YYYY-MM-DD` (read as text: a date has no time zone). */
  date_of_birth: string | null;
  country: string | null;
  match_status: MatchStatus;
  hits: HitView[];
  /** numeric(3,2) as text, e.g. `0.85`. */
  threshold: string;
  lists_version: string;
  source_object_type: string | null;
  source_object_id: string | null;
  external_id: string | null;
  reviewed_at: Date | null;
  review_note: string | null;
  created_at: Date;
  updated_at: Date;
}

const SCREENING_COLUMNS =
  'id, organisation_id, entity_type, name, date_of_birth::text AS date_of_birth, country, match_status, ' +
  'hits, threshold::text AS threshold, lists_version, source_object_type, source_object_id, external_id, ' +
  'reviewed_at, review_note, created_at, updated_at';

export const EXTERNAL_ID_INDEX = 'sanctions_screenings_external_id_uniq';

export async function insertScreening(
  db: Queryable,
  row: Omit<ScreeningRow, 'reviewed_at' | 'review_note' | 'created_at' | 'updated_at'>,
): Promise<ScreeningRow> {
  const result = await db.query<ScreeningRow>(
    prepared(
      `INSERT INTO sanctions_screenings
       (id, organisation_id, entity_type, name, date_of_birth, country, match_status, hits, threshold,
        lists_version, source_object_type, source_object_id, external_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
     RETURNING ${SCREENING_COLUMNS}`,
      [
        row.id,
        row.organisation_id,
        row.entity_type,
        row.name,
        row.date_of_birth,
        row.country,
        row.match_status,
        JSON.stringify(row.hits),
        row.threshold,
        row.lists_version,
        row.source_object_type,
        row.source_object_id,
        row.external_id,
      ],
    ),
  );
  return result.rows[0]!;
}

export async function findByExternalId(
  db: Queryable,
  organisationId: string,
  externalId: string,
): Promise<{ id: string } | undefined> {
  const result = await db.query<{ id: string }>(
    'SELECT id FROM sanctions_screenings WHERE organisation_id = $1 AND external_id = $2',
    [organisationId, externalId],
  );
  return result.rows[0];
}

const FIND_SCREENING = {
  name: 'sanctions.find-screening',
  text: `SELECT ${SCREENING_COLUMNS} FROM sanctions_screenings WHERE id = $1 AND organisation_id = $2`,
};

export async function findScreening(
  db: Queryable,
  organisationId: string,
  id: string,
): Promise<ScreeningRow | undefined> {
  return (await db.query<ScreeningRow>({ ...FIND_SCREENING, values: [id, organisationId] })).rows[0];
}

/** Locks the screening for its review; without an organisation (the operator) any organisation's. */
export async function findScreeningForUpdate(
  db: Queryable,
  id: string,
  organisationId?: string,
): Promise<ScreeningRow | undefined> {
  const result = await db.query<ScreeningRow>(
    `SELECT ${SCREENING_COLUMNS} FROM sanctions_screenings
     WHERE id = $1 AND ($2::uuid IS NULL OR organisation_id = $2) FOR NO KEY UPDATE`,
    [id, organisationId ?? null],
  );
  return result.rows[0];
}

export async function recordReview(
  db: Queryable,
  id: string,
  review: { matchStatus: MatchStatus; note: string },
): Promise<ScreeningRow> {
  const result = await db.query<ScreeningRow>(
    `UPDATE sanctions_screenings
     SET match_status = $2, review_note = $3, reviewed_at = now(), updated_at = now()
     WHERE id = $1 RETURNING ${SCREENING_COLUMNS}`,
    [id, review.matchStatus, review.note],
  );
  return result.rows[0]!;
}

/**
 * Screenings waiting for the operator's review (potential_match), of every organisation or of one, oldest
 * first; the partial index sanctions_screenings_pending holds exactly these, in this order.
 */
export async function pendingScreenings(
  db: Queryable,
  limit: number,
  organisationId?: string,
): Promise<ScreeningRow[]> {
  const pending = `SELECT ${SCREENING_COLUMNS} FROM sanctions_screenings WHERE match_status = 'potential_match'`;
  const result = await db.query<ScreeningRow>(
    organisationId === undefined
      ? prepared(`${pending} ORDER BY created_at, id LIMIT $1`, [limit])
      : prepared(`${pending} AND organisation_id = $2 ORDER BY created_at, id LIMIT $1`, [
          limit,
          organisationId,
        ]),
  );
  return result.rows;
}

/** How many screenings wait for review, and for how long the oldest has (from sanctions_screenings_pending). */
export async function reviewBacklog(db: Queryable): Promise<{ pending: number; oldestSeconds: number }> {
  const result = await db.query<{ pending: number; oldestSeconds: number }>(
    prepared(
      `SELECT count(*)::int AS pending,
              coalesce(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS "oldestSeconds"
       FROM sanctions_screenings WHERE match_status = 'potential_match'`,
    ),
  );
  return result.rows[0]!;
}

export interface ScreeningSearch {
  organisationId: string;
  matchStatuses?: string[];
  entityTypes?: string[];
  sourceObjectTypes?: string[];
  sourceObjectIds?: string[];
  externalIds?: string[];
  search?: string;
  sortBy: ScreeningSortKey;
  sortDirection: 'asc' | 'desc';
  limit: number;
  offset: number;
}

export async function searchScreenings(
  db: Queryable,
  query: ScreeningSearch,
): Promise<{ rows: ScreeningRow[]; total: number }> {
  const where = ['organisation_id = $1'];
  const values: unknown[] = [query.organisationId];
  const add = (condition: (placeholder: string) => string, value: unknown) => {
    values.push(value);
    where.push(condition(`$${values.length}`));
  };
  if (query.matchStatuses) add((p) => `match_status = ANY(${p}::text[])`, query.matchStatuses);
  if (query.entityTypes) add((p) => `entity_type = ANY(${p}::text[])`, query.entityTypes);
  if (query.sourceObjectTypes) add((p) => `source_object_type = ANY(${p}::text[])`, query.sourceObjectTypes);
  if (query.sourceObjectIds) add((p) => `source_object_id = ANY(${p}::text[])`, query.sourceObjectIds);
  if (query.externalIds) add((p) => `external_id = ANY(${p}::text[])`, query.externalIds);
  if (query.search !== undefined) add((p) => `strpos(lower(name), lower(${p})) > 0`, query.search);
  const direction = query.sortDirection === 'asc' ? 'ASC' : 'DESC';
  values.push(query.limit, query.offset);
  return pageWithTotal<ScreeningRow>(db, {
    columns: SCREENING_COLUMNS,
    from: 'sanctions_screenings',
    condition: where.join(' AND '),
    orderBy: query.sortBy === 'id' ? `id ${direction}` : `${query.sortBy} ${direction}, id ${direction}`,
    limit: `$${values.length - 1}`,
    offset: `$${values.length}`,
    values,
  });
}
