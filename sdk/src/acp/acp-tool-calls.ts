import type * as acp from "@agentclientprotocol/sdk/unstable";
import type { ToolKind } from "@switchyard/spec";

const MCP_NAME = /^mcp__(.+?)__(.+)$/;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** What the shared adapter reads from a tool call to tell whether it is an MCP call. @public */
export type McpToolCallShape = Pick<acp.ToolCallUpdate, "toolCallId" | "title" | "rawInput"> & {
  readonly name?: string | null;
};

/**
 * The MCP server (and tool) of a tool call, if it is a call to an MCP server.
 *
 * ACP has no field that says "this is an MCP call", and agents spell it differently, so this
 * reads the shapes agents are known to send (wire data, never the agent's name):
 * - a `name` (or title) `mcp__<server>__<tool>`, for any server;
 * - for a server the client injected (`knownServers`, e.g. `switchyard`): `rawInput`
 *   `{server, tool}`; a title `Tool: <server>/<tool>` or `<server>/<tool>`; a title
 *   `<tool> (<server> MCP Server)`; a tool call id or title `mcp_<server>_<tool>…`; a title
 *   `<server>_<tool>`.
 * The looser spellings are matched only against injected server names, so a native tool is
 * never taken for an MCP call by accident of its name.
 * @public
 */
export function mcpServerOf(
  toolCall: McpToolCallShape,
  knownServers: readonly string[] = [],
): { server: string; tool: string } | null {
  for (const candidate of [toolCall.name, toolCall.title]) {
    const match = candidate ? MCP_NAME.exec(candidate) : null;
    if (match) return { server: match[1] as string, tool: match[2] as string };
  }
  const raw = toolCall.rawInput;
  if (typeof raw === "object" && raw !== null && !Array.isArray(raw)) {
    const { server, tool } = raw as { server?: unknown; tool?: unknown };
    if (typeof server === "string" && typeof tool === "string" && knownServers.includes(server))
      return { server, tool };
  }
  const title = toolCall.title ?? "";
  for (const server of knownServers) {
    if (server.length === 0) continue;
    const s = escapeRegExp(server);
    const patterns: [RegExp, string][] = [
      [new RegExp(`^(?:Tool: )?${s}/(\\S+)$`), title],
      [new RegExp(`^(\\S+) \\(${s} MCP Server\\)$`), title],
      [new RegExp(`^mcp_${s}_(.+?)(?:__|$)`), toolCall.toolCallId],
      [new RegExp(`^mcp_${s}_(\\S+)$`), title],
      [new RegExp(`^${s}_(\\S+)$`), title],
    ];
    for (const [pattern, text] of patterns) {
      const match = pattern.exec(text);
      if (match) return { server, tool: match[1] as string };
    }
  }
  return null;
}

/** Switchyard's tool kind for an ACP tool call; `knownServers` are the MCP servers the client injected. @public */
export function toolKindOf(
  toolCall: acp.ToolCall | acp.ToolCallUpdate,
  knownServers: readonly string[] = [],
): ToolKind {
  if (mcpServerOf(toolCall, knownServers)) return "mcp";
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

/** A tool call's output as text: its text content blocks and diffs, else its raw output. @public */
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
  if (output !== undefined && output.length > MAX_OUTPUT_CHARS)
    output = `${output.slice(0, MAX_OUTPUT_CHARS)}\n…[truncated]`;
  return output;
}

/** A plan update as a markdown checklist. @public */
export function planMarkdown(entries: readonly acp.PlanEntry[]): string {
  return entries.map((entry) => `- [${entry.status === "completed" ? "x" : " "}] ${entry.content}`).join("\n");
}
