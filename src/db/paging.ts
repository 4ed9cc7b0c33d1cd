// One search page and the exact total of its matches in one statement (D4): one round trip and one
// PostgreSQL backend per search, instead of two queries (on two connections, or one after the other).
// On a machine where the API, PostgreSQL and the clients share the cores, the second query's parse, plan,
// wake-ups and protocol messages are CPU that every other request waits for.
import type { Queryable } from './pool.ts';

/**
 * Search statements are named, so that each connection parses and plans a shape once (prepared
 * statement) instead of on every request: an events search by status spent about a sixth of its
 * PostgreSQL time there (pgbench on the api benchmark's 1,000,000 events, issue 6). Names are given to
 * the first MAX_NAMED_SHAPES texts this process runs, which covers the shapes clients use (the text
 * depends on which filters are present and the sort, not on the values); rarer shapes run unnamed,
 * so the statements kept per connection stay bounded.
 */
const MAX_NAMED_SHAPES = 100;
const shapeNames = new Map<string, string>();

function shapeName(text: string): string | undefined {
  let name = shapeNames.get(text);
  if (name === undefined && shapeNames.size < MAX_NAMED_SHAPES) {
    name = `search.page_${shapeNames.size + 1}`;
    shapeNames.set(text, name);
  }
  return name;
}

export interface PageQuery {
  /**
   * Columns of the page rows, named (`id, public_id, ...`: the statement is prepared, see shapeName);
   * every row has an `id`.
   */
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
  if (query.columns.includes('*'))
    throw new Error('pageWithTotal: name the columns (the statement is prepared)');
  const outerOrder = query.orderBy
    .split(',')
    .map((part) => `page.${part.trim()}`)
    .join(', ');
  const text = `WITH page AS (
       SELECT ${query.columns} FROM ${query.from} WHERE ${query.condition}
       ORDER BY ${query.orderBy} LIMIT ${query.limit} OFFSET ${query.offset}
     )
     SELECT counted.total, page.*
     FROM (SELECT count(*) AS total FROM ${query.from} WHERE ${query.condition}) AS counted
     LEFT JOIN page ON true
     ORDER BY ${outerOrder}`;
  const name = shapeName(text);
  const result = await db.query<Row & { total: number }>(
    name === undefined ? { text, values: query.values } : { name, text, values: query.values },
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
