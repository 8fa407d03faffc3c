import type {
  AdapterEvent,
  InteractionMode,
  ProviderTurnError,
  RuntimeMode,
  TurnInput,
  TurnTerminalEvent,
  TurnTerminalStatus,
} from "@switchyard/spec";
import { NativeSubagentBook, TurnLedger, type NativeSubagentFacts, type RuntimeRequestBook } from "../harness/index.js";
import type { AcpPromptEnding, AcpReplayedTurn, AcpUpdate } from "./acp-events.js";
import type { AcpTurnView } from "./acp-flavor.js";
import type { ObservedSubagent } from "./acp-subagents.js";

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
  /** The agent's sub-agents this turn reported, on the harness kit's book. */
  readonly #subagents: NativeSubagentBook;
  /** Each child's assistant message being streamed, and the text of its last whole one. */
  readonly #childText = new Map<string, { messageId: string | null; text: string; last: string | null }>();
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
    this.#subagents = new NativeSubagentBook(input.turnId, session.emit);
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

  /**
   * One of the agent's own sub-agents as it now stands: reported when its state or facts changed.
   * A child first seen ended is reported spawned, then ended; an ended child stays ended.
   */
  observeSubagent(child: ObservedSubagent): void {
    if (this.terminated || child.status === null) return;
    const facts = subagentFacts(child);
    if (!this.#subagents.isOpen(child.nativeId)) this.#subagents.spawned(child.nativeId, facts);
    else this.#subagents.update(child.nativeId, facts);
    if (child.status === "running") return;
    this.#flushChildMessage(child.nativeId);
    const summary = this.#childText.get(child.nativeId)?.last ?? undefined;
    this.#subagents.finished(
      child.nativeId,
      { status: child.status, ...(summary !== undefined ? { summary } : {}) },
      facts,
    );
    this.#childText.delete(child.nativeId);
  }

  /**
   * A chunk of an open child's assistant text (from its own session). Chunks of one message are
   * joined; the message is reported (`subagent.message`) when the next one starts or the child
   * ends, and the last one is its summary.
   */
  subagentMessage(nativeId: string, messageId: string | null, text: string): void {
    if (this.terminated || !this.#subagents.isOpen(nativeId)) return;
    const current = this.#childText.get(nativeId);
    if (current !== undefined && current.messageId !== messageId) this.#flushChildMessage(nativeId);
    const buffer = this.#childText.get(nativeId) ?? { messageId, text: "", last: null };
    buffer.messageId = messageId;
    buffer.text += text;
    this.#childText.set(nativeId, buffer);
  }

  #flushChildMessage(nativeId: string): void {
    const buffer = this.#childText.get(nativeId);
    if (buffer === undefined || buffer.text === "") return;
    this.#subagents.message(
      nativeId,
      "assistant",
      buffer.text,
      buffer.messageId !== null ? `${nativeId}:${buffer.messageId}` : undefined,
    );
    buffer.last = buffer.text;
    buffer.text = "";
    buffer.messageId = null;
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
    // Nothing of a finished turn stays open: a sub-agent still running failed, its result never
    // having come to this turn (an ACP child may go on working, and a later turn reports it
    // again if it does).
    for (const nativeId of this.#subagents.openIds) this.#flushChildMessage(nativeId);
    this.#subagents.closeOpen();
    this.#childText.clear();
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

/** The kit's facts of an observed child (its session id is not a thread the host can read). */
function subagentFacts(child: ObservedSubagent): NativeSubagentFacts {
  return {
    ...(child.title !== undefined ? { title: child.title } : {}),
    ...(child.task !== undefined ? { task: child.task } : {}),
    ...(child.model !== undefined ? { model: child.model } : {}),
  };
}
