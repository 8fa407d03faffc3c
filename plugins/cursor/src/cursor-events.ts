/**
 * Cursor SDK run messages in the spec's terms, as pure functions: tool kinds, names, titles and
 * outputs, usage, and how a run's result ends the turn. The turn's state is in cursor-turn.ts.
 */
import type { ProviderTurnError, ToolKind, TurnTerminalStatus, TurnUsage } from "@switchyard/sdk";
import type { RunEndedNotification, RunResult, SDKMessage, TokenUsage } from "./cursor-wire.js";

/** A Cursor tool call message (`type: "tool_call"`). */
export type ToolCallMessage = Extract<SDKMessage, { type: "tool_call" }>;

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
  const subject =
    text(fields["command"]) ??
    text(fields["path"]) ??
    text(fields["filePath"]) ??
    text(fields["pattern"]) ??
    text(fields["globPattern"]) ??
    text(fields["query"]) ??
    text(fields["url"]) ??
    text(fields["description"]);
  if (subject === null) return name;
  return name === "shell" ? subject : `${name} ${subject}`;
}

/** The status a tool result reports (`{status: "success" | "failure" | …, value}`), when it has one. */
function resultStatus(result: unknown): string | null {
  return text(record(result)["status"]);
}

/** Whether a completed tool call failed: the SDK's `error` status, or a result that is not a success. */
export function toolCallFailed(message: Pick<ToolCallMessage, "status" | "result">): boolean {
  const status = resultStatus(message.result);
  return message.status === "error" || (status !== null && status !== "success");
}

/** The description a `task` call (a Cursor sub-agent) gives its work, when it gives one. */
export function subagentTitleOf(args: unknown): string | null {
  return text(record(args)["description"]);
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
export function terminalOf(
  ended: RunEndedNotification,
  interruptRequested: boolean,
): { status: TurnTerminalStatus; error?: ProviderTurnError } {
  const result: RunResult | undefined = ended.result;
  if (result === undefined) {
    if (interruptRequested) return { status: "interrupted" };
    return {
      status: "failed",
      error: {
        code: ended.error?.code ?? ended.error?.kind ?? "cursor_error",
        message: ended.error?.message ?? "The Cursor run ended without a result.",
      },
    };
  }
  switch (result.status) {
    case "finished":
      return { status: "completed" };
    case "cancelled":
      // `run.cancel()` is the interrupt; a run cancelled from elsewhere (another client of the agent) was cancelled, not interrupted.
      return { status: interruptRequested ? "interrupted" : "cancelled" };
    default:
      if (interruptRequested) return { status: "interrupted" };
      return {
        status: "failed",
        error: {
          code: result.error?.code ?? "cursor_error",
          message: result.error?.message ?? "Cursor reported the run as failed.",
        },
      };
  }
}
