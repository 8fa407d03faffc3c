import type { CapabilityName, ProviderCapabilities } from "../spec/index.js";
import { isTerminalRunStatus, type RunStatus } from "../store/records.js";

/** A run someone wants stopped, as the policy needs to see it. */
export interface StoppableRunView {
  readonly status: RunStatus;
  /**
   * Its current turn was handed to the provider (the attempt is past `pending`): from then on
   * only the provider can stop it. Before that the host ends the run itself, on any provider.
   */
  readonly reachedProvider: boolean;
}

/** What stopping one run does, and why; or why it cannot be stopped. */
export type RunStopDecision =
  | {
      readonly ok: true;
      /**
       * - `already_terminal`: nothing to do.
       * - `cancel_queued`: the run never started; it is cancelled.
       * - `end_before_provider`: its turn never reached the provider; the host ends it.
       * - `interrupt_turn`: the provider is asked to interrupt the running turn.
       */
      readonly action: "already_terminal" | "cancel_queued" | "end_before_provider" | "interrupt_turn";
      readonly reason: string;
    }
  | { readonly ok: false; readonly capability: CapabilityName; readonly reason: string };

/**
 * Whether a run can be stopped (t3_thread_interrupt, Stop, task_cancel), and how. A run whose
 * turn has not reached its provider can always be stopped; a running turn only on a provider
 * that declares `turns.interrupt`.
 */
export function decideRunStop(run: StoppableRunView, capabilities: ProviderCapabilities): RunStopDecision {
  if (isTerminalRunStatus(run.status))
    return { ok: true, action: "already_terminal", reason: "The run has already ended." };
  if (run.status === "queued")
    return { ok: true, action: "cancel_queued", reason: "The run has not started, so it is cancelled." };
  if (!run.reachedProvider)
    return {
      ok: true,
      action: "end_before_provider",
      reason: "The run's turn has not reached the provider, so the host ends it.",
    };
  if (capabilities.turns.interrupt)
    return { ok: true, action: "interrupt_turn", reason: "The provider interrupts the running turn." };
  return { ok: false, capability: "turns.interrupt", reason: "The provider cannot interrupt a running turn." };
}

/** Input to {@link decideTaskCancel}: the task's known work that has not finished. */
export interface TaskCancelQuery {
  /** The task's run that is active now, or null. */
  readonly activeRun: StoppableRunView | null;
  /** The task's runs still queued. */
  readonly queuedRuns: number;
  /** Unfinished tasks the task's child thread delegated (stopped first, depth first). */
  readonly unfinishedNestedTasks: number;
  /** What the child thread's provider can do. */
  readonly capabilities: ProviderCapabilities;
}

/** Whether task_cancel has anything it can stop, and whether that includes the active run. */
export type TaskCancelDecision =
  | { readonly ok: true; readonly stopsActiveRun: boolean; readonly reason: string }
  | {
      readonly ok: false;
      /** `turns.interrupt` when a running turn is all there is and the provider cannot stop it; null when nothing is left to stop. */
      readonly capability: CapabilityName | null;
      readonly reason: string;
    };

/**
 * task_cancel on an unpublished task: it goes ahead when it can stop something: the active run
 * (by {@link decideRunStop}), a queued run of the task, or a task the child delegated. Otherwise
 * it is refused (`task_not_cancellable`), so a cancel never claims to stop work it cannot.
 */
export function decideTaskCancel(query: TaskCancelQuery): TaskCancelDecision {
  const stop = query.activeRun === null ? null : decideRunStop(query.activeRun, query.capabilities);
  const stopsActiveRun = stop !== null && stop.ok;
  if (stopsActiveRun || query.queuedRuns > 0 || query.unfinishedNestedTasks > 0) {
    return {
      ok: true,
      stopsActiveRun,
      reason: stopsActiveRun
        ? "The task's active run is stopped with the rest of its work."
        : "The task's queued and delegated work is stopped.",
    };
  }
  if (stop !== null && !stop.ok) {
    return {
      ok: false,
      capability: stop.capability,
      reason:
        "The provider cannot interrupt the task's running turn, and the task has no queued turn or delegated work to stop.",
    };
  }
  return {
    ok: false,
    capability: null,
    reason: "The task has no active run, no queued turn and no unfinished delegated work.",
  };
}

/**
 * How a stop reaches a provider's own (native) sub-agent: `parent_turn`, by stopping the turn
 * of its parent that runs it (which ends every native sub-agent of that turn); `none`, not at
 * all (the provider has none, or cannot stop a running turn: its children end with the turn).
 */
export interface NativeSubagentStopDecision {
  readonly scope: "parent_turn" | "none";
  readonly reason: string;
}

/**
 * What stopping one native sub-agent costs on a provider. The adapter interface (spec v1) has
 * no operation that stops one native child alone, so even a harness that could
 * (`subagents.control: stop`/`steer`) is reached through its parent's turn: t3_thread_interrupt,
 * the thread's Stop or task_cancel on the parent, by {@link decideRunStop}.
 */
export function decideNativeSubagentStop(capabilities: ProviderCapabilities): NativeSubagentStopDecision {
  if (capabilities.subagents.native === "none")
    return { scope: "none", reason: "The provider has no sub-agents of its own." };
  if (!decideRunStop({ status: "running", reachedProvider: true }, capabilities).ok)
    return {
      scope: "none",
      reason:
        "The provider cannot interrupt a running turn, so nothing stops its native sub-agents: they end with their parent's turn.",
    };
  const alone = capabilities.subagents.control === "stop" || capabilities.subagents.control === "steer";
  return {
    scope: "parent_turn",
    reason: alone
      ? "The harness can stop one native sub-agent alone, but the adapter interface has no operation for it yet: stopping one stops its parent's turn, which ends every native sub-agent of that turn."
      : "The harness cannot stop one native sub-agent alone (subagents.control: observe): stopping one stops its parent's turn, which ends every native sub-agent of that turn.",
  };
}
