import { TurnLedger, type AdapterEvent, type ProviderTurnError, type ToolKind, type TurnTerminalStatus, type TurnUsage } from "@switchyard/sdk";
import type { RunEndedNotification, RunResult, SDKMessage, TokenUsage } from "./cursor-wire.js";

/** A Cursor tool call message (`type: "tool_call"`). */
type ToolCallMessage = Extract<SDKMessage, { type: "tool_call" }>;

/** Kind of a Cursor tool, from the public tool name the SDK reports. */
export function toolKindOf(name: string): ToolKind {
  switch (name) {
    case "shell":
      return "command";
    case "read":
    case "ls":
    case "readLints":
    case "readTodos":
      return "file_read";
    case "edit":
    case "write":
    case "delete":
    case "applyAgentDiff":
      return "file_change";
    case "grep":
    case "glob":
    case "semSearch":
      return "search";
    case "webSearch":
    case "webFetch":
      return "web";
    case "mcp":
      return "mcp";
    case "task":
      return "subagent";
    default:
      return "other";
  }
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function text(value: unknown): string | null {
  return typeof value === "string" && value.trim() !== "" ? value : null;
}

/** The MCP server and tool of an `mcp` call (`providerIdentifier`, `toolName`), when named. */
export function mcpToolOf(args: unknown): { readonly server: string; readonly tool: string } | null {
  const fields = record(args);
  const server = text(fields["providerIdentifier"]);
  const tool = text(fields["toolName"]);
  return server !== null && tool !== null ? { server, tool } : null;
}

/** The name a timeline shows: `mcp__<server>__<tool>` for MCP calls (as other harnesses report them), else Cursor's own. */
export function toolNameOf(message: Pick<ToolCallMessage, "name" | "args">): string {
  const mcp = message.name === "mcp" ? mcpToolOf(message.args) : null;
  return mcp !== null ? `mcp__${mcp.server}__${mcp.tool}` : message.name;
}

/** A one-line summary of a tool call for a timeline. */
export function toolTitleOf(name: string, args: unknown): string {
  const fields = record(args);
  if (name === "mcp") {
    const mcp = mcpToolOf(args);
    return mcp !== null ? `${mcp.server}/${mcp.tool}` : "mcp";
  }
  const subject = text(fields["command"]) ?? text(fields["path"]) ?? text(fields["filePath"]) ?? text(fields["pattern"]) ?? text(fields["globPattern"]) ?? text(fields["query"]) ?? text(fields["url"]) ?? text(fields["description"]);
  if (subject === null) return name;
  return name === "shell" ? subject : `${name} ${subject}`;
}

/** The status a tool result reports (`{status: "success" | "failure" | …, value}`), when it has one. */
function resultStatus(result: unknown): string | null {
  return text(record(result)["status"]);
}

/** A tool result as text: a command's output, an MCP tool's text content, else its JSON. */
export function toolOutputOf(result: unknown): string | undefined {
  if (result === undefined || result === null) return undefined;
  const value = record(result)["value"] ?? result;
  const fields = record(value);
  const stdout = typeof fields["stdout"] === "string" ? fields["stdout"] : null;
  const stderr = typeof fields["stderr"] === "string" ? fields["stderr"] : null;
  if (stdout !== null || stderr !== null) return [stdout ?? "", stderr ?? ""].filter((part) => part !== "").join("\n");
  if (Array.isArray(fields["content"])) {
    const parts = fields["content"].map((item) => {
      const entry = record(item);
      return text(record(entry["text"])["text"]) ?? text(entry["text"]) ?? "";
    });
    return parts.filter((part) => part !== "").join("\n");
  }
  if (typeof value === "string") return value;
  const error = text(fields["error"]) ?? text(fields["reason"]);
  return error ?? JSON.stringify(value);
}

/** A run's token usage in the spec's terms (Cursor's `inputTokens` leave cache reads and writes out: its total is the sum of all four). */
export function turnUsageOf(usage: TokenUsage): TurnUsage {
  const figures: { -readonly [K in keyof TurnUsage]?: TurnUsage[K] } = {};
  if (typeof usage.inputTokens === "number") figures.inputTokens = usage.inputTokens;
  if (typeof usage.outputTokens === "number") figures.outputTokens = usage.outputTokens;
  if (typeof usage.cacheReadTokens === "number") figures.cacheReadInputTokens = usage.cacheReadTokens;
  if (typeof usage.cacheWriteTokens === "number") figures.cacheCreationInputTokens = usage.cacheWriteTokens;
  return figures;
}

/** How a Cursor run's result ends the host's turn. */
export function terminalOf(ended: RunEndedNotification, interruptRequested: boolean): { status: TurnTerminalStatus; error?: ProviderTurnError } {
  const result: RunResult | undefined = ended.result;
  if (result === undefined) {
    if (interruptRequested) return { status: "interrupted" };
    return { status: "failed", error: { code: ended.error?.code ?? ended.error?.kind ?? "cursor_error", message: ended.error?.message ?? "The Cursor run ended without a result." } };
  }
  switch (result.status) {
    case "finished":
      return { status: "completed" };
    case "cancelled":
      // `run.cancel()` is the interrupt; a run cancelled from elsewhere (another client of the agent) was cancelled, not interrupted.
      return { status: interruptRequested ? "interrupted" : "cancelled" };
    default:
      if (interruptRequested) return { status: "interrupted" };
      return { status: "failed", error: { code: result.error?.code ?? "cursor_error", message: result.error?.message ?? "Cursor reported the run as failed." } };
  }
}

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
  readonly #subagents = new Set<string>();

  constructor(
    turnId: string,
    private readonly emit: (event: AdapterEvent) => void,
  ) {
    this.ledger = new TurnLedger(turnId, emit);
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
        this.#subagents.add(message.call_id);
        const description = text(record(message.args)["description"]);
        this.emit({ type: "subagent.observed", turnId: this.turnId, nativeId: message.call_id, status: "running", ...(description !== null ? { title: description } : {}) });
      }
      return;
    }
    const status = resultStatus(message.result);
    const failed = message.status === "error" || (status !== null && status !== "success");
    const output = toolOutputOf(message.result);
    this.ledger.toolCompleted(message.call_id, failed ? "failed" : "completed", output);
    if (this.#subagents.delete(message.call_id)) {
      this.emit({
        type: "subagent.observed",
        turnId: this.turnId,
        nativeId: message.call_id,
        status: failed ? "failed" : "completed",
        ...(output !== undefined && output !== "" ? { summary: output.slice(0, 2_000) } : {}),
      });
    }
  }

  /** Ends the turn once (the ledger settles what is still open). */
  finish(status: TurnTerminalStatus, error?: ProviderTurnError): boolean {
    if (this.interruptTimer !== null) clearTimeout(this.interruptTimer);
    for (const id of this.#subagents) this.emit({ type: "subagent.observed", turnId: this.turnId, nativeId: id, status: status === "completed" ? "completed" : "failed" });
    this.#subagents.clear();
    return this.ledger.finish(status, error);
  }
}
