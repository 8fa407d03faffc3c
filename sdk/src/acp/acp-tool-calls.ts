import type * as acp from "@agentclientprotocol/sdk/unstable";
import type { ToolKind } from "@switchyard/core/spec";

const MCP_NAME = /^mcp__(.+?)__(.+)$/;

/** The MCP server of a tool call named `mcp__<server>__<tool>`, if it is one. */
export function mcpServerOf(toolCall: { readonly name?: string | null }): { server: string; tool: string } | null {
  const match = toolCall.name ? MCP_NAME.exec(toolCall.name) : null;
  return match ? { server: match[1] as string, tool: match[2] as string } : null;
}

/** Switchyard's tool kind for an ACP tool call. */
export function toolKindOf(toolCall: acp.ToolCall | acp.ToolCallUpdate): ToolKind {
  if (mcpServerOf(toolCall)) return "mcp";
  switch (toolCall.kind) {
    case "read":
      return "file_read";
    case "edit":
    case "delete":
    case "move":
      return "file_change";
    case "search":
      return "search";
    case "execute":
      return "command";
    case "fetch":
      return "web";
    default:
      return "other";
  }
}

const MAX_OUTPUT_CHARS = 16_000;

/** A tool call's output as text: its text content blocks and diffs, else its raw output. */
export function toolOutputText(toolCall: acp.ToolCall | acp.ToolCallUpdate): string | undefined {
  const parts: string[] = [];
  for (const item of toolCall.content ?? []) {
    if (item.type === "content" && item.content.type === "text") parts.push(item.content.text);
    else if (item.type === "diff") parts.push(`--- ${item.path}\n${item.newText}`);
  }
  let output = parts.length > 0 ? parts.join("\n") : undefined;
  if (output === undefined && toolCall.rawOutput !== undefined && toolCall.rawOutput !== null) {
    output = typeof toolCall.rawOutput === "string" ? toolCall.rawOutput : JSON.stringify(toolCall.rawOutput);
  }
  if (output !== undefined && output.length > MAX_OUTPUT_CHARS) output = `${output.slice(0, MAX_OUTPUT_CHARS)}\n…[truncated]`;
  return output;
}

/** A plan update as a markdown checklist. */
export function planMarkdown(entries: readonly acp.PlanEntry[]): string {
  return entries.map((entry) => `- [${entry.status === "completed" ? "x" : " "}] ${entry.content}`).join("\n");
}
