import type { ThreadItem } from "@openai/codex-sdk";
import type { McpEndpointGrant } from "@switchyard/sdk";
import {
  clipOutput,
  commandTitle,
  mcpToolCallShape,
  type ToolCallEnd,
  type ToolCallShape,
} from "../shared/codex-tool-calls.js";

/** The `tool_call.started` of a `codex exec` item, or null for items that are not tool calls. */
export function execToolCallStart(item: ThreadItem, grant: McpEndpointGrant | null): ToolCallShape | null {
  switch (item.type) {
    case "command_execution":
      return {
        kind: "command",
        name: "exec_command",
        title: commandTitle({ command: item.command }),
        input: { command: item.command },
      };
    case "file_change":
      return {
        kind: "file_change",
        name: "apply_patch",
        title: item.changes.map((change) => change.path).join(", ") || "file change",
        input: { changes: item.changes },
      };
    case "mcp_tool_call":
      return mcpToolCallShape(item.server, item.tool, item.arguments, grant);
    case "web_search":
      return { kind: "web", name: "web_search", title: item.query || "web search" };
    default:
      return null;
  }
}

/** How a completed `codex exec` tool item ended, or null while it runs. */
export function execToolCallEnd(item: ThreadItem): ToolCallEnd | null {
  switch (item.type) {
    case "command_execution":
      if (item.status === "in_progress") return null;
      return { status: item.status, ...(item.aggregated_output ? { output: clipOutput(item.aggregated_output) } : {}) };
    case "file_change":
      return { status: item.status, output: item.changes.map((change) => `${change.kind} ${change.path}`).join("\n") };
    case "mcp_tool_call": {
      if (item.status === "in_progress") return null;
      if (item.status === "failed") return { status: "failed", ...(item.error ? { output: item.error.message } : {}) };
      const text = (item.result?.content ?? [])
        .map((block) => (block.type === "text" ? block.text : JSON.stringify(block)))
        .join("\n");
      return { status: "completed", ...(text ? { output: clipOutput(text) } : {}) };
    }
    case "web_search":
      return { status: "completed" };
    default:
      return null;
  }
}
