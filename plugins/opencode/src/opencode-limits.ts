import type { ProviderLimit } from "@switchyard/sdk";

/**
 * OpenCode retries a model request that hit a limit on its own, forever, and reports each retry
 * as a `session.status` of type `retry` with the provider's message. An account limit (a used-up
 * free tier, quota or credits) does not clear by retrying, so it is a limit at once. A capacity
 * limit (rate limited, overloaded) often clears after a backoff, so it counts only once OpenCode
 * has retried it this many times.
 */
export const CAPACITY_RETRIES_BEFORE_LIMIT = 3;

const QUOTA = /free[\s_-]?(tier|usage)|quota|usage[\s_-]?limit|credits|billing|payment required|\b402\b/i;
const CAPACITY = /rate[\s_-]?limit|too many requests|overloaded|capacity|high concurrency|\b429\b|\b529\b/i;
/** A snake_case error code in the message (`free_tier_limit`, `rate_limit_exceeded`). */
const CODE = /\b[a-z]+(?:_[a-z]+)+\b/;

/** The limit an OpenCode retry reports, or undefined when it is an ordinary retry (or too early to tell). */
export function limitOfRetry(message: string, attempt: number): ProviderLimit | undefined {
  const kind = QUOTA.test(message)
    ? "quota"
    : CAPACITY.test(message) && attempt >= CAPACITY_RETRIES_BEFORE_LIMIT
      ? "capacity"
      : null;
  if (kind === null) return undefined;
  const code = CODE.exec(message)?.[0];
  return code === undefined ? { kind } : { kind, code };
}
