// Waiting for something a worker does in the background, with a bound.

/** Polls until `check` returns something other than undefined/false, and returns it. */
export async function waitUntil<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  message: string,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${message}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Sends a request meant to meet locks another transaction holds, and waits until it has answered or waits
 * for a lock in the pool's database (only the test's sessions use it). Resolves with the answer once there is
 * one: the caller releases the locks first.
 */
export async function sendAgainstLocks<T>(
  pool: { query(text: string): Promise<{ rowCount: number | null }> },
  send: () => Promise<T>,
  message: string,
): Promise<() => Promise<T>> {
  let answer: T | undefined;
  void send().then((response) => {
    answer = response;
  });
  const waitingForLock = async () =>
    (
      await pool.query(
        "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      )
    ).rowCount === 1;
  await waitUntil(
    async () => answer ?? (await waitingForLock()),
    `${message}: answered or waits for a lock`,
    10_000,
  );
  return () => waitUntil(() => answer, `${message}: answered`, 10_000);
}
