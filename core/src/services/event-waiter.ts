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

  /**
   * Resolves with the first non-null answer of `check`, asked now and again after each relevant
   * commit, or `null` on timeout or cancellation. `check` may be asynchronous: the wait listens
   * before it asks, so a commit that lands while an answer is on its way is never missed (it
   * asks again once that answer is in; commits meanwhile make one more question, not one each).
   */
  waitFor<T>(check: () => T | null | Promise<T | null>, options: WaitOptions): Promise<T | null> {
    const once = options.timeoutMs <= 0 || options.signal?.aborted === true;
    return new Promise<T | null>((resolve, reject) => {
      let settled = false;
      let asking = false;
      let askAgain = false;
      let firstAnswer = true;
      let timer: NodeJS.Timeout | null = null;
      let heartbeat: NodeJS.Timeout | null = null;
      const finish = (value: T | null, error?: unknown) => {
        if (settled) return;
        settled = true;
        if (timer !== null) clearTimeout(timer);
        if (heartbeat !== null) clearInterval(heartbeat);
        if (!once) this.remove(watch, options.threadIds);
        options.signal?.removeEventListener("abort", onAbort);
        if (error !== undefined) reject(error);
        else resolve(value);
      };
      // The first question's failure is the caller's (a task that does not exist); a later
      // one's is taken as "not yet", as a commit may have caught the check half-way.
      const failed = (error: unknown) => {
        asking = false;
        if (firstAnswer) finish(null, error ?? new Error("the wait's check failed"));
        else answered(null);
      };
      const answered = (value: T | null) => {
        asking = false;
        if (settled) return;
        const first = firstAnswer;
        firstAnswer = false;
        if (value !== null || once) return finish(value);
        if (!first) options.onProgress?.();
        if (askAgain) {
          askAgain = false;
          ask();
        }
      };
      const ask = () => {
        if (settled) return;
        if (asking) {
          askAgain = true;
          return;
        }
        asking = true;
        let answer: T | null | Promise<T | null>;
        try {
          answer = check();
        } catch (error) {
          failed(error);
          return;
        }
        if (answer instanceof Promise) answer.then(answered, failed);
        else answered(answer);
      };
      const onAbort = () => finish(null);
      const watch: Watch = (changes) => {
        if (settled) return;
        if (options.relevant !== undefined && !changes.some(options.relevant)) return;
        ask();
      };
      if (!once) {
        this.add(watch, options.threadIds);
        options.signal?.addEventListener("abort", onAbort, { once: true });
      }
      ask();
      if (settled || once) return;
      timer = setTimeout(() => finish(null), options.timeoutMs);
      if (options.heartbeatMs !== undefined && options.onProgress !== undefined)
        heartbeat = setInterval(options.onProgress, options.heartbeatMs);
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
