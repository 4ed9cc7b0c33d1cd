// The SQL of the branch search on a directory of 30,000 branches: one statement per search, the exact total,
// free text answered through the trigram index of search_text and a code through its btree index, never by
// reading the whole table; and the free-text match is the substring of name, city or code it promises.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type DirectorySearch, searchBranches } from '../../src/banks/repository.ts';
import type { BranchFilters } from '../../src/banks/schemas.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { planNodes, recordingQueryable } from '../helpers/statements.ts';

const BRANCHES = 30_000;
const CITIES = [
  'Mumbai',
  'Pune',
  'Chennai',
  'Kolkata',
  'Delhi',
  'Jaipur',
  'Nagpur',
  'Indore',
  'Surat',
  'Patna',
];

describe('branch search SQL', () => {
  let db: TestDatabase;

  before(async () => {
    db = await createTestDatabase();
    await db.pool.query(
      `INSERT INTO banks (id, name, country, national_code_type, national_code)
       SELECT 'bnk_' || lpad(g::text, 26, '0'), 'Bank ' || g, 'IN', 'ifsc', 'B' || chr(65 + g / 26) || chr(65 + g % 26) || 'X'
       FROM generate_series(0, 99) AS g`,
    );
    // Branch g: bank g % 100, city CITIES[g % 10], name 'Locality <g> Road', IFSC <bank code>0<g padded>.
    await db.pool.query(
      `INSERT INTO bank_branches (id, bank_id, name, country, city, code_type, code)
       SELECT 'brn_' || lpad(g::text, 26, '0'), 'bnk_' || lpad((g % 100)::text, 26, '0'),
              'Locality ' || g || ' Road', 'IN', ($2::text[])[1 + g % 10], 'ifsc',
              'B' || chr(65 + (g % 100) / 26) || chr(65 + (g % 100) % 26) || 'X0' || lpad(g::text, 6, '0')
       FROM generate_series(1, $1::int) AS g ORDER BY g`,
      [BRANCHES, CITIES],
    );
    await db.pool.query('VACUUM (ANALYZE) banks, bank_branches');
  });
  after(() => db.drop());

  const query = (overrides: Partial<DirectorySearch<BranchFilters>>): DirectorySearch<BranchFilters> => ({
    filters: {},
    search: undefined,
    sortBy: 'id',
    sortDirection: 'desc',
    limit: 20,
    offset: 0,
    ...overrides,
  });

  async function run(search: DirectorySearch<BranchFilters>) {
    const { db: recorder, statements } = recordingQueryable(db.pool);
    const result = await searchBranches(recorder, search);
    assert.equal(statements.length, 1, 'one statement for page and total');
    return { ...result, statement: statements[0]! };
  }

  it('finds free text through the trigram index, with the exact total and the newest first', async () => {
    const { rows, total, statement } = await run(query({ search: 'PUNE' }));
    assert.equal(total, BRANCHES / 10);
    assert.equal(rows.length, 20);
    assert.equal(rows[0]!.id, `brn_${String(29_991).padStart(26, '0')}`);
    assert.ok(rows.every((row) => row.city === 'Pune'));
    const nodes = await planNodes(db.pool, statement);
    assert.ok(nodes.includes('Bitmap Index Scan bank_branches_search_trgm_idx'), nodes.join('\n'));
    assert.ok(!nodes.some((node) => node.startsWith('Seq Scan on bank_branches')), nodes.join('\n'));
  });

  it('matches name, city or code as a substring, never across two of them', async () => {
    const byName = await run(query({ search: 'lity 1234 ro' }));
    assert.deepEqual(
      byName.rows.map((row) => row.name),
      ['Locality 1234 Road'],
    );
    const byCode = await run(query({ search: 'x0012345' }));
    assert.equal(byCode.total, 1);
    assert.equal(byCode.rows[0]!.code?.endsWith('0012345'), true);
    assert.deepEqual(
      await planNodes(db.pool, byCode.statement).then((nodes) =>
        nodes.some((node) => node.includes('search_trgm')),
      ),
      true,
    );
    const across = await run(query({ search: 'road pune' }));
    assert.equal(across.total, 0);
  });

  it('finds a code through its btree index, and pages past the end with the true total', async () => {
    const code = `BAAX0${String(BRANCHES).padStart(6, '0')}`;
    const { rows, total, statement } = await run(query({ filters: { code: [code] } }));
    assert.equal(total, 1);
    assert.equal(rows[0]!.code, code);
    const nodes = await planNodes(db.pool, statement);
    assert.ok(nodes.includes('Index Scan bank_branches_code_idx on bank_branches'), nodes.join('\n'));
    const past = await run(query({ search: 'pune', offset: 4_000 }));
    assert.deepEqual(past.rows, []);
    assert.equal(past.total, BRANCHES / 10);
  });

  it('sorts the matches by the chosen key in either direction', async () => {
    const ascending = await run(query({ filters: { city: ['chennai'] }, sortDirection: 'asc', limit: 3 }));
    assert.deepEqual(
      ascending.rows.map((row) => row.name),
      ['Locality 2 Road', 'Locality 12 Road', 'Locality 22 Road'],
    );
    const byCreated = await run(query({ filters: { city: ['chennai'] }, sortBy: 'created_at', limit: 2 }));
    assert.deepEqual(
      byCreated.rows.map((row) => row.name),
      ['Locality 29992 Road', 'Locality 29982 Road'],
    );
  });
});
