/**
 * The subset of WHATWG `fetch` this package uses; injectable so a host can add a proxy agent
 * or tests can count requests. Node's global `fetch` satisfies it.
 */
export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

/** Combines an optional caller signal with a timeout. */
export function withTimeout(timeoutMs: number, signal?: AbortSignal): AbortSignal {
  const timeout = AbortSignal.timeout(timeoutMs);
  return signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
}

/** True when the abort came from a timeout signal rather than the caller. */
export function isTimeoutError(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error.name === "TimeoutError" || (error.cause instanceof Error && error.cause.name === "TimeoutError"))
  );
}
