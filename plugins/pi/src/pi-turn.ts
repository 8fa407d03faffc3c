import {
  TurnLedger,
  type AdapterEvent,
  type ProviderTurnError,
  type RuntimeRequestBook,
  type TurnTerminalEvent,
  type TurnTerminalStatus,
} from "@switchyard/sdk";
import {
  assistantDeltaOf,
  assistantFinalOf,
  extensionErrorWarningOf,
  lastAssistantOf,
  lateSteeringWarning,
  retryWarningOf,
  runOutcomeOf,
  subagentCardsOf,
  toolCallEndOf,
  toolCallStartOf,
  usageOf,
} from "./pi-events.js";
import type { PiMessage, PiRpcEvent, PiToolResult } from "./pi-wire.js";

/** What the session must do after an event. */
export type PiTurnStep =
  /** Nothing more. */
  | null
  /** End the turn. */
  | { readonly kind: "end"; readonly status: TurnTerminalStatus; readonly error?: ProviderTurnError }
  /**
   * The run ended on a provider error, and Pi announces a retry or a compaction in the same tick
   * as `agent_end`: make a round trip to Pi (it orders after them), then call {@link PiTurn.errorSettled}.
   */
  | { readonly kind: "confirm_error" };

/**
 * One Switchyard turn over Pi: the agent run started by a `prompt`, plus any steering Pi folds
 * into it. The ledger holds the turn's items and ends it by the spec's rule; this class adds
 * what only Pi has: unnamed message items (numbered here), a run that may end on a provider
 * error Pi still retries or compacts, and the steering queue Pi reports.
 */
export class PiTurn {
  readonly #ledger: TurnLedger;
  readonly #emit: (event: AdapterEvent) => void;
  /** Switchyard asked for this turn to stop. */
  interruptRequested = false;
  /** Fires the interrupt grace timer. */
  interruptTimer: NodeJS.Timeout | null = null;
  /** A provider error ended a run; Pi may still retry. */
  #pendingError: ProviderTurnError | null = null;
  /** Pi said it retries or compacts after that error. */
  #recovering = false;
  #steeringQueue: readonly string[] = [];
  #messageId: string | null = null;
  /** The role of the message Pi is streaming (its last `message_start`). */
  #streamingRole: string | null = null;
  #reasoningId: string | null = null;
  #lastAssistant: PiMessage | null = null;
  /** The status last reported for each task card of Pi's subagent tool (by native id). */
  readonly #subagents = new Map<string, string>();

  constructor(
    /** The host's turn id. */
    readonly turnId: string,
    emit: (event: AdapterEvent) => void,
    /** The session's runtime requests; the turn's own are cancelled when it ends. */
    requests: RuntimeRequestBook<unknown>,
  ) {
    this.#emit = emit;
    this.#ledger = new TurnLedger(turnId, emit, requests);
  }

  /** The turn has ended. */
  get terminated(): boolean {
    return this.#ledger.terminated;
  }

  /** Settles with the terminal event once the turn ended. */
  get ended(): Promise<TurnTerminalEvent> {
    return this.#ledger.ended;
  }

  /** Reports `turn.started` once. */
  start(): void {
    this.#ledger.start();
  }

  /** A tool call the user declined: its failure is reported as `declined`. */
  declineTool(toolCallId: string): void {
    this.#ledger.declineTool(toolCallId);
  }

