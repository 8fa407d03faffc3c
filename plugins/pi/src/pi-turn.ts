import type { AdapterEvent, ProviderTurnError, ToolKind, TurnTerminalStatus } from "@switchyard/sdk";
import { messageText, messageThinking, toolResultText, type PiMessage, type PiRpcEvent, type PiStopReason } from "./pi-wire.js";

/** Kind of a Pi tool, from its name: built-ins by name, `mcp__<server>__<tool>` as MCP. */
export function toolKindOf(name: string): ToolKind {
  switch (name) {
    case "bash":
      return "command";
    case "read":
    case "ls":
      return "file_read";
    case "grep":
    case "find":
      return "search";
    case "edit":
    case "write":
      return "file_change";
    default:
      return parseMcpToolName(name) !== null ? "mcp" : "other";
  }
}

/** `mcp__<server>__<tool>` → its parts, else null. */
export function parseMcpToolName(name: string): { readonly server: string; readonly tool: string } | null {
  const match = /^mcp__(.+?)__(.+)$/.exec(name);
  return match === null ? null : { server: match[1]!, tool: match[2]! };
}

/** A one-line summary of a tool call for a timeline. */
export function toolTitleOf(name: string, args: unknown): string {
  const input = typeof args === "object" && args !== null ? (args as Record<string, unknown>) : {};
  const pick = (key: string): string | null => (typeof input[key] === "string" ? (input[key] as string) : null);
  const mcp = parseMcpToolName(name);
  if (mcp !== null) return `${mcp.server}/${mcp.tool}`;
  switch (name) {
    case "bash":
      return pick("command") ?? name;
    case "read":
    case "edit":
    case "write":
    case "ls":
      return pick("path") ? `${name} ${pick("path")}` : name;
    case "grep":
    case "find":
      return pick("pattern") ? `${name} ${pick("pattern")}` : name;
    default:
      return name;
  }
}

interface OpenItem {
  readonly itemId: string;
  text: string;
}

interface ToolState {
  done: boolean;
}

/** How a run of Pi's agent loop ended, as the turn sees it. */
export type RunOutcome =
  /** The run is over: the turn ends with this status. */
  | { readonly kind: "terminal"; readonly status: TurnTerminalStatus; readonly error?: ProviderTurnError; readonly warning?: string }
  /** The run ended on a provider error; Pi may still retry or compact (wait before ending). */
  | { readonly kind: "error_pending"; readonly error: ProviderTurnError };

/**
 * One Switchyard turn over Pi: the agent run started by a `prompt`, plus any steering Pi folds
 * into it. Turns Pi's events into adapter events carrying the host's turn id, and tracks what
 * it needs to close cleanly (open items, tool calls, usage).
 */
export class PiTurn {
  /** `turn.started` was emitted. */
  started = false;
  /** `turn.terminal` was emitted. */
  terminated = false;
  /** Switchyard asked for this turn to stop. */
  interruptRequested = false;
  /** A provider error ended a run; Pi may still retry. */
  pendingError: ProviderTurnError | null = null;
  /** Pi said it retries or compacts after that error. */
  recovering = false;
  /** Pi's steering queue as last reported. */
  steeringQueue: readonly string[] = [];
  /** Fires the interrupt grace timer. */
  interruptTimer: NodeJS.Timeout | null = null;
  /** The text of the last assistant message that had any. */
  assistantText = "";
  private message: OpenItem | null = null;
  private reasoning: OpenItem | null = null;
  private lastAssistant: PiMessage | null = null;
  private readonly tools = new Map<string, ToolState>();
  private readonly declined = new Set<string>();
  private messageCount = 0;
  private reasoningCount = 0;
  private inputTokens = 0;
  private outputTokens = 0;
  private sawUsage = false;
  private markEnded!: () => void;
  /** Settles once the terminal has been emitted. */
  readonly ended = new Promise<void>((resolve) => {
    this.markEnded = resolve;
  });

  constructor(
    /** The host's turn id. */
    readonly turnId: string,
    /** The user text as sent to Pi (with any instructions). */
    readonly promptText: string,
    private readonly emit: (event: AdapterEvent) => void,
  ) {}

  /** Emits `turn.started` once. */
  markStarted(): void {
    if (this.started || this.terminated) return;
    this.started = true;
    this.emit({ type: "turn.started", turnId: this.turnId });
  }

  /** A tool call the user declined (its failure is reported as `declined`). */
  markDeclined(toolCallId: string): void {
    this.declined.add(toolCallId);
  }

  /**
   * Applies one Pi event. Returns how the run ended on `agent_end`, else null. Retry and
   * compaction events are the session's to interpret.
   */
  apply(event: PiRpcEvent): RunOutcome | null {
    if (this.terminated) return null;
    switch (event.type) {
      case "agent_start":
        this.markStarted();
        // A new run after a provider error: Pi retried.
        this.pendingError = null;
        this.recovering = false;
        return null;
      case "message_start":
        if (event.message?.role === "assistant") {
          this.closeMessage();
          this.closeReasoning();
        }
        return null;
      case "message_update":
        this.onDelta(event);
        return null;
      case "message_end":
        if (event.message?.role === "assistant") this.onAssistantEnd(event.message);
        return null;
      case "tool_execution_start":
        this.onToolStart(event.toolCallId, event.toolName, event.args);
        return null;
      case "tool_execution_end":
        this.onToolEnd(event.toolCallId, event.isError === true, toolResultText(event.result));
        return null;
      case "queue_update":
        this.steeringQueue = Array.isArray(event.steering) ? event.steering : [];
        return null;
      case "agent_end":
        return this.onAgentEnd(event.messages);
      default:
        return null;
    }
  }

