// Group commit (the delivery worker records outcomes with it): one commit at a time, items submitted during
// a commit go together in the next one, results and errors reach the right submitter.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { groupCommit } from '../../src/platform/group-commit.ts';

/** A commit function whose calls stay open until the test releases them. */
function heldCommits<I, O>(answer: (items: I[]) => Array<O | Error>) {
  const calls: { items: I[]; release: () => void; fail: (error: Error) => void }[] = [];
  let running = 0;
  let peak = 0;
  const commit = (items: I[]) =>
    new Promise<Array<O | Error>>((resolve, reject) => {
      running++;
      peak = Math.max(peak, running);
      const settle = () => {
        running--;
      };
      calls.push({
        items,
        release: () => {
          settle();
          resolve(answer(items));
        },
        fail: (error) => {
          settle();
          reject(error);
        },
      });
    });
  return { commit, calls, peak: () => peak };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('group commit', () => {
  it('should commit a lone item at once, and batch what arrives while a commit runs', async () => {
    const held = heldCommits<number, string>((items) => items.map((item) => `done ${item}`));
    const group = groupCommit(held.commit, { maxBatch: 100 });
    const first = group.submit(1);
    await tick();
    assert.deepEqual(
      held.calls.map((call) => call.items),
      [[1]],
      'the first item does not wait',
    );
    const later = [group.submit(2), group.submit(3), group.submit(4)];
    await tick();
    assert.equal(held.calls.length, 1, 'no second commit while the first runs');
    held.calls[0]!.release();
    assert.equal(await first, 'done 1');
    await tick();
    assert.deepEqual(held.calls[1]!.items, [2, 3, 4], 'the waiting items go together, in order');
    held.calls[1]!.release();
    assert.deepEqual(await Promise.all(later), ['done 2', 'done 3', 'done 4']);
    assert.equal(held.peak(), 1, 'at most one commit at a time');
  });

  it('should cut batches at maxBatch', async () => {
    const held = heldCommits<number, number>((items) => items);
    const group = groupCommit(held.commit, { maxBatch: 2 });
    const all = [1, 2, 3, 4, 5].map((item) => group.submit(item));
    for (let i = 0; i < 3; i++) {
      await tick();
      held.calls[i]!.release();
    }
    assert.deepEqual(await Promise.all(all), [1, 2, 3, 4, 5]);
    assert.deepEqual(
      held.calls.map((call) => call.items),
      [[1], [2, 3], [4, 5]],
    );
  });

  it('should reject only the item whose result is an Error, and every item of a commit that throws', async () => {
    const held = heldCommits<number, number>((items) =>
      items.map((item) => (item === 3 ? new Error('refused 3') : item)),
    );
    const group = groupCommit(held.commit, { maxBatch: 10 });
    const first = group.submit(1);
    const [two, three, four] = [group.submit(2), group.submit(3), group.submit(4)];
    await tick();
    held.calls[0]!.fail(new Error('storage down'));
    await assert.rejects(first, /storage down/);
    await tick();
    held.calls[1]!.release();
    assert.equal(await two, 2);
    await assert.rejects(three, /refused 3/);
    assert.equal(await four, 4);
  });

  it('should not strand an item submitted as the last commit finishes', async () => {
    const group = groupCommit<number, number>(async (items) => items, { maxBatch: 10 });
    // The reaction to item 1's result runs after the drain has found its queue empty but before it has
    // marked itself finished: the second item must still be committed.
    const second = await group.submit(1).then(() => ({ result: group.submit(2) }));
    const stranded = new Promise<never>((_resolve, reject) => {
      setTimeout(() => reject(new Error('item 2 was never committed')), 2_000).unref();
    });
    assert.equal(await Promise.race([second.result, stranded]), 2);
  });
});
