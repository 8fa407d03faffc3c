import { injectable } from "tsyringe";

/** The blocking tools whose waits an agent can be stuck in. */
export type LiveWaitKind = "delegate_task" | "t3_thread_wait";

/** One blocking wait that is running right now. */
export interface LiveWait {
  readonly kind: LiveWaitKind;
  /** The thread whose agent is blocked in the wait; null for a caller outside a thread. */
  readonly waiterThreadId: string | null;
  /** What it waits for: a task id (`delegate_task`) or a run id (`t3_thread_wait`). */
  readonly subjectId: string;
}

/**
 * The blocking waits open right now (a `delegate_task` wait or a `t3_thread_wait`), so a
 * thread shell can say whether its agent is blocked in one (`blockedOnThreadWait`). In memory
 * on purpose: a wait lives as long as its tool call, and no call survives a restart.
 */
@injectable()
export class LiveWaits {
  private readonly waits = new Set<LiveWait>();

  /** Registers a wait; call the returned function when it ends (calling it twice is harmless). */
  begin(wait: LiveWait): () => void {
    const entry: LiveWait = { ...wait };
    this.waits.add(entry);
    return () => {
      this.waits.delete(entry);
    };
  }

  /** True while someone is blocked in a `kind` wait on `subjectId` (a task, a run). */
  isWaitingOn(kind: LiveWaitKind, subjectId: string): boolean {
    for (const wait of this.waits) if (wait.kind === kind && wait.subjectId === subjectId) return true;
    return false;
  }

  /** True while the thread's agent is blocked in a wait. */
  isThreadBlocked(threadId: string): boolean {
    for (const wait of this.waits) if (wait.waiterThreadId === threadId) return true;
    return false;
  }
}
