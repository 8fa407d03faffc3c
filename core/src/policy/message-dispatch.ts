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
  /** The message the run works on: a `/compact` or `/logout` turn can be neither steered nor restarted. */
  readonly text: string;
}

/** Input to {@link decideMessageDispatch}. */
export interface DispatchQuery {
  readonly requested: SendMode;
  /** The thread's active run, or null when idle. */
  readonly activeRun: ActiveRunView | null;
  readonly capabilities: ProviderCapabilities;
  /** The message text (maintenance commands like /compact own their run). */
  readonly text: string;
  /**
   * A system notification (a child's question to its parent) rather than a sender's message:
   * its `auto` steers only natively and otherwise queues, so a notice never cuts a turn short.
   */
  readonly notification: boolean;
}

/** A decision: what was asked, what will be done, and why. */
export type DispatchDecision =
  | {
      readonly ok: true;
      readonly asked: SendMode;
      readonly action: DispatchAction;
      readonly degraded: boolean;
      readonly reason: string;
    }
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
 * give the same decision, and every decision names what was asked, what is done, and whether
 * that is less than the mode promises (`degraded`).
 *
 * - auto: start when idle; queue behind a turn that is not steerable yet (starting, already
 *   stopping, or a maintenance command); steer a fully active turn, natively, else by
 *   interrupt-and-restart (degraded), else (a provider that can only stop a turn, or none) queue
 *   behind it (degraded). A notification never restarts a turn: it steers natively or queues.
 * - queue: start when idle, else run after active work.
 * - steer: native steer, else interrupt-and-restart (degraded), else refused.
 * - restart: interrupt-and-restart, else stop the turn and queue the message first (degraded),
 *   else refused.
 * Maintenance commands (/compact, /logout) never steer or restart, and a maintenance turn is
 * never steered or restarted.
 */
export function decideMessageDispatch(query: DispatchQuery): DispatchDecision {
  const { requested, activeRun, capabilities } = query;
  const turns = capabilities.turns;
  const canQueue = turns.terminalStatusQuality !== "none";
  const queueOrRefuse = (reason: string, degraded: boolean): DispatchDecision =>
    canQueue
      ? { ok: true, asked: requested, action: "queue", degraded, reason }
      : {
          ok: false,
          asked: requested,
          capability: "turns.terminalStatusQuality",
          reason: "The provider does not report when a turn ends, so a message cannot wait behind the active turn.",
        };

  if (activeRun === null) {
    if (requested === "steer" || requested === "restart") {
      return {
        ok: false,
        asked: requested,
        capability: null,
        reason: `The thread has no active provider turn to ${requested}; send with mode "auto" or "queue" to start one.`,
      };
    }
    return {
      ok: true,
      asked: requested,
      action: "start",
      degraded: false,
      reason: "The thread is idle, so the message starts a run.",
    };
  }

  const maintenance = isMaintenanceCommand(query.text);
  const maintenanceTurn = isMaintenanceCommand(activeRun.text);
  const live = activeRun.providerTurnLive && (activeRun.status === "running" || activeRun.status === "waiting");
  const restartable = turns.interrupt && turns.steeringByInterruptRestart;

  if (requested === "queue") return queueOrRefuse("Queued behind the active run.", false);

  if (requested === "auto") {
    if (maintenance) return queueOrRefuse("Maintenance commands own their run, so it is queued.", false);
    if (maintenanceTurn)
      return queueOrRefuse(
        "The active turn is a maintenance command (/compact, /logout), which cannot be steered, so the message is queued behind it.",
        false,
      );
    if (!live || activeRun.interruptRequested)
      return queueOrRefuse("The active turn is not steerable yet, so the message is queued.", false);
    if (turns.activeSteering)
      return {
        ok: true,
        asked: requested,
        action: "steer",
        degraded: false,
        reason: "The provider steers a running turn natively.",
      };
    if (restartable && !query.notification) {
      return {
        ok: true,
        asked: requested,
        action: "restart",
        degraded: true,
        reason:
          "The provider cannot steer a running turn natively, so the turn is interrupted and restarted with the message.",
      };
    }
    return queueOrRefuse(
      query.notification
        ? "The provider cannot steer a running turn natively and a notification never interrupts one, so it is queued behind the turn."
        : "The provider can neither steer a running turn nor restart it with new input, so the message is queued behind the turn.",
      true,
    );
  }

  // Explicit steer or restart.
  if (maintenance) {
    return {
      ok: false,
      asked: requested,
      capability: null,
      reason: 'Maintenance commands (/compact, /logout) cannot steer or restart a turn; send them with mode "queue".',
    };
  }
  if (maintenanceTurn) {
    return {
      ok: false,
      asked: requested,
      capability: null,
      reason: `The active turn is a maintenance command (/compact, /logout), which cannot be ${requested === "steer" ? "steered" : "restarted"}; send with mode "queue" or "auto" to run after it.`,
    };
  }
  if (activeRun.interruptRequested) {
    return {
      ok: false,
      asked: requested,
      capability: null,
      reason: 'Stop has already reached the active turn; send with mode "queue" instead.',
    };
  }
  if (!live) {
    return {
      ok: false,
      asked: requested,
      capability: null,
      reason: `The active turn has not started at the provider yet, so it cannot be ${requested === "steer" ? "steered" : "restarted"}; use mode "auto" or "queue".`,
    };
  }
  if (requested === "steer") {
    if (turns.activeSteering)
      return { ok: true, asked: requested, action: "steer", degraded: false, reason: "Steered into the running turn." };
    if (restartable) {
      return {
        ok: true,
        asked: requested,
        action: "restart",
        degraded: true,
        reason: "The provider cannot steer natively, so the turn is interrupted and restarted with the message.",
      };
    }
    return {
      ok: false,
      asked: requested,
      capability: "turns.activeSteering",
      reason: 'The provider can neither steer a running turn nor restart it with new input; send with mode "queue".',
    };
  }
  if (restartable) {
    return {
      ok: true,
      asked: requested,
      action: "restart",
      degraded: false,
      reason: "The turn is interrupted and restarted with the message.",
    };
  }
  if (turns.interrupt && canQueue) {
    return {
      ok: true,
      asked: requested,
      action: "interrupt_then_queue_first",
      degraded: true,
      reason:
        "The provider cannot restart a turn with new input, so the turn is stopped and the message runs first among queued work.",
    };
  }
  return {
    ok: false,
    asked: requested,
    capability: "turns.interrupt",
    reason: 'The provider cannot stop a running turn, so it cannot be restarted; send with mode "queue".',
  };
}
