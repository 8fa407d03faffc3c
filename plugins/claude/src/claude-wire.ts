/**
 * The Claude Agent SDK's protocol types, as this plugin uses them. The SDK ships its own
 * declarations (`@anthropic-ai/claude-agent-sdk` 0.3.337), so they are re-exported rather than
 * generated; the content blocks are narrowed here to the fields the adapter reads.
 */
import type * as ClaudeAgentSdk from "@anthropic-ai/claude-agent-sdk";
import { importHarnessPackage, type HarnessSearch } from "@switchyard/sdk";

export type {
  CanUseTool,
  EffortLevel,
  ForkSessionResult,
  McpHttpServerConfig,
  McpServerConfig,
  ModelInfo,
  ModelUsage,
  Options as ClaudeQueryOptions,
  PermissionMode,
  PermissionResult,
  PermissionUpdate,
  Query as ClaudeQuery,
  SDKAssistantMessage,
  SDKControlInitializeResponse,
  SDKMessage,
  SDKPartialAssistantMessage,
  SDKResultMessage,
  SDKSystemMessage,
  SDKUserMessage,
  SessionMessage,
  SpawnedProcess,
  SpawnOptions as ClaudeSpawnOptions,
} from "@anthropic-ai/claude-agent-sdk";

/** The SDK module. */
export type ClaudeSdk = typeof ClaudeAgentSdk;

/** The SDK version this plugin is built and tested against. */
export const CLAUDE_AGENT_SDK_VERSION = "0.3.337";

const loading = new Map<string, Promise<ClaudeSdk>>();

/**
 * Loads the SDK on first use, from where a search found it (the user's install, or next to the
 * plugin: the plugin does not depend on it, so never by its bare name). The module is large, so
 * a host that never opens a Claude session never pays for importing it.
 */
export function loadClaudeSdk(search: HarnessSearch): Promise<ClaudeSdk> {
  const key = search.found?.packageDir ?? "";
  let pending = loading.get(key);
  if (pending === undefined) {
    pending = importHarnessPackage<ClaudeSdk>(search).catch((error: unknown) => {
      loading.delete(key);
      throw error;
    });
    loading.set(key, pending);
  }
  return pending;
}

/** A text block of an assistant or user message. */
export interface TextBlock {
  readonly type: "text";
  readonly text: string;
}

/** A thinking block of an assistant message. */
export interface ThinkingBlock {
  readonly type: "thinking";
  readonly thinking: string;
}

/** A tool call the model made. */
export interface ToolUseBlock {
  readonly type: "tool_use" | "server_tool_use" | "mcp_tool_use";
  readonly id: string;
  readonly name: string;
  readonly input: unknown;
}

/** A tool's result, sent back in a user message. */
export interface ToolResultBlock {
  readonly type: "tool_result";
  readonly tool_use_id: string;
  readonly content?: string | readonly { readonly type: string; readonly text?: string }[];
  readonly is_error?: boolean;
}

/** Any content block, narrowed by `type`. */
export type ContentBlock = TextBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock | { readonly type: string };

/** The content blocks of a message's `content` (a string becomes one text block). */
export function contentBlocks(content: unknown): ContentBlock[] {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  return Array.isArray(content)
    ? (content.filter(
        (block) => typeof block === "object" && block !== null && typeof block.type === "string",
      ) as ContentBlock[])
    : [];
}

/** True for a text block. */
export function isTextBlock(block: ContentBlock): block is TextBlock {
  return block.type === "text" && typeof (block as TextBlock).text === "string";
}

/** True for a thinking block. */
export function isThinkingBlock(block: ContentBlock): block is ThinkingBlock {
  return block.type === "thinking" && typeof (block as ThinkingBlock).thinking === "string";
}

/** True for a tool call. */
export function isToolUseBlock(block: ContentBlock): block is ToolUseBlock {
  return (
    (block.type === "tool_use" || block.type === "server_tool_use" || block.type === "mcp_tool_use") &&
    typeof (block as ToolUseBlock).id === "string"
  );
}

/** True for a tool result. */
export function isToolResultBlock(block: ContentBlock): block is ToolResultBlock {
  return block.type === "tool_result" && typeof (block as ToolResultBlock).tool_use_id === "string";
}

/** The text of a tool result's content. */
export function toolResultText(block: ToolResultBlock): string {
  if (typeof block.content === "string") return block.content;
  return (block.content ?? []).map((part) => (typeof part.text === "string" ? part.text : "")).join("\n");
}

/**
 * The text Claude Code records when a turn is interrupted. It is written as a user message, and
 * the next prompt is sent to the model merged with it (and with the interrupted prompt).
 */
export const INTERRUPT_MARKER = "[Request interrupted by user";
