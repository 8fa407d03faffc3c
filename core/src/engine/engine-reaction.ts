import type { CommandContext } from "./command-context.js";
import type { TurnUsageReport } from "../spec/index.js";
import type { AttemptRecord, RunRecord } from "../store/records.js";
import { token } from "../util/di-token.js";

/**
 * A reaction the engine runs inside the transaction of the change that triggers it, so what it
 * writes commits or rolls back with that change: it happens exactly once, also across a crash
 * (a change that did not commit never happened, reaction included). The composition root hands
 * the engine its reactions (`EngineReactionsToken`); nothing registers one as a side effect
 * of being built. A reaction may await its reads; the engine awaits it before the next one runs.
 */
export interface EngineReaction {
  /** Names the reaction (logs, a test that looks for it). */
  readonly name: string;
  /** After a run reached a terminal status. */
  onRunTerminal?(ctx: CommandContext, run: RunRecord): void | Promise<void>;
  /** After a runtime request opened or resolved. */
  onRuntimeRequestChanged?(ctx: CommandContext, requestId: string): void | Promise<void>;
  /**
   * After a provider turn reported its end (`turn.terminal`) and the attempt, and maybe its
   * run, were settled: with the usage it reported, or null when it reported none.
   */
  onTurnEnded?(ctx: CommandContext, attempt: AttemptRecord, usage: TurnUsageReport | null): void | Promise<void>;
  /** After a thread was marked stopped (Stop, task_cancel, a budget's stop). */
  onThreadStopped?(ctx: CommandContext, threadId: string): void | Promise<void>;
}

/** DI token: the engine's in-transaction reactions (the delegation saga), in the order they run. */
export const EngineReactionsToken = token<readonly EngineReaction[]>("EngineReactions");