  private onDelta(event: Extract<PiRpcEvent, { type: "message_update" }>): void {
    if (event.message?.role !== "assistant") return;
    const delta = event.assistantMessageEvent;
    if (delta === undefined) return;
    if (delta.type === "text_delta" && typeof delta.delta === "string" && delta.delta !== "") {
      this.message ??= { itemId: `message-${++this.messageCount}`, text: "" };
      this.message.text += delta.delta;
      this.emit({ type: "message.delta", turnId: this.turnId, itemId: this.message.itemId, text: delta.delta });
    } else if (delta.type === "thinking_delta" && typeof delta.delta === "string" && delta.delta !== "") {
      this.reasoning ??= { itemId: `reasoning-${++this.reasoningCount}`, text: "" };
      this.reasoning.text += delta.delta;
      this.emit({ type: "reasoning.delta", turnId: this.turnId, itemId: this.reasoning.itemId, text: delta.delta });
    }
  }

  private onAssistantEnd(message: PiMessage): void {
    this.lastAssistant = message;
    if (message.usage) {
      this.sawUsage = true;
      this.inputTokens += message.usage.input ?? 0;
      this.outputTokens += message.usage.output ?? 0;
    }
    // The final message is authoritative over the deltas (a message may arrive unstreamed).
    const thinking = messageThinking(message);
    if (thinking !== "" || this.reasoning !== null) {
      this.reasoning ??= { itemId: `reasoning-${++this.reasoningCount}`, text: "" };
      if (thinking !== "") this.reasoning.text = thinking;
    }
    this.closeReasoning();
    const text = messageText(message);
    if (text !== "" || this.message !== null) {
      this.message ??= { itemId: `message-${++this.messageCount}`, text: "" };
      if (text !== "") this.message.text = text;
    }
    if (this.message !== null && this.message.text !== "") this.assistantText = this.message.text;
    this.closeMessage();
  }

  private onToolStart(toolCallId: string, toolName: string, args: unknown): void {
    if (this.tools.has(toolCallId)) return;
    this.closeMessage();
    this.closeReasoning();
    this.tools.set(toolCallId, { done: false });
    const mcp = parseMcpToolName(toolName);
    this.emit({
      type: "tool_call.started",
      turnId: this.turnId,
      itemId: toolCallId,
      kind: toolKindOf(toolName),
      name: toolName,
      title: toolTitleOf(toolName, args),
      ...(mcp !== null ? { server: mcp.server } : {}),
      ...(args !== undefined ? { input: args } : {}),
    });
  }

  private onToolEnd(toolCallId: string, isError: boolean, output: string | undefined): void {
    const state = this.tools.get(toolCallId);
    if (state === undefined || state.done) return;
    state.done = true;
    const status = !isError ? "completed" : this.declined.has(toolCallId) ? "declined" : "failed";
    this.emit({ type: "tool_call.completed", turnId: this.turnId, itemId: toolCallId, status, ...(output !== undefined ? { output } : {}) });
  }

  private onAgentEnd(messages: readonly PiMessage[] | undefined): RunOutcome {
    const fromEvent = messages?.filter((message) => message.role === "assistant").at(-1);
    const last = fromEvent ?? this.lastAssistant ?? undefined;
    const stopReason: PiStopReason | undefined = last?.stopReason;
    switch (stopReason) {
      case "aborted":
        return { kind: "terminal", status: this.interruptRequested ? "interrupted" : "cancelled" };
      case "error": {
        const error: ProviderTurnError = { message: last?.errorMessage ?? "The model provider reported an error." };
        // Pi answers an abort during a failing run with the error; an asked-for stop stays a stop.
        if (this.interruptRequested) return { kind: "terminal", status: "interrupted", error };
        return { kind: "error_pending", error };
      }
      case "length":
        return { kind: "terminal", status: "completed", warning: "The model stopped at its output token limit." };
      default:
        return { kind: "terminal", status: "completed" };
    }
  }

  /**
   * Ends the turn: closes open items, fails tool calls that never finished, emits the terminal
   * once. Returns false when it had already ended.
   */
  finish(status: TurnTerminalStatus, error?: ProviderTurnError): boolean {
    if (this.terminated) return false;
    this.terminated = true;
    if (this.interruptTimer) clearTimeout(this.interruptTimer);
    this.closeReasoning();
    this.closeMessage();
    for (const [itemId, tool] of this.tools) {
      if (tool.done) continue;
      tool.done = true;
      this.emit({ type: "tool_call.completed", turnId: this.turnId, itemId, status: status === "completed" ? "completed" : "failed" });
    }
    this.emit({
      type: "turn.terminal",
      turnId: this.turnId,
      status,
      ...(error !== undefined ? { error } : {}),
      ...(this.sawUsage ? { usage: { inputTokens: this.inputTokens, outputTokens: this.outputTokens } } : {}),
    });
    this.markEnded();
    return true;
  }

  private closeMessage(): void {
    if (this.message === null) return;
    if (this.message.text !== "") this.emit({ type: "message.completed", turnId: this.turnId, itemId: this.message.itemId, text: this.message.text });
    this.message = null;
  }

  private closeReasoning(): void {
    if (this.reasoning === null) return;
    if (this.reasoning.text !== "") this.emit({ type: "reasoning.completed", turnId: this.turnId, itemId: this.reasoning.itemId, text: this.reasoning.text });
    this.reasoning = null;
  }
}