  /** Applies one Pi event and says what the session must do next. */
  apply(event: PiRpcEvent): PiTurnStep {
    if (this.terminated) return null;
    switch (event.type) {
      case "agent_start":
        this.start();
        // A new run after a provider error: Pi retried.
        this.#pendingError = null;
        this.#recovering = false;
        return null;
      case "message_start":
        this.#streamingRole = event.message?.role ?? null;
        if (event.message?.role === "assistant") this.#closeText();
        return null;
      case "message_update": {
        const delta = assistantDeltaOf(event, this.#streamingRole);
        if (delta?.channel === "message")
          this.#ledger.messageDelta((this.#messageId ??= this.#ledger.newItemId("message")), delta.text);
        else if (delta?.channel === "reasoning")
          this.#ledger.reasoningDelta((this.#reasoningId ??= this.#ledger.newItemId("reasoning")), delta.text);
        return null;
      }
      case "message_end":
        if (event.message?.role === "assistant") this.#onAssistantEnd(event.message);
        return null;
      case "tool_execution_start":
        if (!this.#ledger.toolOpen(event.toolCallId)) this.#closeText();
        this.#ledger.toolStarted(toolCallStartOf(event));
        return null;
      case "tool_execution_update":
        this.#observeSubagents(event.toolName, event.toolCallId, event.partialResult);
        return null;
      case "tool_execution_end": {
        this.#observeSubagents(event.toolName, event.toolCallId, event.result);
        const end = toolCallEndOf(event);
        this.#ledger.toolCompleted(end.itemId, end.status, end.output);
        return null;
      }
      case "queue_update":
        this.#steeringQueue = Array.isArray(event.steering) ? event.steering : [];
        return null;
      case "agent_end":
        return this.#onAgentEnd(lastAssistantOf(event, this.#lastAssistant));
      case "auto_retry_start":
        this.#recovering = true;
        this.#warn(retryWarningOf(event));
        return null;
      case "auto_retry_end":
        if (event.success !== false) return null;
        return {
          kind: "end",
          status: this.interruptRequested ? "interrupted" : "failed",
          error: { message: event.finalError ?? this.#pendingError?.message ?? "Pi's retries failed." },
        };
      case "compaction_start":
        if (this.#pendingError !== null) this.#recovering = true;
        return null;
      case "compaction_end":
        return this.#pendingError !== null && event.willRetry !== true
          ? { kind: "end", status: "failed", error: this.#pendingError }
          : null;
      case "extension_error":
        this.#warn(extensionErrorWarningOf(event));
        return null;
      default:
        return null;
    }
  }

  /** After the round trip `confirm_error` asked for: the error is final unless Pi announced a retry or compaction. */
  errorSettled(): PiTurnStep {
    if (this.terminated || this.#pendingError === null || this.#recovering) return null;
    return { kind: "end", status: "failed", error: this.#pendingError };
  }

  /**
   * Ends the turn by the ledger's rule (open text completed, open tools ended, the turn's
   * requests cancelled, one terminal). Returns false when it had already ended.
   */
  finish(status: TurnTerminalStatus, error?: ProviderTurnError): boolean {
    if (this.terminated) return false;
    if (this.interruptTimer) clearTimeout(this.interruptTimer);
    if (status === "completed" && this.#steeringQueue.length > 0)
      this.#warn(lateSteeringWarning(this.#steeringQueue.length));
    // A task card still running when the turn ends never reports again: it ended with the turn.
    for (const [nativeId, last] of this.#subagents) {
      if (last === "running")
        this.#emit({
          type: "subagent.observed",
          turnId: this.turnId,
          nativeId,
          status: status === "completed" ? "completed" : "failed",
        });
    }
    this.#subagents.clear();
    return this.#ledger.finish(status, error);
  }

  /** Reports each task card of Pi's subagent tool whose status changed (seed 000: observed native sub-agents). */
  #observeSubagents(toolName: string, toolCallId: string, result: PiToolResult | undefined): void {
    for (const card of subagentCardsOf(toolName, toolCallId, result) ?? []) {
      if (this.#subagents.get(card.nativeId) === card.status) continue;
      this.#subagents.set(card.nativeId, card.status);
      this.#emit({ type: "subagent.observed", turnId: this.turnId, ...card });
    }
  }

  #onAssistantEnd(message: PiMessage): void {
    this.#lastAssistant = message;
    const usage = usageOf(message);
    if (usage !== null) this.#ledger.addUsage(usage);
    // The final message is authoritative over the deltas (a message may arrive unstreamed).
    const { text, thinking } = assistantFinalOf(message);
    if (thinking !== "" || this.#reasoningId !== null)
      this.#ledger.reasoningCompleted(this.#reasoningId ?? this.#ledger.newItemId("reasoning"), thinking);
    if (text !== "" || this.#messageId !== null)
      this.#ledger.messageCompleted(this.#messageId ?? this.#ledger.newItemId("message"), text);
    this.#reasoningId = null;
    this.#messageId = null;
  }

  #onAgentEnd(last: PiMessage | undefined): PiTurnStep {
    const outcome = runOutcomeOf(last, this.interruptRequested);
    if (outcome.kind === "terminal") {
      if (outcome.warning !== undefined) this.#warn(outcome.warning);
      return { kind: "end", status: outcome.status, ...(outcome.error !== undefined ? { error: outcome.error } : {}) };
    }
    this.#pendingError = outcome.error;
    this.#recovering = false;
    return { kind: "confirm_error" };
  }

  #closeText(): void {
    this.#ledger.closeText();
    this.#messageId = null;
    this.#reasoningId = null;
  }

  #warn(message: string): void {
    this.#emit({ type: "warning", turnId: this.turnId, message });
  }
}
