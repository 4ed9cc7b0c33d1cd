// The SQL of the compliance officer's queue on 30,000 screenings: the pending ones, oldest first, read from
// the partial index sanctions_screenings_pending (which holds only the queue) in its order, never by reading
// the whole table; one organisation's queue likewise.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pendingScreenings } from '../../src/sanctions/repository.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { planNodes, recordingQueryable } from '../helpers/statements.ts';

describe('the SQL of the pending screenings', () => {
  let db: TestDatabase;
  const organisations = ['6f1c0b0f-6a3e-4a53-9d4e-2f7c8a1b9c10', '7a2d1c1f-6a3e-4a53-9d4e-2f7c8a1b9c11'];

  before(async () => {
    db = await createTestDatabase();
    await db.pool.query(
      "INSERT INTO organisations (id, name) SELECT id, 'Org ' || id FROM unnest($1::uuid[]) AS id",
      [organisations],
    );
    // 30,000 screenings of two organisations (alternating in blocks of 500), of which every 500th (60) waits
    // for review.
    await db.pool.query(
      `INSERT INTO sanctions_screenings
         (id, organisation_id, entity_type, name, match_status, hits, threshold, lists_version, created_at)
       SELECT 'scr_' || lpad(g::text, 26, '0'), ($1::uuid[])[1 + (g / 500) % 2], 'individual', 'Name ' || g,
              CASE WHEN g % 500 = 0 THEN 'potential_match'
                   WHEN g % 7 = 0 THEN 'cleared' ELSE 'no_match' END,
              '[]', 0.85, 'sandbox:1', now() - (30000 - g) * interval '1 second'
       FROM generate_series(1, 30000) AS g`,
      [organisations],
    );
    await db.pool.query('VACUUM (ANALYZE) sanctions_screenings');
  });
  after(() => db.drop());

  it('reads the queue in order from the partial index, without a sort or a scan of the table', async () => {
    const { db: recorder, statements } = recordingQueryable(db.pool);
    const rows = await pendingScreenings(recorder, 500);
    assert.deepEqual(
      rows.map((row) => row.id),
      Array.from({ length: 60 }, (_, i) => `scr_${String((i + 1) * 500).padStart(26, '0')}`),
    );
    assert.equal(statements.length, 1);
    const nodes = await planNodes(db.pool, statements[0]!);
    assert.deepEqual(nodes, ['Limit', 'Index Scan sanctions_screenings_pending on sanctions_screenings']);
  });

  it("reads one organisation's queue without a scan of the table", async () => {
    const { db: recorder, statements } = recordingQueryable(db.pool);
    const rows = await pendingScreenings(recorder, 10, organisations[1]);
    assert.deepEqual(
      rows.map((row) => row.id),
      Array.from({ length: 10 }, (_, i) => `scr_${String((2 * i + 1) * 500).padStart(26, '0')}`),
    );
    const nodes = await planNodes(db.pool, statements[0]!);
    assert.ok(!nodes.some((node) => node.startsWith('Seq Scan')), nodes.join('\n'));
  });
});
