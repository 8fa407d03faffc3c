import type { CapabilityName, ProviderCapabilities } from "../spec/index.js";
import type { RunStatus } from "../store/records.js";

/** How a sender wants a message delivered (seed 000 `t3_thread_send` modes). */
export type SendMode = "auto" | "queue" | "steer" | "restart";

/** What the host will do with the message. */
export type DispatchAction =
  /** No active turn: start a run now. */
  | "start"
  /** Run it after the active work. */
  | "queue"
  /** Add it to the running provider turn. */
  | "steer"
  /** Interrupt the running turn and restart it with the message (same run, new attempt). */
  | "restart"
  /** Stop the running turn and run the message first among queued work. */
  | "interrupt_then_queue_first";

/** The active run of a thread, as the policy needs to see it. */
export interface ActiveRunView {
  readonly status: RunStatus;
  /** True once the provider accepted the turn (it is steerable from then on). */
  readonly providerTurnLive: boolean;
  /** Stop or an interrupt has already reached this turn. */
  readonly interruptRequested: boolean;
}

/** Input to {@link decideMessageDispatch}. */
export interface DispatchQuery {
  readonly requested: SendMode;
  /** The thread's active run, or null when idle. */
  readonly activeRun: ActiveRunView | null;
  readonly capabilities: ProviderCapabilities;
  /** The message text (maintenance commands like /compact own their run). */
  readonly text: string;
}

/** A decision: what was asked, what will be done, and why. */
export type DispatchDecision =
  | { readonly ok: true; readonly asked: SendMode; readonly action: DispatchAction; readonly degraded: boolean; readonly reason: string }
  | {
      readonly ok: false;
      readonly asked: SendMode;
      readonly reason: string;
      /** The missing capability, when the refusal is a capability gap. */
      readonly capability: CapabilityName | null;
    };

const MAINTENANCE = /^\s*\/(compact|logout)\b/;

/** True for native maintenance commands, which always run as their own turn. */
export function isMaintenanceCommand(text: string): boolean {
  return MAINTENANCE.test(text);
}

/**
 * Decides how a message reaches a thread. Pure: the same projection and capabilities always
 * give the same decision, and every decision names what was asked and what is done.
 *
 * - auto: start when idle; steer a live turn when the provider steers natively; otherwise queue.
 * - queue: start when idle, else run after active work.
 * - steer: native steer, else interrupt-and-restart, else refused.
 * - restart: interrupt-and-restart, else stop the turn and queue the message first, else refused.
 */
export function decideMessageDispatch(query: DispatchQuery): DispatchDecision {
  const { requested, activeRun, capabilities } = query;
  const turns = capabilities.turns;
  const canQueue = turns.terminalStatusQuality !== "none";
  const queueOrRefuse = (reason: string): DispatchDecision =>
    canQueue
      ? { ok: true, asked: requested, action: "queue", degraded: requested !== "queue" && requested !== "auto", reason }
      : {
          ok: false,
          asked: requested,
          capability: "turns.terminalStatusQuality",
          reason: "The provider does not report when a turn ends, so a message cannot wait behind the active turn.",
        };

  if (activeRun === null) {
    if (requested === "steer" || requested === "restart") {
      return { ok: false, asked: requested, capability: null, reason: `The thread has no active provider turn to ${requested}; send with mode "auto" or "queue" to start one.` };
    }
    return { ok: true, asked: requested, action: "start", degraded: false, reason: "The thread is idle, so the message starts a run." };
  }

  const maintenance = isMaintenanceCommand(query.text);
  const live = activeRun.providerTurnLive && (activeRun.status === "running" || activeRun.status === "waiting");

  if (requested === "queue") return queueOrRefuse("Queued behind the active run.");

  if (requested === "auto") {
    if (maintenance) return queueOrRefuse("Maintenance commands own their run, so it is queued.");
    if (!live || activeRun.interruptRequested) return queueOrRefuse("The active turn is not steerable yet, so the message is queued.");
    if (turns.activeSteering) return { ok: true, asked: requested, action: "steer", degraded: false, reason: "The provider steers a running turn natively." };
    return queueOrRefuse("The provider cannot steer a running turn, so the message is queued.");
  }

  // Explicit steer or restart.
  if (maintenance) {
    return { ok: false, asked: requested, capability: null, reason: "Maintenance commands (/compact, /logout) cannot steer or restart a turn; send them with mode \"queue\"." };
  }
  if (activeRun.interruptRequested) {
    return { ok: false, asked: requested, capability: null, reason: "Stop has already reached the active turn; send with mode \"queue\" instead." };
  }
  if (!live) {
    return { ok: false, asked: requested, capability: null, reason: `The active turn has not started at the provider yet, so it cannot be ${requested === "steer" ? "steered" : "restarted"}; use mode "auto" or "queue".` };
  }
  if (requested === "steer") {
    if (turns.activeSteering) return { ok: true, asked: requested, action: "steer", degraded: false, reason: "Steered into the running turn." };
    if (turns.interrupt && turns.steeringByInterruptRestart) {
      return { ok: true, asked: requested, action: "restart", degraded: true, reason: "The provider cannot steer natively, so the turn is interrupted and restarted with the message." };
    }
    return { ok: false, asked: requested, capability: "turns.activeSteering", reason: "The provider can neither steer a running turn nor restart it with new input; send with mode \"queue\"." };
  }
  if (turns.interrupt && turns.steeringByInterruptRestart) {
    return { ok: true, asked: requested, action: "restart", degraded: false, reason: "The turn is interrupted and restarted with the message." };
  }
  if (turns.interrupt && canQueue) {
    return {
      ok: true,
      asked: requested,
      action: "interrupt_then_queue_first",
      degraded: true,
      reason: "The provider cannot restart a turn with new input, so the turn is stopped and the message runs first among queued work.",
    };
  }
  return { ok: false, asked: requested, capability: "turns.interrupt", reason: "The provider cannot stop a running turn, so it cannot be restarted; send with mode \"queue\"." };
}
