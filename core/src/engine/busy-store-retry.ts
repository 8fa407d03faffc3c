import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../logging/logger.js";
import { isStoreBusy } from "../util/store-busy.js";

/** The first pause before a write the store refused as busy is tried again. */
export const BUSY_RETRY_FIRST_MS = 50;
/** The longest pause between two tries (each try itself waits the store's busy timeout). */
export const BUSY_RETRY_MAX_MS = 2_000;

/** The pause before try number `retry` (1, 2, …): doubling from the first, capped. */
export function busyRetryDelay(retry: number): number {
  return Math.min(BUSY_RETRY_MAX_MS, BUSY_RETRY_FIRST_MS * 2 ** Math.max(0, retry - 1));
}

/**
 * Runs a write that records what a provider already did (a turn it accepted, a request it
 * answered) until the store takes it. A store that stays locked by another connection
 * (`store_busy`) is waited out, with a warning, instead of turning into a failed turn: the work
 * happened, only its record is late. Any other error is thrown. Resolves with null when the
 * store closed meanwhile (shutdown), as nothing can be recorded then.
 */
export async function recordWhenStoreFree<T>(
  write: () => T | Promise<T>,
  isOpen: () => boolean,
  logger: Logger,
  what: string,
): Promise<T | null> {
  for (let retry = 1; ; retry += 1) {
    if (!isOpen()) return null;
    try {
      return await write();
    } catch (error) {
      if (!isStoreBusy(error)) throw error;
      if (retry === 1)
        logger.warn("the database is locked by another connection; retrying the write", {
          what,
          error: (error as Error).message,
        });
    }
    await sleep(busyRetryDelay(retry));
  }
}
