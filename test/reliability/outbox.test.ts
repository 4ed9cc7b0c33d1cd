// No lost events, no phantom deliveries (issue 7; D2 transactional outbox, D10): publishing records the
// event and its deliveries in the caller's transaction, so they commit together or not at all, whatever
// happens to the transaction: a rollback, a connection cut before COMMIT, hundreds of concurrent
// publishers. A worker only ever sends what was committed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import type { PoolClient } from '../../src/db/pool.ts';
import { withTransaction } from '../../src/db/pool.ts';
import { publishEvent } from '../../src/webhooks/publish.ts';
import {
  createOrganisation,
  createSubscription,
  type DeliveryTestContext,
  deliveryContext,
  EVENT_TYPE,
  startTestWorker,
} from '../delivery/fixtures.ts';
import { eventually } from '../helpers/delivery-ledger.ts';
import { answer, type HttpsReceiver, startHttpsReceiver } from '../helpers/https-receiver.ts';

class Rollback extends Error {}

describe('transactional outbox (D2, D10)', () => {
  let ctx: DeliveryTestContext;
  let receiver: HttpsReceiver;
  before(async () => {
    ctx = await deliveryContext({ WEBHOOK_TIMEOUT_MS: '5000', WEBHOOK_LEASE_MS: '10000' });
    receiver = await startHttpsReceiver(answer(204));
  });
  after(async () => {
    await receiver.close();
    await ctx.close();
  });

  /** Events, deliveries, and events without the one delivery per subscription they should have. */
  async function books(organisationId: string, subscriptions: number) {
    const result = await ctx.deps.pool.query<{ events: number; deliveries: number; incomplete: number }>(
      `SELECT (SELECT count(*)::int FROM webhook_events WHERE organisation_id = $1) AS events,
              (SELECT count(*)::int FROM webhook_deliveries WHERE organisation_id = $1) AS deliveries,
              (SELECT count(*)::int FROM webhook_events e WHERE e.organisation_id = $1
                 AND (SELECT count(DISTINCT d.subscription_id) FROM webhook_deliveries d WHERE d.event_id = e.id) <> $2)
                AS incomplete`,
      [organisationId, subscriptions],
    );
    return result.rows[0]!;
  }

  it('200 concurrent publishers, every other one rolled back: exactly the committed events exist, each with all its deliveries, and only they are sent', async () => {
    const organisationId = await createOrganisation(ctx.deps.pool);
    for (let i = 0; i < 3; i++)
      await createSubscription(ctx.deps, { organisationId, endpointUrl: `${receiver.origin}/o${i}` });
    const worker = startTestWorker(ctx.deps);
    try {
      const outcomes = await Promise.allSettled(
        Array.from({ length: 200 }, (_, n) =>
          withTransaction(ctx.deps.pool, async (tx) => {
            const result = await publishEvent(tx, ctx.deps.secretBox, {
              organisationId,
              eventTypeCode: EVENT_TYPE,
              data: { n },
            });
            assert.equal(result.outcome, 'published');
            // The caller's later work fails: the event must go with it.
            if (n % 2 === 1) throw new Rollback(`publisher ${n} rolls back`);
            return result.event.public_id;
          }),
        ),
      );
      const committed = outcomes.flatMap((outcome) =>
        outcome.status === 'fulfilled' ? [outcome.value] : [],
      );
      assert.equal(committed.length, 100);
      assert.ok(
        outcomes.every((outcome) => outcome.status === 'fulfilled' || outcome.reason instanceof Rollback),
      );
      assert.deepEqual(await books(organisationId, 3), { events: 100, deliveries: 300, incomplete: 0 });

      await eventually(
        async () => receiver.requests.filter((r) => r.path.startsWith('/o')).length >= 300,
        '300 requests',
        120_000,
        100,
      );
      await eventually(
        async () => {
          const pending = await ctx.deps.pool.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM webhook_deliveries WHERE organisation_id = $1 AND state <> 'succeeded'",
            [organisationId],
          );
          return pending.rows[0]!.n === 0;
        },
        'every delivery succeeded',
        60_000,
        100,
      );
      const sent = new Set(
        receiver.requests.filter((r) => r.path.startsWith('/o')).map((r) => String(r.headers['webhook-id'])),
      );
      assert.deepEqual([...sent].sort(), [...committed].sort(), 'exactly the committed events were sent');
    } finally {
      await worker.stop();
    }
  });

  it('a publishing transaction whose connection is cut before COMMIT leaves nothing behind', async () => {
    const organisationId = await createOrganisation(ctx.deps.pool);
    for (let i = 0; i < 2; i++)
      await createSubscription(ctx.deps, { organisationId, endpointUrl: `${receiver.origin}/cut${i}` });
    const client = new pg.Client({ connectionString: ctx.db.url });
    const lost = new Promise<Error>((resolve) => client.on('error', resolve));
    await client.connect();
    const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    await client.query('BEGIN');
    for (let n = 0; n < 5; n++) {
      const result = await publishEvent(client as unknown as PoolClient, ctx.deps.secretBox, {
        organisationId,
        eventTypeCode: EVENT_TYPE,
        data: { n },
      });
      assert.equal(result.outcome, 'published');
    }
    // The process holding the transaction dies (its connection is terminated) before COMMIT.
    await ctx.deps.pool.query('SELECT pg_terminate_backend($1)', [pid]);
    assert.match(String(await lost), /terminat/);
    await client.end().catch(() => {});
    assert.deepEqual(await books(organisationId, 2), { events: 0, deliveries: 0, incomplete: 0 });
  });

  it('an event is never recorded without its deliveries, nor a delivery without its event', async () => {
    // Storage-level guarantee behind the outbox: the foreign key, and no event of any test in this
    // database lacks a delivery to each subscription that was active and matching when it was published.
    const orphans = await ctx.deps.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_deliveries d
       WHERE NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.id = d.event_id)`,
    );
    assert.equal(orphans.rows[0]!.n, 0);
    const bare = await ctx.deps.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_events e
       WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)`,
    );
    assert.equal(bare.rows[0]!.n, 0);
    await assert.rejects(
      ctx.deps.pool.query(
        `INSERT INTO webhook_deliveries (event_id, subscription_id, organisation_id)
         SELECT 999999999, id, organisation_id FROM webhook_subscriptions LIMIT 1`,
      ),
      /foreign key/,
    );
  });
});
