// Small pieces of SQL text the repositories share. Column and table names come from the code (schema-
// validated filter keys, fixed lists), never from a client's text; values are always parameters.
import type { Queryable } from './pool.ts';
import { prepared } from './prepared.ts';

/**
 * `UPDATE <table> SET <changes>, updated_at = clock_timestamp() WHERE id = $1 RETURNING <columns>`: the time
 * of the statement, not of the transaction's start, so that updated_at is never before a milestone time
 * (completed_at, received_at, ...) the same change sets.
 */
export async function updateById<Row>(
  db: Queryable,
  table: string,
  returning: string,
  id: string,
  changes: Record<string, unknown>,
): Promise<Row> {
  const names = Object.keys(changes);
  const assignments = names.map((name, index) => `${name} = $${index + 2}`);
  const result = await db.query(
    prepared(
      `UPDATE ${table} SET ${[...assignments, 'updated_at = clock_timestamp()'].join(', ')} WHERE id = $1 RETURNING ${returning}`,
      [id, ...names.map((name) => changes[name])],
    ),
  );
  return result.rows[0] as Row;
}

/** `SELECT <columns> FROM <table> WHERE id = $1 AND organisation_id = $2`: one organisation's resource. */
export async function findById<Row>(
  db: Queryable,
  table: string,
  columns: string,
  id: string,
  organisationId: string,
): Promise<Row | undefined> {
  const result = await db.query(
    prepared(`SELECT ${columns} FROM ${table} WHERE id = $1 AND organisation_id = $2`, [id, organisationId]),
  );
  return result.rows[0] as Row | undefined;
}

/**
 * The resource locked for the caller's transaction (FOR UPDATE); `organisationId` null: any organisation's
 * (operators, timers, hooks).
 */
export async function lockById<Row>(
  db: Queryable,
  table: string,
  columns: string,
  id: string,
  organisationId: string | null,
): Promise<Row | undefined> {
  const result = await db.query(
    prepared(
      `SELECT ${columns} FROM ${table} WHERE id = $1 AND ($2::uuid IS NULL OR organisation_id = $2) FOR UPDATE`,
      [id, organisationId],
    ),
  );
  return result.rows[0] as Row | undefined;
}

/** Appends `<column> = ANY($n)` for each list filter (D4: every filter value is a list). */
export function listFilters(filters: object, values: unknown[], conditions: string[]): void {
  for (const [column, list] of Object.entries(filters) as [string, string[] | undefined][]) {
    if (!list) continue;
    values.push(list);
    conditions.push(`${column} = ANY($${values.length}::text[])`);
  }
}

/** The ORDER BY of a search page sorted by id, created_at or updated_at (ties broken by id). */
export function searchOrder(sortBy: string, direction: 'asc' | 'desc'): string {
  const column = sortBy === 'created_at' || sortBy === 'updated_at' ? sortBy : 'id';
  const dir = direction === 'asc' ? 'ASC' : 'DESC';
  return column === 'id' ? `id ${dir}` : `${column} ${dir}, id ${dir}`;
}
