// Writes a transaction collects and sends together just before its commit, so that several of one kind
// cost one statement: a confirm that publishes four events pays one round trip for them, not four. Only a
// transaction whose owner sends them before its COMMIT collects (withTransaction, the job runner, each
// piece of a transaction group); on any other connection a write goes at once. What a transaction
// collected is part of it: it commits with the transaction's other writes, or rolls back with them.
import type { PoolClient } from './pool.ts';

/** Writes items of one kind, in the order given, in the caller's transaction. */
export type BatchWrite<T> = (tx: PoolClient, items: T[]) => Promise<void>;

const collecting = new WeakMap<PoolClient, Map<BatchWrite<never>, unknown[]>>();

/** The transaction now open on `tx` collects until stopCollecting. */
export function startCollecting(tx: PoolClient): void {
  collecting.set(tx, new Map());
}

/** The transaction ended (committed or rolled back): nothing more is collected for it. */
export function stopCollecting(tx: PoolClient): void {
  collecting.delete(tx);
}

/**
 * Adds `item` to what `write` sends for the transaction on `tx` before its commit, or, when that
 * transaction does not collect, writes it now.
 */
export async function collectOrWrite<T>(tx: PoolClient, write: BatchWrite<T>, item: T): Promise<void> {
  const batches = collecting.get(tx);
  if (!batches) {
    await write(tx, [item]);
    return;
  }
  const items = batches.get(write as BatchWrite<never>);
  if (items) items.push(item);
  else batches.set(write as BatchWrite<never>, [item]);
}

/** Sends what the transaction collected so far, each kind in one write; it goes on collecting. */
export async function sendCollected(tx: PoolClient): Promise<void> {
  const batches = collecting.get(tx);
  if (!batches) return;
  for (const [write, items] of batches) {
    batches.delete(write);
    await (write as BatchWrite<unknown>)(tx, items);
  }
}

/** Forgets what was collected since the last send: the caller rolled it back (to a savepoint). */
export function dropCollected(tx: PoolClient): void {
  collecting.get(tx)?.clear();
}
