// The SQL behind the reads that issue 6 measures: an events search is one statement (page and exact total),
// its total is counted from the deduplicated (organisation_id, status) index (migration 002), and the
// subscription read is prepared once per connection with a column list that a later column cannot break.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPool, type Queryable } from '../../src/db/pool.ts';
import { newUuid } from '../../src/platform/ids.ts';
import { searchAttempts } from '../../src/webhooks/attempts/repository.ts';
import { searchEvents } from '../../src/webhooks/events/repository.ts';
import { findSubscription } from '../../src/webhooks/subscriptions/repository.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { recordingQueryable } from '../helpers/statements.ts';

const EVENTS = 3_000;
// Event g is dead_letter when g % 10 = 0: 300 of them.
const DEAD = EVENTS / 10;

describe('search and read SQL (issue 6)', () => {
  let db: TestDatabase;
  let organisationId: string;
  let otherOrganisationId: string;
  let subscriptionId: string;

  before(async () => {
    db = await createTestDatabase();
    organisationId = newUuid();
    otherOrganisationId = newUuid();
    await db.pool.query('INSERT INTO organisations (id, name) VALUES ($1, $2), ($3, $4)', [
      organisationId,
      'main',
      otherOrganisationId,
      'other',
    ]);
    await db.pool.query(
      `INSERT INTO webhook_events (public_id, organisation_id, event_type_code, status, payload)
       SELECT 'evt_' || lpad(g::text, 26, '0'), CASE WHEN g % 3 = 0 THEN $2::uuid ELSE $1::uuid END,
              'transfer.completed', CASE WHEN g % 10 = 0 THEN 'dead_letter' ELSE 'delivered' END, '{}'
       FROM generate_series(1, $3::int) AS g ORDER BY g`,
      [organisationId, otherOrganisationId, EVENTS],
    );
    await db.pool.query('VACUUM (ANALYZE) webhook_events');
    subscriptionId = newUuid();
    await db.pool.query(
      `INSERT INTO webhook_subscriptions
         (id, organisation_id, endpoint_url, endpoint_url_normalized, status, signing_secret_sealed)
       VALUES ($1, $2, 'https://example.com/hook', 'https://example.com/hook', 'active', 'sealed')`,
      [subscriptionId, organisationId],
    );
  });
  after(() => db.drop());

  const expectedDead = async (): Promise<number[]> =>
    (
      await db.pool.query<{ id: number }>(
        `SELECT id FROM webhook_events WHERE organisation_id = $1 AND status = 'dead_letter' ORDER BY id DESC`,
        [organisationId],
      )
    ).rows.map((row) => row.id);

  const search = (target: Queryable, offset: number) =>
    searchEvents(target, {
      organisationId,
      filters: { status: ['dead_letter'] },
      sortBy: 'id',
      sortDirection: 'desc',
      limit: 20,
      offset,
    });

  it('answers the page and the exact total of an events search with one statement', async () => {
    const dead = await expectedDead();
    assert.ok(
      dead.length > 20 && dead.length < DEAD,
      `${dead.length} dead_letter events of the organisation`,
    );
    const { db: recorder, statements } = recordingQueryable(db.pool);
    const first = await search(recorder, 0);
    assert.equal(statements.length, 1, 'one statement for page and total');
    assert.equal(first.total, dead.length);
    assert.deepEqual(
      first.rows.map((row) => row.id),
      dead.slice(0, 20),
    );
    assert.ok(
      first.rows.every((row) => !('total' in row)),
      'page rows do not carry the total',
    );

    const last = await search(db.pool, dead.length - 3);
    assert.deepEqual(
      last.rows.map((row) => row.id),
      dead.slice(-3),
    );
    assert.equal(last.total, dead.length);

    const past = await search(db.pool, dead.length + 100);
    assert.deepEqual(past.rows, []);
    assert.equal(past.total, dead.length, 'a page past the end still has the true total');

    const none = await searchEvents(db.pool, {
      organisationId,
      filters: { status: ['partially_delivered'] },
      sortBy: 'created_at',
      sortDirection: 'asc',
      limit: 20,
      offset: 0,
    });
    assert.deepEqual(none, { rows: [], total: 0 });
  });

  it('answers a delivery-attempts search with one statement too', async () => {
    const { db: recorder, statements } = recordingQueryable(db.pool);
    const result = await searchAttempts(recorder, {
      organisationId,
      filters: { webhook_event_ids: [1, 2, 3] },
      sortBy: 'id',
      sortDirection: 'desc',
      limit: 20,
      offset: 0,
    });
    assert.deepEqual(result, { rows: [], total: 0 });
    assert.equal(statements.length, 1);
  });

  it('counts a status filter from the deduplicated (organisation_id, status) index', async () => {
    const { db: recorder, statements } = recordingQueryable(db.pool);
    await search(recorder, 0);
    const [statement] = statements;
    assert.ok(statement);
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      // Only index scans, so that the choice between the indexes is what the test sees.
      await client.query('SET LOCAL enable_seqscan = off');
      await client.query('SET LOCAL enable_bitmapscan = off');
      const explained = await client.query<{ 'QUERY PLAN': unknown }>(
        `EXPLAIN (FORMAT JSON) ${statement.text}`,
        statement.values,
      );
      await client.query('ROLLBACK');
      const plan = JSON.stringify(explained.rows[0]!['QUERY PLAN']);
      const countScan = /"Node Type":"Index Only Scan"[^{}]*?"Index Name":"([a-z_]+)"/.exec(plan);
      assert.equal(countScan?.[1], 'webhook_events_org_status_count_idx', plan);
    } finally {
      client.release();
    }
  });

  it('reads a subscription with a statement prepared once per connection', async () => {
    const pool = createPool(db.url, 1, 'search-sql-test');
    try {
      const row = await findSubscription(pool, organisationId, subscriptionId);
      assert.equal(row?.id, subscriptionId);
      assert.equal(row?.status, 'active');
      assert.equal(await findSubscription(pool, otherOrganisationId, subscriptionId), undefined);
      const prepared = await pool.query<{ name: string }>('SELECT name FROM pg_prepared_statements');
      assert.deepEqual(
        prepared.rows.map((statement) => statement.name),
        ['subscriptions.find'],
      );

      // A column added while processes hold the prepared read (a later migration) does not change what
      // it returns; with `SELECT *` PostgreSQL would refuse it ("cached plan must not change result type").
      await db.pool.query('ALTER TABLE webhook_subscriptions ADD COLUMN added_later text');
      const again = await findSubscription(pool, organisationId, subscriptionId);
      assert.equal(again?.id, subscriptionId);
      assert.ok(!('added_later' in (again ?? {})));
    } finally {
      await pool.end();
    }
  });

  it('prepares a search shape once per connection, whatever the values, and survives a column added later', async () => {
    const pool = createPool(db.url, 1, 'search-sql-test');
    const attempts = (eventIds: number[]) =>
      searchAttempts(pool, {
        organisationId,
        filters: { webhook_event_ids: eventIds },
        sortBy: 'latency_ms',
        sortDirection: 'asc',
        limit: 5,
        offset: 0,
      });
    try {
      const dead = await expectedDead();
      const first = await search(pool, 0);
      const second = await search(pool, 20);
      assert.deepEqual(
        [...first.rows, ...second.rows].map((row) => row.id),
        dead.slice(0, 40),
        'the second page, from the prepared statement, follows the first',
      );
      assert.deepEqual(await attempts([1, 2]), { rows: [], total: 0 });
      const prepared = await pool.query<{ statement: string }>(
        `SELECT statement FROM pg_prepared_statements WHERE name LIKE 'search.page_%'`,
      );
      assert.equal(prepared.rows.length, 2, 'one prepared statement per search shape');
      assert.ok(prepared.rows.some((row) => row.statement.includes('FROM webhook_events')));
      assert.ok(prepared.rows.some((row) => row.statement.includes('FROM webhook_delivery_attempts')));

      await db.pool.query('ALTER TABLE webhook_delivery_attempts ADD COLUMN added_later text');
      await db.pool.query('ALTER TABLE webhook_events ADD COLUMN added_later text');
      assert.equal((await search(pool, 0)).total, dead.length);
      assert.deepEqual(await attempts([3]), { rows: [], total: 0 });
    } finally {
      await pool.end();
    }
  });
});
