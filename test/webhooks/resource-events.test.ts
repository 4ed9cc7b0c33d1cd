// Resource events (D8, D14) a transaction publishes are recorded together before its commit
// (publishResourceEvent, insertMatchedEvents): in the order published, each with one delivery per active
// subscription that matches its type, none for a type nobody subscribes to, once per idempotency key, and
// more events than one statement takes in several.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { withTransaction } from '../../src/db/pool.ts';
import { publishResourceEvent } from '../../src/webhooks/publish.ts';
import { openPayload } from '../../src/webhooks/sealed-payload.ts';
import {
  createOrganisation,
  createSubscription,
  type DeliveryTestContext,
  deliveryContext,
} from '../delivery/fixtures.ts';

describe('resource events recorded at commit', () => {
  let ctx: DeliveryTestContext;
  before(async () => {
    ctx = await deliveryContext();
  });
  after(() => ctx.close());

  const catalogue = { isPublishedEventType: (code: string) => code.startsWith('payout.') };

  async function eventsOf(organisationId: string) {
    const result = await ctx.deps.pool.query<{
      id: number;
      event_type_code: string;
      source_object_id: string;
      payload: string;
      subscriptions: string[];
    }>(
      `SELECT e.id, e.event_type_code, e.source_object_id, e.payload,
              array(SELECT d.subscription_id::text FROM webhook_deliveries d WHERE d.event_id = e.id
                    ORDER BY d.subscription_id) AS subscriptions
       FROM webhook_events e WHERE e.organisation_id = $1 ORDER BY e.id`,
      [organisationId],
    );
    return result.rows;
  }

  it('records 19 events of one transaction in order, each with its matching subscriptions, skipping unmatched types and repeated keys', async () => {
    const organisationId = await createOrganisation(ctx.deps.pool);
    const all = await createSubscription(ctx.deps, {
      organisationId,
      endpointUrl: 'https://a.example/hook',
      eventTypeCodes: ['payout.created', 'payout.completed'],
    });
    const created = await createSubscription(ctx.deps, {
      organisationId,
      endpointUrl: 'https://b.example/hook',
      eventTypeCodes: ['payout.created'],
    });
    await createSubscription(ctx.deps, {
      organisationId,
      endpointUrl: 'https://c.example/hook',
      eventTypeCodes: ['payout.created'],
      status: 'paused',
    });
    const published: Array<{ id: string; action: string }> = [];
    for (let n = 0; n < 10; n++) published.push({ id: `pyt_${n}`, action: 'created' });
    published.push({ id: 'pyt_0', action: 'created' }); // the key pyt_0:created again
    for (let n = 0; n < 9; n++)
      published.push({ id: `pyt_${n}`, action: n % 3 === 0 ? 'failed' : 'completed' });
    await withTransaction(ctx.deps.pool, async (tx) => {
      for (const { id, action } of published) {
        await publishResourceEvent(
          tx,
          { catalogue, secretBox: ctx.deps.secretBox },
          {
            organisationId,
            sourceObjectType: 'payout',
            object: { id },
            action,
            previousStatus: null,
          },
        );
      }
      // Recorded just before the commit, not as they are published.
      assert.equal(
        (await tx.query('SELECT 1 FROM webhook_events WHERE organisation_id = $1', [organisationId]))
          .rowCount,
        0,
      );
    });
    const events = await eventsOf(organisationId);
    const expected = [
      ...Array.from({ length: 10 }, (_, n) => ({
        type: 'payout.created',
        id: `pyt_${n}`,
        subscriptions: [all.id, created.id].sort(),
      })),
      ...[1, 2, 4, 5, 7, 8].map((n) => ({
        type: 'payout.completed',
        id: `pyt_${n}`,
        subscriptions: [all.id],
      })),
    ];
    assert.deepEqual(
      events.map((event) => ({
        type: event.event_type_code,
        id: event.source_object_id,
        subscriptions: event.subscriptions,
      })),
      expected,
    );
    for (const event of events) {
      const envelope = JSON.parse(openPayload(ctx.deps.secretBox, event.payload)) as {
        type: string;
        data: { object: { id: string }; previous_status: null };
      };
      assert.equal(envelope.type, event.event_type_code);
      assert.deepEqual(envelope.data, { object: { id: event.source_object_id }, previous_status: null });
    }
  });

  it('records nothing when the transaction rolls back', async () => {
    const organisationId = await createOrganisation(ctx.deps.pool);
    await createSubscription(ctx.deps, {
      organisationId,
      endpointUrl: 'https://a.example/hook',
      eventTypeCodes: ['payout.created'],
    });
    await assert.rejects(
      withTransaction(ctx.deps.pool, async (tx) => {
        await publishResourceEvent(
          tx,
          { catalogue, secretBox: ctx.deps.secretBox },
          {
            organisationId,
            sourceObjectType: 'payout',
            object: { id: 'pyt_x' },
            action: 'created',
            previousStatus: null,
          },
        );
        throw new Error('refused');
      }),
      /refused/,
    );
    assert.deepEqual(await eventsOf(organisationId), []);
  });
});
