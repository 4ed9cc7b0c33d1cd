// Scans every text, json, array and bytea column of every table for strings that must never be stored in
// clear (issued secrets, account identifiers): the proof that something is sealed at rest wherever it goes.
import pg from 'pg';

export interface Column {
  table: string;
  column: string;
}

/** Every column of the public schema's tables that can hold text. */
export async function textColumns(db: pg.Pool): Promise<Column[]> {
  const result = await db.query<{ table_name: string; column_name: string }>(
    `SELECT c.table_name, c.column_name
     FROM information_schema.columns c
     JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
     WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
       AND c.data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY', 'bytea')
     ORDER BY 1, 2`,
  );
  return result.rows.map((row) => ({ table: row.table_name, column: row.column_name }));
}

/** `table.column: needle, ...` for each of `columns` holding any of `needles` in its text. */
export async function columnsHolding(
  db: pg.Pool,
  columns: readonly Column[],
  needles: string[],
): Promise<string[]> {
  const found: string[] = [];
  for (const { table, column } of columns) {
    const result = await db.query<{ needles: string[] }>(
      `SELECT coalesce(array_agg(DISTINCT needle.v), '{}') AS needles
       FROM ${pg.escapeIdentifier(table)} AS t, unnest($1::text[]) AS needle(v)
       WHERE strpos(t.${pg.escapeIdentifier(column)}::text, needle.v) > 0`,
      [needles],
    );
    const hits = result.rows[0]!.needles;
    if (hits.length > 0) found.push(`${table}.${column}: ${hits.join(', ')}`);
  }
  return found;
}
