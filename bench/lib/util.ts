// Small helpers shared by the scenarios: waiting with a deadline, timing, formatting.
import { setTimeout as delay } from 'node:timers/promises';

export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  delay(ms, undefined, signal ? { signal } : undefined);

/** Monotonic milliseconds (one clock for the receiver and the publisher: they share this process). */
export const now = (): number => performance.now();

/** Polls `check` until it returns true; throws naming `what` after `timeoutMs` or when `signal` aborts. */
export async function waitUntil(
  what: string,
  check: () => boolean | Promise<boolean>,
  options: { timeoutMs: number; intervalMs?: number; signal?: AbortSignal; progress?: () => string },
): Promise<void> {
  const deadline = now() + options.timeoutMs;
  const interval = options.intervalMs ?? 50;
  for (;;) {
    if (await check()) return;
    if (now() > deadline) {
      const detail = options.progress ? ` (${options.progress()})` : '';
      throw new Error(
        `timed out after ${Math.round(options.timeoutMs / 1000)} s waiting for ${what}${detail}`,
      );
    }
    options.signal?.throwIfAborted();
    await sleep(interval, options.signal);
  }
}

export const round = (value: number, digits = 1): number => {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
};

/** Rate per second of `count` things over `ms` milliseconds. */
export const perSecond = (count: number, ms: number): number => (ms > 0 ? round((count * 1000) / ms) : 0);

export function formatNumber(value: number): string {
  return Number.isInteger(value)
    ? value.toLocaleString('en-US')
    : value.toLocaleString('en-US', { maximumFractionDigits: 2 });
}
