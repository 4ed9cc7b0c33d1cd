// Group commit: items submitted while a commit is running wait for it and go together in the next one.
// Under light load every item is committed at once, alone (no added delay, no timer); under heavy load the
// batches grow by themselves to what arrives during one commit, so the cost of a transaction is shared by
// many items. At most one commit runs at a time.

export interface GroupCommit<I, O> {
  /** Resolves with the item's result once its batch has committed; rejects if its batch failed. */
  submit(item: I): Promise<O>;
}

/**
 * `commit` receives up to `maxBatch` items in submission order and returns one result per item, in the
 * same order; an `Error` in place of a result rejects just that item. If `commit` throws, every item of the
 * batch is rejected with that error.
 */
export function groupCommit<I, O>(
  commit: (items: I[]) => Promise<Array<O | Error>>,
  options: { maxBatch: number },
): GroupCommit<I, O> {
  interface Waiting {
    item: I;
    resolve: (result: O) => void;
    reject: (error: unknown) => void;
  }
  let queue: Waiting[] = [];
  let running: Promise<void> | undefined;

  async function drain(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.slice(0, options.maxBatch);
      queue = queue.slice(batch.length);
      try {
        const results = await commit(batch.map((waiting) => waiting.item));
        batch.forEach((waiting, index) => {
          const result = results[index];
          if (result instanceof Error) waiting.reject(result);
          else if (index >= results.length)
            waiting.reject(new Error('group commit returned too few results'));
          else waiting.resolve(result as O);
        });
      } catch (error) {
        for (const waiting of batch) waiting.reject(error);
      }
    }
  }

  /** Starts a drain unless one runs; one that ends checks again, for items submitted as it finished. */
  function kick(): void {
    if (running || queue.length === 0) return;
    running = drain().finally(() => {
      running = undefined;
      kick();
    });
  }

  return {
    submit(item) {
      const result = new Promise<O>((resolve, reject) => queue.push({ item, resolve, reject }));
      kick();
      return result;
    },
  };
}
