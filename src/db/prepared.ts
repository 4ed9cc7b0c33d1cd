// Statements each connection parses and plans once (named prepared statements). On these machines the
// API, the workers and PostgreSQL share the cores, and planning a short statement costs more than running
// it: unnamed, planning is a quarter of PostgreSQL's statement time in the transfers benchmark. Names go to the
// first MAX_NAMED_TEXTS texts this process runs through here, which covers every fixed statement of the
// hot paths (a text depends on the code, not on the values); any further text runs unnamed, so the
// statements kept per connection stay bounded. Only statements whose plan does not depend on the values
// belong here (look-ups and writes by key): PostgreSQL may switch a named statement to a generic plan.
import type pg from 'pg';

const MAX_NAMED_TEXTS = 300;
const names = new Map<string, string>();

/** The query config of `text` with `values`, named when a name is left. */
export function prepared(text: string, values: unknown[] = []): pg.QueryConfig {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_NAMED_TEXTS) {
    name = `prepared_${names.size + 1}`;
    names.set(text, name);
  }
  return name === undefined ? { text, values } : { name, text, values };
}
