// Identifiers (D3): ULID-based public ids drawn from the pooled random source.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeTime } from 'ulid';
import { newDeliveryHeaderId, newErrorId, newEventPublicId, newPublicId } from '../../src/platform/ids.ts';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

describe('identifiers (D3)', () => {
  it('should make evt_, dlv_ and err_ ids of a ULID with the current time', () => {
    const before = Date.now();
    const ids = [newEventPublicId(), newDeliveryHeaderId(), newErrorId()];
    const after = Date.now();
    assert.deepEqual(
      ids.map((id) => id.slice(0, 4)),
      ['evt_', 'dlv_', 'err_'],
    );
    for (const id of ids) {
      assert.match(id, /^[a-z]{3}_[0-9A-HJKMNP-TV-Z]{26}$/);
      const time = decodeTime(id.slice(4));
      assert.ok(time >= before && time <= after, `${id} carries the time it was made`);
    }
  });

  it('should never repeat, across refills of the random pool, and use every character in the random part', () => {
    const ids = Array.from({ length: 20_000 }, () => newDeliveryHeaderId().slice(4));
    assert.equal(new Set(ids).size, ids.length);
    const seen = new Set(ids.flatMap((id) => [...id.slice(10)]));
    assert.deepEqual([...seen].sort().join(''), CROCKFORD);
  });
});

describe('resource ids (D14)', () => {
  it('increase within one millisecond, so that sorting by id follows creation', () => {
    const ids = Array.from({ length: 2_000 }, () => newPublicId('btx'));
    assert.deepEqual([...ids].sort(), ids);
    assert.equal(new Set(ids).size, ids.length);
  });
});
