// GET /api/v1/webhooks/event-types (D8): the catalogue, sorted, without webhook.ping.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CATALOGUE } from '../../src/areas.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { client, EVENT_TYPES_URL } from './fixtures.ts';

const D8_CODES = [
  'transfer.created',
  'transfer.in_review',
  'transfer.processing',
  'transfer.completed',
  'transfer.refunding',
  'transfer.refunded',
  'transfer.rejected',
  'transfer.cancelled',
  'transfer.expired',
  'deposit.created',
  'deposit.detected',
  'deposit.received',
  'deposit.failed',
  'deposit.expired',
  'deposit.reversed',
  'payout.created',
  'payout.processing',
  'payout.completed',
  'payout.failed',
  'payout.cancelled',
  'payout.returned',
  'beneficiary.created',
  'beneficiary.updated',
  'beneficiary.in_review',
  'beneficiary.activated',
  'beneficiary.blocked',
  'beneficiary.deleted',
  'screening.completed',
  'screening.resolved',
  'deposit_address.created',
  'deposit_address.disabled',
];

describe('event types (D8)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  it('lists every D8 code with a description, sorted by code, as a plain array', async () => {
    const api = client(t, await t.tenant(['webhooks:read']));
    const response = await api.get(EVENT_TYPES_URL);
    assert.equal(response.statusCode, 200);
    const body = response.json() as { code: string; description: string }[];
    assert.ok(Array.isArray(body));
    assert.deepEqual(
      body.map((type) => type.code),
      [...D8_CODES].sort(),
    );
    for (const type of body) {
      assert.deepEqual(Object.keys(type), ['code', 'description']);
      assert.match(type.code, /^[a-z_]+\.[a-z_]+$/);
      assert.ok(type.description.length > 0 && !type.description.includes('\n'));
    }
    assert.deepEqual(body, CATALOGUE.eventTypes);
  });

  it('does not list webhook.ping, which cannot be subscribed to', async () => {
    const api = client(t, await t.tenant());
    const response = await api.get(EVENT_TYPES_URL);
    assert.doesNotMatch(response.body, /webhook\.ping/);
    assert.equal(CATALOGUE.isPublishedEventType('webhook.ping'), false);
  });
});
