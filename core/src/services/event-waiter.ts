import { inject, injectable } from "tsyringe";
import { type Engine, EngineToken } from "../engine/ports.js";
import type { ChangedRecord, CommitNudge } from "../store/commit-feed.js";

/** How often a blocking wait reports progress while nothing happens. */
export const PROGRESS_HEARTBEAT_MS = 5_000;

/** Options for a wait. */
export interface WaitOptions {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /**
   * The threads whose changes can end the wait: only commits that changed a record on one of
   * them reach `relevant` (default: every commit). A wait that names its threads costs nothing
   * on commits elsewhere, however many other waits are open.
   */
  readonly threadIds?: readonly string[];
  /** Only re-check when a commit changed a relevant record (default: any). */
  readonly relevant?: (change: ChangedRecord) => boolean;
  /** Called on every re-check that did not finish the wait, and on each heartbeat. */
  readonly onProgress?: () => void;
  /**
   * Also call `onProgress` this often while nothing happens, so a client that resets its
   * timeout on progress keeps waiting. A timer for liveness, not a poll: it reads no state.
   */
  readonly heartbeatMs?: number;
}

/** One open wait, as the dispatcher sees it. */
type Watch = (changes: readonly ChangedRecord[]) => void;

/**
 * Waits for a condition over the projections, re-checked only when a commit changed something:
 * waits are woken by the store's nudge (which records changed, never their contents: the check
 * reads them), never by polling loops. Resolves `null` on timeout or cancellation. One engine
 * listener serves every wait, handing each commit only to the waits on its threads (and to
 * those that named none), so a commit costs the waits it concerns, not all.
 */
@injectable()
export class EventWaiter {
  private readonly byThread = new Map<string, Set<Watch>>();
  private readonly everywhere = new Set<Watch>();
  private unsubscribe: (() => void) | null = null;

  constructor(@inject(EngineToken) private readonly engine: Engine) {}

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
        this.remove(watch, options.threadIds);
        options.signal?.removeEventListener("abort", onAbort);
        resolve(value);
      };
      const onAbort = () => finish(null);
      const timer = setTimeout(() => finish(null), options.timeoutMs);
      const heartbeat =
        options.heartbeatMs !== undefined && options.onProgress !== undefined
          ? setInterval(options.onProgress, options.heartbeatMs)
          : null;
      const watch: Watch = (changes) => {
        if (settled) return;
        if (options.relevant !== undefined && !changes.some(options.relevant)) return;
        let value: T | null;
        try {
          value = check();
        } catch {
          value = null;
        }
        if (value !== null) finish(value);
        else options.onProgress?.();
      };
      this.add(watch, options.threadIds);
      options.signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  private add(watch: Watch, threadIds: readonly string[] | undefined): void {
    if (threadIds === undefined) this.everywhere.add(watch);
    else {
      for (const threadId of threadIds) {
        let watches = this.byThread.get(threadId);
        if (watches === undefined) this.byThread.set(threadId, (watches = new Set()));
        watches.add(watch);
      }
    }
    this.unsubscribe ??= this.engine.onChanges((nudge) => this.dispatch(nudge));
  }

  private remove(watch: Watch, threadIds: readonly string[] | undefined): void {
    if (threadIds === undefined) this.everywhere.delete(watch);
    else {
      for (const threadId of threadIds) {
        const watches = this.byThread.get(threadId);
        watches?.delete(watch);
        if (watches?.size === 0) this.byThread.delete(threadId);
      }
    }
    if (this.everywhere.size === 0 && this.byThread.size === 0) {
      this.unsubscribe?.();
      this.unsubscribe = null;
    }
  }

  /** Hands a commit's changes to the waits they concern, each once. */
  private dispatch({ changes }: CommitNudge): void {
    let concerned: Set<Watch> | null = this.everywhere.size > 0 ? new Set(this.everywhere) : null;
    if (this.byThread.size > 0) {
      for (const change of changes) {
        const watches = change.threadId === null ? undefined : this.byThread.get(change.threadId);
        if (watches === undefined) continue;
        concerned ??= new Set();
        for (const watch of watches) concerned.add(watch);
      }
    }
    if (concerned === null) return;
    for (const watch of concerned) watch(changes);
  }
}
