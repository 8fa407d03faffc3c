import { TurnLedger, type AdapterEvent, type ProviderTurnError, type TurnTerminalStatus } from "@switchyard/sdk";
import { applyLedgerChange, isLedgerChange } from "../shared/codex-ledger-changes.js";
import type { ExecChange } from "./codex-exec-events.js";

/** How a `codex exec` run ended its turn. */
export interface ExecOutcome {
  readonly status: TurnTerminalStatus;
  readonly error?: ProviderTurnError;
}

/**
 * One host turn on `codex exec`: one process, stopped through the SDK's AbortSignal. The kit's
 * {@link TurnLedger} keeps its items and settles them when it ends; this adds the abort, the
 * texts the SDK reports whole (to stream only what is new) and how the run said it ended.
 */
export class CodexExecTurn {
  readonly ledger: TurnLedger;
  readonly abort = new AbortController();
  /** The host asked for the turn to stop: the run's failure is an interruption. */
  interruptRequested = false;
  #lastError: ProviderTurnError | null = null;
  #outcome: ExecOutcome | null = null;
  readonly #messageTexts = new Map<string, string>();

  constructor(hostTurnId: string, emit: (event: AdapterEvent) => void) {
    this.ledger = new TurnLedger(hostTurnId, emit);
  }

  get hostTurnId(): string {
    return this.ledger.turnId;
  }

  get terminated(): boolean {
    return this.ledger.terminated;
  }

  /** The text of a message so far. */
  messageText(itemId: string): string {
    return this.#messageTexts.get(itemId) ?? "";
  }

  /** Applies one change of the run (`thread` and `notice` are the session's). */
  apply(change: ExecChange): void {
    if (isLedgerChange(change)) return applyLedgerChange(this.ledger, change);
    switch (change.type) {
      case "started":
        return this.ledger.start();
      case "message_text":
        this.#messageTexts.set(change.itemId, change.text);
        return;
      case "error":
        this.#lastError = change.error;
        return;
      case "ended":
        this.#outcome = change;
        return;
      default:
        return;
    }
  }

  /** Ends the turn once its run is over: how the run said it ended, else its last error, else completed. */
  finishRun(): void {
    const outcome =
      this.#outcome ??
      (this.#lastError !== null
        ? { status: "failed" as const, error: this.#lastError }
        : { status: "completed" as const });
    this.ledger.finish(outcome.status, outcome.error);
  }

  /** Ends the turn whose run failed: interrupted when the host stopped it, else with the run's error. */
  failRun(describe: () => string): void {
    if (this.interruptRequested) this.ledger.finish("interrupted");
    else this.ledger.finish("failed", this.#lastError ?? { code: "codex_exec_failed", message: describe() });
  }
}
