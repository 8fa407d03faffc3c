import type { McpEndpointGrant } from "@switchyard/sdk";
import type { v2 } from "../codex-wire.js";
import {
  clipOutput,
  commandTitle,
  mcpToolCallShape,
  type ToolCallEnd,
  type ToolCallShape,
} from "../shared/codex-tool-calls.js";

function mcpResultText(result: v2.McpToolCallResult | null): string | undefined {
  if (result === null) return undefined;
  const texts = result.content
    .map((block) =>
      typeof block === "object" && block !== null && (block as { type?: unknown }).type === "text"
        ? String((block as { text?: unknown }).text ?? "")
        : JSON.stringify(block),
    )
    .filter((text) => text.length > 0);
  if (texts.length > 0) return clipOutput(texts.join("\n"));
  return result.structuredContent === null ? undefined : clipOutput(JSON.stringify(result.structuredContent));
}

function collabToolName(tool: v2.CollabAgentTool): string {
  return tool.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** The `tool_call.started` of a tool item, or null for items that are not tool calls. */
export function toolCallStart(item: v2.ThreadItem, grant: McpEndpointGrant | null): ToolCallShape | null {
  switch (item.type) {
    case "commandExecution":
      return {
        kind: "command",
        name: "exec_command",
        title: commandTitle(item),
        input: { command: item.command, cwd: item.cwd },
      };
    case "fileChange":
      return {
        kind: "file_change",
        name: "apply_patch",
        title: item.changes.map((change) => change.path).join(", ") || "file change",
        input: { changes: item.changes.map((change) => ({ path: change.path, kind: change.kind.type })) },
      };
    case "mcpToolCall":
      return mcpToolCallShape(item.server, item.tool, item.arguments, grant);
    case "dynamicToolCall":
      return {
        kind: "other",
        name: item.namespace ? `${item.namespace}.${item.tool}` : item.tool,
        title: item.tool,
        input: item.arguments,
      };
    case "collabAgentToolCall":
      return {
        kind: "subagent",
        name: collabToolName(item.tool),
        title: item.prompt ?? collabToolName(item.tool),
        input: { receiverThreadIds: item.receiverThreadIds },
      };
    case "webSearch":
      return { kind: "web", name: "web_search", title: item.query || "web search" };
    case "imageView":
      return { kind: "file_read", name: "view_image", title: item.path };
    default:
      return null;
  }
}

/** How a completed tool item ended, or null when it is still running (or not a tool). */
export function toolCallEnd(item: v2.ThreadItem): ToolCallEnd | null {
  switch (item.type) {
    case "commandExecution": {
      if (item.status === "inProgress") return null;
      const output = item.aggregatedOutput ?? undefined;
      return { status: item.status, ...(output ? { output: clipOutput(output) } : {}) };
    }
    case "fileChange": {
      if (item.status === "inProgress") return null;
      const diff = item.changes.map((change) => `--- ${change.path}\n${change.diff}`).join("\n");
      return { status: item.status, ...(diff ? { output: clipOutput(diff) } : {}) };
    }
    case "mcpToolCall": {
      if (item.status === "inProgress") return null;
      const output = item.status === "failed" ? item.error?.message : mcpResultText(item.result);
      return { status: item.status, ...(output !== undefined ? { output } : {}) };
    }
    case "dynamicToolCall": {
      if (item.status === "inProgress") return null;
      const output = (item.contentItems ?? [])
        .map((content) => (content.type === "inputText" ? content.text : `[${content.type}]`))
        .join("\n");
      return {
        status: item.status === "completed" ? "completed" : "failed",
        ...(output ? { output: clipOutput(output) } : {}),
      };
    }
    case "collabAgentToolCall":
      if (item.status === "inProgress") return null;
      return {
        status: item.status === "completed" ? "completed" : "failed",
        ...(item.receiverThreadIds.length > 0 ? { output: item.receiverThreadIds.join(", ") } : {}),
      };
    case "webSearch":
    case "imageView":
      return { status: "completed" };
    default:
      return null;
  }
}

/** The reasoning text of a reasoning item (its summary, else its raw content). */
export function reasoningText(item: Extract<v2.ThreadItem, { type: "reasoning" }>): string {
  return (item.summary.length > 0 ? item.summary : item.content).join("\n\n");
}

/** The text of a user message item. */
export function userMessageText(item: Extract<v2.ThreadItem, { type: "userMessage" }>): string {
  return item.content.map((part) => (part.type === "text" ? part.text : "")).join("");
}
