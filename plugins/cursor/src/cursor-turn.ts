import {
  NativeSubagentBook,
  TurnLedger,
  type AdapterEvent,
  type ProviderTurnError,
  type TurnTerminalStatus,
} from "@switchyard/sdk";
import {
  mcpToolOf,
  subagentTitleOf,
  toolCallFailed,
  toolKindOf,
  toolNameOf,
  toolOutputOf,
  toolTitleOf,
  turnUsageOf,
  type ToolCallMessage,
} from "./cursor-events.js";
import type { SDKMessage } from "./cursor-wire.js";

/**
 * One host turn over one Cursor run: the run's stream messages become the turn's events through
 * the harness kit's ledger. The SDK streams assistant text as chunks (one `assistant` message
 * per backend text delta), so consecutive chunks form one message item until a tool call starts;
 * `thinking` chunks form reasoning items the same way. Usage comes from the run's `usage`
 * message (the backend's `turn_ended`).
 */
export class CursorTurn {
  readonly ledger: TurnLedger;
  /** Switchyard asked for this turn to stop. */
  interruptRequested = false;
  /** Ends the turn if the sidecar does not after an interrupt. */
  interruptTimer: NodeJS.Timeout | null = null;
  /** Cursor's run id, once the run started. */
  runId: string | null = null;
  #messageItem: string | null = null;
  #reasoningItem: string | null = null;
  /** Cursor's own sub-agents (`task` calls) of this turn, by call id. */
  readonly #subagents: NativeSubagentBook;

  constructor(turnId: string, emit: (event: AdapterEvent) => void) {
    this.ledger = new TurnLedger(turnId, emit);
    this.#subagents = new NativeSubagentBook(turnId, emit);
  }

  get turnId(): string {
    return this.ledger.turnId;
  }

  get terminated(): boolean {
    return this.ledger.terminated;
  }

  /** One message of the run's stream. */
  onMessage(message: SDKMessage): void {
    switch (message.type) {
      case "status":
        if (message.status === "RUNNING") this.ledger.start(message.run_id);
        return;
      case "assistant":
        for (const block of message.message.content) {
          // Tool calls arrive as their own `tool_call` messages.
          if (block.type !== "text") continue;
          this.#closeReasoning();
          this.#messageItem ??= this.ledger.newItemId("message");
          this.ledger.messageDelta(this.#messageItem, block.text);
        }
        return;
      case "thinking":
        this.#reasoningItem ??= this.ledger.newItemId("reasoning");
        this.ledger.reasoningDelta(this.#reasoningItem, message.text);
        return;
      case "tool_call":
        this.#onToolCall(message);
        return;
      case "usage":
        this.ledger.addUsage(turnUsageOf(message.usage));
        return;
      default:
        return;
    }
  }

  #closeReasoning(): void {
    if (this.#reasoningItem === null) return;
    this.ledger.reasoningCompleted(this.#reasoningItem);
    this.#reasoningItem = null;
  }

  #onToolCall(message: ToolCallMessage): void {
    if (message.status === "running") {
      this.ledger.closeText();
      this.#messageItem = null;
      this.#reasoningItem = null;
      const mcp = message.name === "mcp" ? mcpToolOf(message.args) : null;
      const started = this.ledger.toolStarted({
        itemId: message.call_id,
        kind: toolKindOf(message.name),
        name: toolNameOf(message),
        title: toolTitleOf(message.name, message.args),
        ...(mcp !== null ? { server: mcp.server } : {}),
        ...(message.args !== undefined ? { input: message.args } : {}),
      });
      if (started && message.name === "task") {
        const description = subagentTitleOf(message.args);
        this.#subagents.spawned(message.call_id, {
          parentItemId: message.call_id,
          ...(description !== null ? { title: description } : {}),
        });
      }
      return;
    }
    const failed = toolCallFailed(message);
    const output = toolOutputOf(message.result);
    this.ledger.toolCompleted(message.call_id, failed ? "failed" : "completed", output);
    this.#subagents.finished(message.call_id, {
      status: failed ? "failed" : "completed",
      ...(output !== undefined ? { summary: output } : {}),
    });
  }

  /** Ends the turn once (the ledger settles what is still open). */
  finish(status: TurnTerminalStatus, error?: ProviderTurnError): boolean {
    if (this.interruptTimer !== null) clearTimeout(this.interruptTimer);
    if (!this.ledger.terminated) this.#subagents.closeOpen();
    return this.ledger.finish(status, error);
  }
}
