import { inject, injectable } from "tsyringe";
import { TOKENS } from "../di/tokens.js";
import type { Engine } from "../engine/ports.js";
import type { StoredEvent } from "../store/records.js";

/** How often a blocking wait reports progress while nothing happens. */
export const PROGRESS_HEARTBEAT_MS = 5_000;

/** Options for a wait. */
export interface WaitOptions {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** Only re-check when a committed batch contains a relevant event (default: any). */
  readonly relevant?: (event: StoredEvent) => boolean;
  /** Called on every re-check that did not finish the wait, and on each heartbeat. */
  readonly onProgress?: () => void;
  /**
   * Also call `onProgress` this often while nothing happens, so a client that resets its
   * timeout on progress keeps waiting. A timer for liveness, not a poll: it reads no state.
   */
  readonly heartbeatMs?: number;
}

/**
 * Waits for a condition over the projections, re-checked only when events commit: waits are
 * woken by events, never by polling loops. Resolves `null` on timeout or cancellation.
 */
@injectable()
export class EventWaiter {
  constructor(@inject(TOKENS.Engine) private readonly engine: Engine) {}

  waitFor<T>(check: () => T | null, options: WaitOptions): Promise<T | null> {
    const first = check();
    if (first !== null) return Promise.resolve(first);
    if (options.timeoutMs <= 0 || options.signal?.aborted) return Promise.resolve(null);
    return new Promise<T | null>((resolve) => {
      let settled = false;
      const finish = (value: T | null) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (heartbeat !== null) clearInterval(heartbeat);
        unsubscribe();
        options.signal?.removeEventListener("abort", onAbort);
        resolve(value);
      };
      const onAbort = () => finish(null);
      const timer = setTimeout(() => finish(null), options.timeoutMs);
      const heartbeat = options.heartbeatMs !== undefined && options.onProgress !== undefined ? setInterval(options.onProgress, options.heartbeatMs) : null;
      const unsubscribe = this.engine.onEvents((events) => {
        if (options.relevant !== undefined && !events.some(options.relevant)) return;
        let value: T | null;
        try {
          value = check();
        } catch {
          value = null;
        }
        if (value !== null) finish(value);
        else options.onProgress?.();
      });
      options.signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
}
