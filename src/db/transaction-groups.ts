// Transactions that share a commit. Postings to one organisation balance wait for each other: each holds
// the balance's row lock until its commit has flushed the WAL to disk (1-2 ms on these machines), so one
// hot balance would commit at most one posting per flush. Work submitted under one key while a group
// transaction runs waits for it and then runs in the next one, each piece in a savepoint of its own: its
// effects are all or nothing as in a transaction of its own, a piece that fails is rolled back alone and
// rejects alone, and the lock and the flush are paid once per group. Under light load a piece runs at
// once, alone; no timer adds delay.
import { beforeCommit, isRetryable, type Pool, type PoolClient, withTransaction } from './pool.ts';

type Work = (tx: PoolClient) => Promise<unknown>;

interface Piece {
  work: Work;
  /** The submitter's commit hook (an idempotency key's mark), run inside its own savepoint. */
  hook: ((tx: PoolClient) => Promise<void>) | undefined;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export interface TransactionGroups {
  /** Runs `work` in a transaction shared with other work of the same key; resolves after the commit. */
  run<T>(key: string, work: (tx: PoolClient) => Promise<T>): Promise<T>;
}

const MAX_GROUP = 64;
const groupsByPool = new WeakMap<Pool, TransactionGroups>();

/** The groups of one pool (one per process and database). */
export function transactionGroups(pool: Pool): TransactionGroups {
  let groups = groupsByPool.get(pool);
  if (!groups) {
    groups = createGroups(pool);
    groupsByPool.set(pool, groups);
  }
  return groups;
}

function createGroups(pool: Pool): TransactionGroups {
  const queues = new Map<string, Piece[]>();

  async function runGroup(pieces: Piece[]): Promise<void> {
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      // Outside any submitter's context: each piece's hook runs in its own savepoint below.
      await beforeCommit.exit(() =>
        withTransaction(
          pool,
          async (tx) => {
            // A group holds the locks of its earlier pieces while a later one takes more, so it can meet
            // a transaction that takes them the other way (an operator's settlement: the payout, then the
            // balance) in a deadlock; PostgreSQL aborts one, and the group then runs again, every piece anew.
            outcomes.length = 0;
            for (const piece of pieces) {
              await tx.query('SAVEPOINT piece');
              try {
                const value = await piece.work(tx);
                await piece.hook?.(tx);
                await tx.query('RELEASE SAVEPOINT piece');
                outcomes.push({ ok: true, value });
              } catch (error) {
                // A deadlock's victim must give up every lock, its earlier pieces' too: the whole group.
                if (isRetryable(error)) throw error;
                await tx.query('ROLLBACK TO SAVEPOINT piece');
                outcomes.push({ ok: false, error });
              }
            }
          },
          { retries: 2 },
        ),
      );
    } catch (error) {
      for (const piece of pieces) piece.reject(error);
      return;
    }
    pieces.forEach((piece, index) => {
      const outcome = outcomes[index]!;
      if (outcome.ok) piece.resolve(outcome.value);
      else piece.reject(outcome.error);
    });
  }

  async function drain(key: string): Promise<void> {
    for (;;) {
      const queue = queues.get(key)!;
      if (queue.length === 0) {
        queues.delete(key);
        return;
      }
      await runGroup(queue.splice(0, MAX_GROUP));
    }
  }

  return {
    run<T>(key: string, work: (tx: PoolClient) => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const piece: Piece = {
          work,
          hook: beforeCommit.getStore(),
          resolve: resolve as (value: unknown) => void,
          reject,
        };
        const queue = queues.get(key);
        if (queue) {
          queue.push(piece);
          return;
        }
        queues.set(key, [piece]);
        void drain(key);
      });
    },
  };
}
