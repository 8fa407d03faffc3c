import type {
  AdapterEvent,
  InteractionMode,
  ProviderTurnError,
  RuntimeMode,
  TurnInput,
  TurnTerminalEvent,
  TurnTerminalStatus,
} from "@switchyard/spec";
import { TurnLedger, type RuntimeRequestBook } from "../harness/index.js";
import type { AcpPromptEnding, AcpReplayedTurn, AcpUpdate } from "./acp-events.js";
import type { AcpTurnView } from "./acp-flavor.js";
import type { ObservedSubagent, ObservedSubagentStatus } from "./acp-subagents.js";

/** What a turn gets from its session. @public */
export interface AcpTurnSession {
  /** The session's guarded emit. */
  readonly emit: (event: AdapterEvent) => void;
  /** The session's runtime requests; the turn's own are cancelled when it ends. */
  readonly requests: RuntimeRequestBook<unknown>;
  /** A fresh item id within the turn (`<turnId>:<prefix>:<n>`). */
  readonly newItemId: (prefix: string) => string;
  /** Called once, right after the terminal was reported. */
  readonly onEnded: (turn: AcpTurn) => void;
}

/**
 * One `session/prompt` as a Switchyard turn: its state on the kit's {@link TurnLedger}, plus
 * what ACP leaves to the client. ACP names no message or reasoning items, so the turn opens
 * one per run of text (a thought ends the message before it, a tool call ends both), and it
 * remembers the prompt and the assistant's text for the session's snapshot.
 * @public
 */
export class AcpTurn implements AcpTurnView {
  readonly turnId: string;
  readonly runtimeMode: RuntimeMode;
  readonly interactionMode: InteractionMode;
  /** The prompt as sent. */
  readonly promptText: string;
  /** Switchyard asked the agent to stop (a `cancelled` stop reason is then `interrupted`). */
  interruptRequested = false;
  readonly #ledger: TurnLedger;
  readonly #emit: (event: AdapterEvent) => void;
  readonly #newItemId: (prefix: string) => string;
  readonly #onEnded: (turn: AcpTurn) => void;
  #messageId: string | null = null;
  #reasoningId: string | null = null;
  #planItemId: string | null = null;
  #assistantText = "";
  /** The agent's sub-agents this turn reported, as last reported. */
  readonly #subagents = new Map<string, { readonly title?: string; readonly status: ObservedSubagentStatus }>();
  #cancelTimer: NodeJS.Timeout | null = null;

  constructor(input: TurnInput, session: AcpTurnSession) {
    this.turnId = input.turnId;
    this.runtimeMode = input.runtimeMode;
    this.interactionMode = input.interactionMode;
    this.promptText = input.text;
    this.#emit = session.emit;
    this.#newItemId = session.newItemId;
    this.#onEnded = session.onEnded;
    this.#ledger = new TurnLedger(input.turnId, session.emit, session.requests);
  }

  /** The turn has ended. */
  get terminated(): boolean {
    return this.#ledger.terminated;
  }

  /** Settles with the terminal once the turn ended. */
  get ended(): Promise<TurnTerminalEvent> {
    return this.#ledger.ended;
  }

  /** What the snapshot keeps of this turn. */
  get replayed(): AcpReplayedTurn {
    return { userText: this.promptText, assistantText: this.#assistantText };
  }

  /** Reports `turn.started`. */
  start(): void {
    this.#ledger.start();
  }

  /** Applies one `session/update` of this turn. */
  apply(update: AcpUpdate): void {
    if (this.terminated) return;
    switch (update.kind) {
      case "message_chunk":
        this.#closeReasoning();
        this.#messageId ??= this.#newItemId("message");
        this.#assistantText += update.text;
        this.#ledger.messageDelta(this.#messageId, update.text);
        return;
      case "thought_chunk":
        this.#closeMessage();
        this.#reasoningId ??= this.#newItemId("reasoning");
        this.#ledger.reasoningDelta(this.#reasoningId, update.text);
        return;
      case "tool_call":
        if (update.announced) {
          this.#closeMessage();
          this.#closeReasoning();
        }
        // A call seen before is only updated; one first seen in an update starts here.
        this.#ledger.toolStarted(update.start);
        if (update.end !== null) this.#ledger.toolCompleted(update.start.itemId, update.end.status, update.end.output);
        return;
      case "notice":
        this.#emit({ type: "warning", turnId: this.turnId, message: update.message });
        return;
      case "plan":
        // A plan update in default mode is the agent's progress list, not a proposal.
        if (this.interactionMode !== "plan") return;
        this.#planItemId ??= this.#newItemId("plan");
        this.#emit({ type: "plan.proposed", turnId: this.turnId, itemId: this.#planItemId, text: update.text });
        return;
      default:
        return;
    }
  }

  /** One of the agent's own sub-agents as it now stands: reported when its state or title changed. */
  observeSubagent(child: ObservedSubagent): void {
    if (this.terminated || child.status === null) return;
    const seen = this.#subagents.get(child.nativeId);
    if (seen !== undefined && seen.status === child.status && seen.title === child.title) return;
    this.#subagents.set(child.nativeId, {
      ...(child.title !== undefined ? { title: child.title } : {}),
      status: child.status,
    });
    this.#emit({
      type: "subagent.observed",
      turnId: this.turnId,
      nativeId: child.nativeId,
      ...(child.title !== undefined ? { title: child.title } : {}),
      status: child.status,
    });
  }

  /** The user declined this tool call: a failure of it is reported `declined`. */
  declineTool(toolCallId: string): void {
    this.#ledger.declineTool(toolCallId);
  }

  /** Calls `onTimeout` once after `ms` unless the turn ends first. */
  armCancelTimer(ms: number, onTimeout: () => void): void {
    if (this.#cancelTimer !== null || this.terminated) return;
    this.#cancelTimer = setTimeout(onTimeout, ms);
    this.#cancelTimer.unref();
  }

  /** Ends the turn as its prompt response says. Returns false when it had already ended. */
  endWith(ending: AcpPromptEnding): boolean {
    if (this.terminated) return false;
    if (ending.warning !== undefined) this.#emit({ type: "warning", turnId: this.turnId, message: ending.warning });
    if (ending.usage !== undefined) this.#ledger.setUsage(ending.usage);
    return this.finish(ending.status, ending.error);
  }

  /**
   * Ends the turn by the spec's rule (open text completed, open tools ended, the turn's runtime
   * requests cancelled, one terminal). Returns false when it had already ended.
   */
  finish(status: TurnTerminalStatus, error?: ProviderTurnError): boolean {
    if (this.#cancelTimer !== null) clearTimeout(this.#cancelTimer);
    this.#cancelTimer = null;
    if (this.terminated) return false;
    // Nothing of a finished turn stays open: a sub-agent still running ends with the turn
    // (an ACP child may go on working, and a later turn reports it again if it does).
    for (const [nativeId, child] of this.#subagents) {
      if (child.status !== "running") continue;
      this.#emit({
        type: "subagent.observed",
        turnId: this.turnId,
        nativeId,
        ...(child.title !== undefined ? { title: child.title } : {}),
        status: status === "completed" ? "completed" : "failed",
      });
    }
    this.#subagents.clear();
    if (!this.#ledger.finish(status, error)) return false;
    this.#onEnded(this);
    return true;
  }

  #closeMessage(): void {
    if (this.#messageId === null) return;
    this.#ledger.messageCompleted(this.#messageId);
    this.#messageId = null;
  }

  #closeReasoning(): void {
    if (this.#reasoningId === null) return;
    this.#ledger.reasoningCompleted(this.#reasoningId);
    this.#reasoningId = null;
  }
}
