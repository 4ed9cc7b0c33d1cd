// The plans of the delivery engine's batch statements (issue 6, ROWS_BY_ID in the delivery repository):
// each one that reads the big tables for a batch of rows must reach them by index, whatever the planner
// guesses about the batch. A statement that joined a JSON batch without an id array hashed a sequential
// scan of all of webhook_deliveries for every recorded batch (5.3 ms per 64 outcomes at 20,000 rows, and
// growing with the table).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newUuid } from '../../src/platform/ids.ts';
import * as repo from '../../src/webhooks/delivery/repository.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { type RecordedStatement, recordingQueryable } from '../helpers/statements.ts';

const ROWS = 20_000;
const BATCH = 64;
const BIG_TABLES = ['webhook_events', 'webhook_deliveries', 'webhook_delivery_attempts'];

describe('delivery batch statements (issue 6)', () => {
  let db: TestDatabase;
  let organisationId: string;
  let subscriptionId: string;

  before(async () => {
    db = await createTestDatabase();
    organisationId = newUuid();
    subscriptionId = newUuid();
    await db.pool.query('INSERT INTO organisations (id, name) VALUES ($1, $2)', [organisationId, 'main']);
    await db.pool.query(
      `INSERT INTO webhook_subscriptions
         (id, organisation_id, endpoint_url, endpoint_url_normalized, status, signing_secret_sealed)
       VALUES ($1, $2, 'https://example.com/hook', 'https://example.com/hook', 'active', 'sealed')`,
      [subscriptionId, organisationId],
    );
    await db.pool.query(
      `INSERT INTO webhook_events (public_id, organisation_id, event_type_code, payload)
       SELECT 'evt_' || lpad(g::text, 26, '0'), $1, 'transfer.completed', '{}' FROM generate_series(1, $2::int) g`,
      [organisationId, ROWS],
    );
    await db.pool.query(
      `INSERT INTO webhook_deliveries (event_id, subscription_id, organisation_id)
       SELECT id, $1, $2 FROM webhook_events`,
      [subscriptionId, organisationId],
    );
    await db.pool.query(
      `INSERT INTO webhook_delivery_attempts
         (delivery_id, event_id, subscription_id, organisation_id, attempt_number, status, latency_ms,
          request_headers)
       SELECT id, event_id, subscription_id, organisation_id, 1, 'failed', 10, '{}' FROM webhook_deliveries`,
    );
    await db.pool.query('VACUUM (ANALYZE) webhook_events, webhook_deliveries, webhook_delivery_attempts');
  });
  after(() => db.drop());

  /**
   * Every scan of a big table in the statement's plan (EXPLAIN only: nothing runs): the plan for these
   * values, or (`generic`) the generic plan PostgreSQL switches to once a named statement has run a few
   * times, which knows nothing of the values.
   */
  async function bigTableScans(statement: RecordedStatement, generic: boolean): Promise<string[]> {
    const client = await db.pool.connect();
    let explained: { rows: Array<{ 'QUERY PLAN': unknown }> };
    try {
      if (generic) {
        await client.query(`PREPARE checked AS ${statement.text}`);
        await client.query('SET plan_cache_mode = force_generic_plan');
        // EXECUTE takes its arguments as literals (a utility statement has no bind parameters).
        const literal = (value: unknown) =>
          client.escapeLiteral(Array.isArray(value) ? `{${value.join(',')}}` : String(value));
        const args = statement.values.map(literal).join(', ');
        explained = await client.query(`EXPLAIN (FORMAT JSON) EXECUTE checked(${args})`);
      } else {
        explained = await client.query(`EXPLAIN (FORMAT JSON) ${statement.text}`, statement.values);
      }
    } finally {
      await client.query('DEALLOCATE ALL');
      await client.query('RESET plan_cache_mode');
      client.release();
    }
    const scans: string[] = [];
    const visit = (node: Record<string, unknown>) => {
      const relation = node['Relation Name'];
      if (typeof relation === 'string' && BIG_TABLES.includes(relation)) {
        scans.push(`${node['Node Type']} on ${relation}`);
      }
      for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) visit(child);
    };
    visit((explained.rows[0]!['QUERY PLAN'] as Array<{ Plan: Record<string, unknown> }>)[0]!.Plan);
    return scans;
  }

  it('records a batch of outcomes reaching events, deliveries and attempts by index only', async () => {
    const ids = Array.from({ length: BATCH }, (_, index) => 1_000 + index * 7);
    // Recorded, not run: only their plans are tested.
    const { db: capture, statements } = recordingQueryable();
    await repo.lockEvents(capture, ids);
    await repo.fenceDeliveries(capture, ids, 'worker-a');
    await repo.settleAttempts(
      capture,
      ids.map((id) => ({ id, status: 'failed', failure_reason: null })),
    );
    await repo.updateDeliveries(
      capture,
      ids.map((id) => ({ id, state: 'succeeded', attempts_in_round: 1, delay_ms: 0 })),
    );
    await repo.recomputeEventStatuses(capture, ids);
    // recordSubscriptionResults also filters by id array, but a table of a few subscriptions is scanned
    // whole whatever the statement: it has no plan worth testing here.
    assert.equal(statements.length, 5);
    for (const statement of statements) {
      for (const generic of [false, true]) {
        const scans = await bigTableScans(statement, generic);
        assert.ok(scans.length > 0, `the statement reads a big table: ${statement.text}`);
        assert.deepEqual(
          scans.filter((scan) => scan.startsWith('Seq Scan')),
          [],
          `${generic ? 'generic' : 'custom'} plan: ${scans.join(', ')} in: ${statement.text}`,
        );
      }
    }
  });
});
