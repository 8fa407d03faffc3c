import {
  JsonRpcRequestError,
  TurnLedger,
  type AdapterEvent,
  type ProviderTurnError,
  type RuntimeMode,
  type RuntimeRequestBook,
  type TurnTerminalStatus,
} from "@switchyard/sdk";
import { applyLedgerChange, isLedgerChange } from "../shared/codex-ledger-changes.js";
import { codexModelUsage } from "../shared/codex-usage.js";
import { codexTerminalOf, type CodexTurnChange, type FileChangeItem } from "./codex-events.js";
import type { CodexSubagents } from "./codex-subagents.js";

/** How long a steer or interrupt waits for Codex to announce a turn it accepted. */
const ANNOUNCE_WAIT_MS = 5_000;
/** Retries of a steer or interrupt Codex refused because the turn is not active yet. */
const NOT_ACTIVE_RETRIES = 20;
const NOT_ACTIVE_RETRY_MS = 50;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** What a turn needs from its session. */
export interface CodexTurnDeps {
  readonly emit: (event: AdapterEvent) => void;
  /** The session's runtime requests; the turn's own are cancelled when it ends. */
  readonly requests: RuntimeRequestBook<string | number>;
  readonly subagents: CodexSubagents;
}

/**
 * One host turn on a Codex thread: the kit's {@link TurnLedger} (which settles whatever is open
 * when the turn ends) plus what only Codex needs: the Codex turn id it is bound to, whether
 * Codex has announced it yet, the last error Codex sent, and the file changes approvals name.
 */
export class CodexTurn {
  readonly ledger: TurnLedger;
  /** The Codex turn id, once `turn/start` answered or Codex announced it. */
  codexTurnId: string | null = null;
  /** The host asked for the turn to stop (so Codex's `interrupted` is not a cancellation). */
  interruptRequested = false;
  /** Restarts the app-server when an interrupted turn does not end in time. */
  interruptTimer: NodeJS.Timeout | null = null;
  #lastError: ProviderTurnError | null = null;
  /** The thread's running token total at the last model request counted (see `request_usage`). */
  #runningTotalTokens: number | null = null;
  #abandoned = false;
  readonly #fileChanges = new Map<string, FileChangeItem>();
  #resolveCodexTurnId!: (id: string | null) => void;
  #markAnnounced!: () => void;
  #markEnded!: () => void;
  /** Settles with the Codex turn id once `turn/start` answered (null when the turn ended first). */
  readonly codexTurnIdKnown = new Promise<string | null>((resolve) => (this.#resolveCodexTurnId = resolve));
  /**
   * Settles once Codex announced the turn (`turn/started`) or it ended. Codex answers
   * `turn/start` before the turn is active: a steer or interrupt sent in between is refused.
   */
  readonly announced = new Promise<void>((resolve) => (this.#markAnnounced = resolve));
  /** Settles once the turn ended (or never started at Codex). */
  readonly ended = new Promise<void>((resolve) => (this.#markEnded = resolve));

  constructor(
    /** The host's turn id. */
    readonly hostTurnId: string,
    /** The turn's runtime mode: it decides which approvals the driver answers itself. */
    readonly runtimeMode: RuntimeMode,
    private readonly deps: CodexTurnDeps,
    /** The model the turn runs on, as Codex resolved it (null: unknown). */
    private readonly model: string | null = null,
  ) {
    this.ledger = new TurnLedger(hostTurnId, deps.emit, deps.requests);
  }

  /** The turn has ended, or Codex refused to start it. */
  get terminated(): boolean {
    return this.#abandoned || this.ledger.terminated;
  }

  /** Ties the turn to its Codex turn id and reports `turn.started` (once, whichever comes first). */
  bind(codexTurnId: string): void {
    if (this.codexTurnId === null) {
      this.codexTurnId = codexTurnId;
      this.#resolveCodexTurnId(codexTurnId);
    }
    this.ledger.start(this.codexTurnId);
  }

  /** Codex announced the turn: steers and interrupts may go now. */
  markAnnounced(): void {
    this.#markAnnounced();
  }

  /** The Codex turn id once Codex announced the turn (waiting a little), null when it ended first. */
  async announcedId(): Promise<string | null> {
    const codexTurnId = await this.codexTurnIdKnown;
    if (codexTurnId === null) return null;
    await Promise.race([this.announced, delay(ANNOUNCE_WAIT_MS)]);
    return this.terminated ? null : codexTurnId;
  }

  /**
   * Runs a steer or interrupt, retrying briefly while Codex says the turn is not active yet (it
   * answers `turn/start` before the turn runs).
   */
  async whileStarting<T>(operation: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await operation();
      } catch (error) {
        const notYet = error instanceof JsonRpcRequestError && /no active turn/i.test(error.message);
        if (!notYet || this.terminated || attempt >= NOT_ACTIVE_RETRIES) throw error;
        await delay(NOT_ACTIVE_RETRY_MS);
      }
    }
  }

  /** The file-change item an approval is about, as Codex reported it. */
  fileChange(itemId: string): FileChangeItem | undefined {
    return this.#fileChanges.get(itemId);
  }

  /** Applies one change Codex reported for this turn. */
  apply(change: CodexTurnChange): void {
    if (this.terminated) return;
    if (isLedgerChange(change)) return applyLedgerChange(this.ledger, change);
    switch (change.type) {
      case "request_usage":
        // A turn makes a model request per step: their usages add up, each counted once.
        if (change.runningTotalTokens !== null && change.runningTotalTokens === this.#runningTotalTokens) return;
        this.#runningTotalTokens = change.runningTotalTokens;
        return this.ledger.addUsage(codexModelUsage(change.usage, this.model));
      case "file_change":
        this.#fileChanges.set(change.item.id, change.item);
        return;
      case "subagent_activity":
        this.deps.emit({
          type: "subagent.observed",
          turnId: this.hostTurnId,
          nativeId: change.nativeId,
          title: change.title,
          status: change.status,
          nativeThreadId: change.nativeId,
        });
        return;
      case "subagents_spawned":
        return this.deps.subagents.spawned(this.hostTurnId, change.threadIds, {
          title: change.title,
          parentItemId: change.itemId,
          model: change.model,
        });
      case "error":
        this.#lastError = change.error;
        return;
      case "completed": {
        const terminal = codexTerminalOf(change.turn, {
          interruptRequested: this.interruptRequested,
          lastError: this.#lastError,
        });
        if (terminal.warning !== undefined)
          this.deps.emit({ type: "warning", turnId: this.hostTurnId, message: terminal.warning });
        this.finish(terminal.status, terminal.error);
        return;
      }
    }
  }

  /**
   * Ends the turn by the spec's rule (the ledger: open tools end, the turn's requests are
   * cancelled, one `turn.terminal`). Returns false when it had already ended.
   */
  finish(status: TurnTerminalStatus, error?: ProviderTurnError): boolean {
    if (this.terminated) return false;
    if (this.interruptTimer !== null) clearTimeout(this.interruptTimer);
    // A turn Codex knows reports `turn.started` before its terminal, even when no event came.
    if (this.codexTurnId !== null) this.ledger.start(this.codexTurnId);
    this.ledger.finish(status, error);
    this.#settle();
    return true;
  }

  /** Codex refused `turn/start`: the turn never ran, so nothing is reported for it. */
  abandon(): void {
    this.#abandoned = true;
    this.#settle();
  }

  #settle(): void {
    this.#resolveCodexTurnId(this.codexTurnId);
    this.#markAnnounced();
    this.#markEnded();
  }
}
