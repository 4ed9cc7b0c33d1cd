// Retry schedule (D10): attempt n of a round that fails is retried after schedule[n-1] while
// n <= max_retries; past the end of the list its last entry repeats.

/** Milliseconds to wait after failed attempt `n` (1-based, within the round). */
export function retryDelayMs(scheduleMs: readonly number[], attemptInRound: number): number {
  if (scheduleMs.length === 0) throw new Error('the retry schedule is empty');
  const index = Math.min(Math.max(attemptInRound, 1), scheduleMs.length) - 1;
  return scheduleMs[index]!;
}

/** Whether failed attempt `n` of a round gets a retry: the round has 1 + max_retries attempts. */
export function willRetry(attemptInRound: number, maxRetries: number): boolean {
  return attemptInRound <= maxRetries;
}
