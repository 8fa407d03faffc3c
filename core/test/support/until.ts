/**
 * Polls `probe` until it holds, for state no commit announces (a live wait ending, a process
 * gone): bounded in count and time, then an error naming what never happened.
 */
export async function until(
  what: string,
  probe: () => boolean,
  { attempts = 200, intervalMs = 25 } = {},
): Promise<void> {
  for (let i = 0; i < attempts; i += 1) {
    if (probe()) return;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * Resolves once every microtask queued so far, and those they queue, has run: where the
 * ingestor's group commit has landed (it flushes before the event loop reaches any I/O).
 */
export function afterMicrotasks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
