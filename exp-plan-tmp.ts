import pg from 'pg';
import { searchBranches } from './src/banks/repository.ts';
const url = process.argv[2]!;
const client = new pg.Client({ connectionString: url });
await client.connect();
const recorded: { text: string; values: unknown[] }[] = [];
const rec = { query: async (c: any, v?: unknown[]) => { recorded.push(typeof c === 'string' ? { text: c, values: v ?? [] } : c); return { rows: [] }; } } as never;
const queries: [string, Parameters<typeof searchBranches>[1]][] = [
  ['city pune', { filters: {}, search: 'Pune', sortBy: 'id', sortDirection: 'desc', limit: 20, offset: 0 }],
  ['locality', { filters: {}, search: 'Garloru', sortBy: 'id', sortDirection: 'desc', limit: 20, offset: 0 }],
  ['code part', { filters: {}, search: 'AAAB00006', sortBy: 'id', sortDirection: 'desc', limit: 20, offset: 0 }],
  ['common word', { filters: {}, search: 'market', sortBy: 'id', sortDirection: 'desc', limit: 20, offset: 0 }],
  ['by code', { filters: { code: ['AAAA0000607'] }, search: undefined, sortBy: 'id', sortDirection: 'desc', limit: 20, offset: 0 }],
  ['city filter', { filters: { city: ['pune'] }, search: undefined, sortBy: 'id', sortDirection: 'desc', limit: 20, offset: 0 }],
  ['bank filter', { filters: { bank_id: [process.argv[3]!] }, search: undefined, sortBy: 'id', sortDirection: 'desc', limit: 20, offset: 0 }],
  ['2 chars', { filters: {}, search: 'ri', sortBy: 'id', sortDirection: 'desc', limit: 20, offset: 0 }],
];
for (const [label, q] of queries) {
  recorded.length = 0;
  await searchBranches(rec, q);
  const { text, values } = recorded[0]!;
  const plan = await client.query(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, values);
  console.log(`=== ${label}`);
  console.log(plan.rows.map((r) => r['QUERY PLAN']).filter((l: string) => /Scan|Execution|Sort Method|CTE/.test(l)).join('\n'));
  // generic
  await client.query(`PREPARE p AS ${text}`);
  await client.query('SET plan_cache_mode = force_generic_plan');
  const lit = values.map((v) => client.escapeLiteral(Array.isArray(v) ? `{${v.join(',')}}` : String(v))).join(', ');
  const g = await client.query(`EXPLAIN (ANALYZE) EXECUTE p(${lit})`);
  console.log('--- generic:', g.rows.slice(-1)[0]['QUERY PLAN'], g.rows.filter((r) => /Scan/.test(r['QUERY PLAN'])).map((r) => r['QUERY PLAN'].trim().slice(0, 90)).join(' | '));
  await client.query('DEALLOCATE ALL'); await client.query('RESET plan_cache_mode');
}
await client.end();
