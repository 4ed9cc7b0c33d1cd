// A steady publisher: `rate` events per second for `seconds`, each in a transaction of its own through
// publishEvent, started on schedule whether or not earlier ones have committed (bounded in flight).
import type { Pool } from '../../src/db/pool.ts';
import { type Published, publishOne } from './seed.ts';
import { now, sleep } from './util.ts';

export interface SteadyResult {
  published: Published[];
  errors: number;
  firstError: string | undefined;
  /** From the first start to the last commit. */
  elapsedMs: number;
  /** Events started more than 10 ms behind their schedule (the publisher could not keep up). */
  late: number;
}

export async function publishSteadily(
  pool: Pool,
  encryptionKey: string,
  organisationId: string,
  options: { rate: number; seconds: number; firstIndex?: number; maxInFlight?: number; signal?: AbortSignal },
): Promise<SteadyResult> {
  const total = Math.round(options.rate * options.seconds);
  const maxInFlight = options.maxInFlight ?? 64;
  const firstIndex = options.firstIndex ?? 0;
  const published: Published[] = [];
  const inFlight = new Set<Promise<void>>();
  let errors = 0;
  let firstError: string | undefined;
  let late = 0;
  let issued = 0;
  const start = now();
  while (issued < total) {
    options.signal?.throwIfAborted();
    const due = Math.min(total, Math.floor(((now() - start) * options.rate) / 1000) + 1);
    while (issued < due) {
      if (inFlight.size >= maxInFlight) {
        await Promise.race(inFlight);
        continue;
      }
      if (now() - (start + (issued * 1000) / options.rate) > 10) late++;
      const index = firstIndex + issued++;
      const task: Promise<void> = publishOne(pool, encryptionKey, organisationId, index)
        .then(
          (result) => {
            published.push(result);
          },
          (error: unknown) => {
            errors++;
            firstError ??= (error as Error).message;
          },
        )
        .finally(() => inFlight.delete(task));
      inFlight.add(task);
    }
    const wait = start + (issued * 1000) / options.rate - now();
    if (wait > 0) await sleep(Math.max(1, Math.floor(wait)), options.signal);
  }
  await Promise.all(inFlight);
  return { published, errors, firstError, elapsedMs: now() - start, late };
}
