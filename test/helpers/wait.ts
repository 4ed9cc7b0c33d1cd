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
