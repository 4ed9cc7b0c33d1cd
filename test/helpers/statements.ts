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
