import type { ThreadRow } from "../api/types.js";
import { isActive } from "./thread-tree.js";

/** A thread action's button: whether it can do anything now, and if not, why. */
export interface ActionState {
  readonly enabled: boolean;
  readonly why: string | null;
}

export type ThreadAction = "interrupt" | "stop" | "resume" | "settle" | "revive";

const yes: ActionState = { enabled: true, why: null };
const no = (why: string): ActionState => ({ enabled: false, why });

/**
 * Which of a thread's actions mean something in its state: no Stop or Interrupt on a thread
 * with nothing running, no Resume unless it was stopped, no Settle while work is under way. The
 * server decides in the end (it refuses what it must); this keeps buttons from promising what
 * they cannot do.
 */
export function threadActions(thread: ThreadRow, pendingRequests: number): Readonly<Record<ThreadAction, ActionState>> {
  const active = isActive(thread);
  const settled = (thread.settledAt ?? null) !== null;
  const stopped = thread.stopped === true;
  return {
    interrupt: active ? yes : no("No turn is under way."),
    stop:
      active || (thread.queuedRuns > 0 && !stopped)
        ? yes
        : stopped
          ? no("Stopped already: Resume starts its held runs.")
          : no("Nothing is running or queued."),
    resume: stopped ? yes : active ? no("It is running: Resume is for a stopped thread.") : no("It was not stopped."),
    settle: settled
      ? no("Settled already.")
      : active || thread.queuedRuns > 0
        ? no("Its work is not finished: stop it or wait.")
        : pendingRequests > 0
          ? no("A question or approval is waiting.")
          : yes,
    revive: settled ? yes : no("It is not settled."),
  };
}
