import type { ProviderCapabilities } from "../spec/index.js";
import { decideFork } from "./fork.js";
import { decideMessageDispatch } from "./message-dispatch.js";
import { decideNativeSubagentStop, decideRunStop, decideTaskCancel, type StoppableRunView } from "./stopping.js";

/**
 * What the shared policy does with work on one provider, as `orchestrator_capabilities` lists
 * it. Each field is the answer of the decision function itself for the typical case, never a
 * reading of the capability record of its own, so the listing cannot promise what the policy
 * would not do.
 */
export interface ProviderConduct {
  /**
   * What a default (`auto`) send does to a running turn: steers it natively, interrupts and
   * restarts it with the message, queues behind it, or is refused (`none`: the provider does
   * not report when a turn ends, so nothing can wait behind one).
   */
  readonly steering: "native" | "interrupt_restart" | "queue" | "none";
  /** How a fork of a thread that has a conversation is carried out (latest state). */
  readonly fork: "native" | "portable";
  /**
   * What t3_thread_interrupt and task_cancel can stop: running turns, or only runs whose turn
   * has not reached the provider (a running turn is refused with `thread_not_interruptible`, and
   * `task_not_cancellable` when it is all a task has left).
   */
  readonly interrupt: "running_turns" | "unstarted_only";
  /**
   * What a stop aimed at one of the provider's own (native) sub-agents stops: its parent's turn
   * (every native sub-agent of that turn ends with it), or nothing (`none`: no native
   * sub-agents, or a running turn cannot be stopped).
   */
  readonly nativeSubagentStop: "parent_turn" | "none";
}

/** A turn that runs at the provider, neither stopping nor a maintenance command. */
const RUNNING_TURN = { status: "running", providerTurnLive: true, interruptRequested: false, text: "" } as const;
const RUNNING_AT_PROVIDER: StoppableRunView = { status: "running", reachedProvider: true };

/** {@link ProviderConduct} for a provider, from its decoded capabilities. */
export function describeProviderConduct(capabilities: ProviderCapabilities): ProviderConduct {
  const send = decideMessageDispatch({
    requested: "auto",
    activeRun: RUNNING_TURN,
    capabilities,
    text: "",
    notification: false,
  });
  const steering = !send.ok
    ? "none"
    : send.action === "steer"
      ? "native"
      : send.action === "restart"
        ? "interrupt_restart"
        : "queue";
  const fork = decideFork({
    sameProviderInstance: true,
    sourceHasNativeThread: true,
    atTurn: false,
    capabilities,
  }).action;
  const interrupts = decideRunStop(RUNNING_AT_PROVIDER, capabilities).ok;
  const cancels = decideTaskCancel({
    activeRun: RUNNING_AT_PROVIDER,
    queuedRuns: 0,
    unfinishedNestedTasks: 0,
    capabilities,
  });
  // Both stop the same turn by the same rule; were they ever to disagree, the weaker answer is the honest one.
  const interrupt = interrupts && cancels.ok && cancels.stopsActiveRun ? "running_turns" : "unstarted_only";
  return { steering, fork, interrupt, nativeSubagentStop: decideNativeSubagentStop(capabilities).scope };
}
