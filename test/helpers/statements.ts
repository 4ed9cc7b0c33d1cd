// A Queryable that records the statements the code under test sends (a text, or a query config with a
// name), for tests about the SQL itself: how many statements, which are prepared, what their plans are.
import type { Queryable } from '../../src/db/pool.ts';

export interface RecordedStatement {
  text: string;
  values: unknown[];
  /** Set for a named (prepared) statement. */
  name?: string | undefined;
}

/**
 * Records every statement; runs each on `target`, or, without one, runs none and answers no rows (for tests
 * that only EXPLAIN what was recorded).
 */
export function recordingQueryable(target?: Queryable): { db: Queryable; statements: RecordedStatement[] } {
  const statements: RecordedStatement[] = [];
  const db = {
    query: async (
      config: string | { text: string; values?: unknown[]; name?: string },
      values?: unknown[],
    ) => {
      if (typeof config === 'string') statements.push({ text: config, values: values ?? [] });
      else statements.push({ text: config.text, values: config.values ?? [], name: config.name });
      if (!target) return { rows: [], rowCount: 0 };
      return (target.query as (config: unknown, values?: unknown[]) => Promise<unknown>)(config, values);
    },
  } as unknown as Queryable;
  return { db, statements };
}

/** The node types of a recorded statement's plan, with their index and table names (EXPLAIN only). */
export async function planNodes(db: Queryable, statement: RecordedStatement): Promise<string[]> {
  const explained = await db.query(`EXPLAIN (FORMAT JSON) ${statement.text}`, statement.values);
  const nodes: string[] = [];
  const visit = (node: Record<string, unknown>) => {
    nodes.push(
      `${node['Node Type']}${node['Index Name'] ? ` ${node['Index Name']}` : ''}${node['Relation Name'] ? ` on ${node['Relation Name']}` : ''}`,
    );
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) visit(child);
  };
  visit((explained.rows[0]['QUERY PLAN'] as Array<{ Plan: Record<string, unknown> }>)[0]!.Plan);
  return nodes;
}
