// One search page and the exact total of its matches in one statement (D4): one round trip and one
// PostgreSQL backend per search, instead of two queries (on two connections, or one after the other).
// On a machine where the API, PostgreSQL and the clients share the cores, the second query's parse, plan,
// wake-ups and protocol messages are CPU that every other request waits for.
import type { Queryable } from './pool.ts';

export interface PageQuery {
  /** Columns of the page rows, as a select list (`*`, or `id, public_id, ...`); every row has an `id`. */
  columns: string;
  /** Table (or FROM item) both parts read. */
  from: string;
  /** WHERE condition of both parts, with `$n` placeholders of `values`. */
  condition: string;
  /** ORDER BY list of the page, of column names without a table qualifier (`created_at DESC, id DESC`). */
  orderBy: string;
  /** The placeholders of LIMIT and OFFSET (bound in `values`). */
  limit: string;
  offset: string;
  values: unknown[];
}

/**
 * Runs the page and `count(*)` of `condition` as one statement: the count is the outer row, the page is
 * joined to it, so a page past the end still answers the total (one row of NULL page columns, dropped here).
 * Both parts see the same snapshot.
 */
export async function pageWithTotal<Row extends { id: unknown }>(
  db: Queryable,
  query: PageQuery,
): Promise<{ rows: Row[]; total: number }> {
  const outerOrder = query.orderBy
    .split(',')
    .map((part) => `page.${part.trim()}`)
    .join(', ');
  const result = await db.query<Row & { total: number }>(
    `WITH page AS (
       SELECT ${query.columns} FROM ${query.from} WHERE ${query.condition}
       ORDER BY ${query.orderBy} LIMIT ${query.limit} OFFSET ${query.offset}
     )
     SELECT counted.total, page.*
     FROM (SELECT count(*) AS total FROM ${query.from} WHERE ${query.condition}) AS counted
     LEFT JOIN page ON true
     ORDER BY ${outerOrder}`,
    query.values,
  );
  const total = result.rows[0]?.total ?? 0;
  const rows: Row[] = [];
  for (const row of result.rows) {
    if (row.id === null) continue;
    const { total: _total, ...rest } = row;
    rows.push(rest as unknown as Row);
  }
  return { rows, total };
}
