/**
 * The wire-independent view of one model request: every wire API (Responses, Chat Completions,
 * Anthropic Messages, Gemini) is parsed into these types, and the script decides from them.
 */

/** The four wire APIs the scripted model server speaks. */
export type WireApiKind = "openai-responses" | "openai-chat-completions" | "anthropic-messages" | "gemini";

/** A JSON Schema (or Gemini OpenAPI-style schema) as sent by a harness; read loosely. */
export type JsonSchema = Record<string, unknown>;

/** A tool the harness offered to the model in this request. */
export interface OfferedTool {
  /** The name the model must call it by (for a Codex MCP tool: the bare MCP tool name, e.g. `echo`). */
  name: string;
  /** Responses API namespace the tool sits in (Codex ≥0.17x offers MCP tools as `mcp__<server>`). */
  namespace?: string;
  /** `namespace__name` when namespaced, else `name`; what tool suffixes are matched against. */
  qualifiedName: string;
  /** `function` takes JSON arguments; `custom` is a Responses freeform tool (Codex `apply_patch`) taking raw text. */
  kind: "function" | "custom";
  /** The tool's parameter schema, when it declares one. */
  parameters?: JsonSchema;
}

/** A tool call the model made earlier in the conversation. */
export interface ConversationToolCall {
  /** Call id as the wire API carries it (absent for Gemini calls without ids). */
  id?: string;
  /** Called tool name. */
  name: string;
  /** Responses namespace of the called tool, if any. */
  namespace?: string;
}

/** One entry of the conversation history, with system and developer content already dropped. */
export type ConversationItem =
  | { type: "user"; text: string }
  | { type: "assistant"; text: string; toolCalls: ConversationToolCall[] }
  | { type: "tool_result"; callId?: string; toolName?: string; output: string };

/** A model request parsed from its wire format. */
export interface ParsedModelRequest {
  /** Which wire API the request used. */
  api: WireApiKind;
  /** The model id the harness asked for. */
  model?: string;
  /** Whether the harness asked for a streamed (SSE) answer. */
  stream: boolean;
  /** The history, oldest first. */
  items: ConversationItem[];
  /** Tools offered in this request, flattened (namespaces resolved). */
  tools: OfferedTool[];
  /** System / developer / instructions text, joined (kept for side-call detection and assertions). */
  systemText: string;
  /** Set when the request constrains the answer to JSON with a schema (Gemini router and next-speaker calls). */
  jsonSchema?: JsonSchema;
  /** Chat Completions `stream_options.include_usage`: send a usage chunk before `[DONE]`. */
  includeUsage?: boolean;
}

/** A tool result that came back to the model. */
export interface ToolResultView {
  /** The tool name (resolved through the call id when the wire API does not repeat it). */
  toolName: string;
  /** The call id, when the wire API carries one. */
  callId?: string;
  /** The raw output text as the harness sent it. */
  output: string;
  /** The output reduced to its core (wrappers stripped, whitespace collapsed, truncated). */
  snippet: string;
}

/** Where the current turn stands, derived statelessly from the request history. */
export interface TurnView {
  /** The last real user text (injected context stripped, JSON quoting undone); `undefined` when none. */
  userText?: string;
  /** The raw text of that user message as sent. */
  rawUserText?: string;
  /** How many tool rounds happened since that user message: the index of the script step to play. */
  stepIndex: number;
  /** The tool results that end the request (empty when the request does not end with tool results). */
  trailingToolResults: ToolResultView[];
}

/**
 * Tags whose whole element is context a harness or Switchyard injected into a user message, not
 * text the user typed. They are removed before looking for directives.
 */
export const INJECTED_CONTEXT_TAGS: readonly string[] = [
  "switchyard_instructions",
  "system-reminder",
  "environment_context",
  "user_instructions",
  "INSTRUCTIONS",
  "turn_aborted",
  "session_context",
  "user_shell_command",
  // Claude Code records a local command (`/model` after `setModel`) before the next prompt.
  "local-command-caveat",
  "command-name",
  "command-message",
  "command-args",
  "local-command-stdout",
  "local-command-stderr",
];

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * What Claude Code writes when a turn is interrupted (`[Request interrupted by user]`, `… for
 * tool use]`). It sends the next prompt merged with the interrupted one and this marker into one
 * user message; a model reads what follows the last marker as the user's current request.
 */
export const INTERRUPTED_REQUEST_MARKER = /\[Request interrupted by user[^\]\n]*\]/g;

/** The text after the last interrupt marker (the whole text when there is none). */
function afterLastInterrupt(text: string): string {
  let end = -1;
  for (const match of text.matchAll(INTERRUPTED_REQUEST_MARKER)) end = match.index + match[0].length;
  return end === -1 ? text : text.slice(end);
}

/**
 * Reduces a user message to what the user typed: undoes `opencode run`'s JSON quoting, keeps only
 * what follows Claude Code's last interrupt marker ({@link INTERRUPTED_REQUEST_MARKER}), removes
 * injected context elements ({@link INJECTED_CONTEXT_TAGS}, Codex's `# AGENTS.md instructions`
 * header, Gemini CLI's start-up context message) and treats a message that is a single
 * `<tag>…</tag>` element as injected. Returns the trimmed remainder (may be empty).
 */
export function cleanUserText(raw: string, extraTags: readonly string[] = []): string {
  let text = afterLastInterrupt(unquoteJsonString(raw));
  for (const tag of [...INJECTED_CONTEXT_TAGS, ...extraTags]) {
    const t = escapeRegExp(tag);
    text = text.replace(new RegExp(`<${t}(?:\\s[^>]*)?>[\\s\\S]*?</${t}>`, "g"), "");
  }
  text = text.replace(/^# AGENTS\.md instructions for .*$/gm, "");
  // Gemini CLI opens every session with a synthetic user message describing the environment.
  if (/^\s*This is the Gemini CLI\. We are setting up the context for our chat\./.test(text)) return "";
  if (/^\s*<([A-Za-z_][\w-]*)(?:\s[^>]*)?>[\s\S]*<\/\1>\s*$/.test(text)) return "";
  return text.trim();
}

/** `"\"hello\""` → `hello`; anything that is not a JSON string literal is returned unchanged. */
export function unquoteJsonString(text: string): string {
  const trimmed = text.trim();
  if (trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"')) {
    try {
      const value: unknown = JSON.parse(trimmed);
      if (typeof value === "string") return value;
    } catch {
      // not a JSON literal
    }
  }
  return text;
}

/**
 * The core of a tool output, for replies that prove the round trip: unwraps Gemini's
 * `{"output": …}` / `<untrusted_context>` wrappers, its shell tool's `Output:` / `Process Group PGID`
 * lines and Codex's `exec_command` header (`Wall time…\nOutput:`), collapses whitespace and truncates to `maxLength`.
 */
export function toolOutputSnippet(output: string, maxLength = 400): string {
  let text = output;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
      const record = parsed as Record<string, unknown>;
      const inner = record["output"] ?? record["error"] ?? record["content"];
      if (typeof inner === "string") text = inner;
    }
  } catch {
    // plain text output
  }
  text = text.replace(/<\/?untrusted_context>/g, "");
  const marker = text.lastIndexOf("Output:\n");
  if (marker !== -1 && /(Wall time|Process exited|Chunk ID)/.test(text.slice(0, marker))) {
    text = text.slice(marker + "Output:\n".length);
  }
  // Gemini CLI's shell tool: "Output: <text>\nProcess Group PGID: <n>".
  text = text.replace(/^\s*Output: /, "").replace(/\n\s*Process Group PGID: \d+\s*$/, "");
  text = text.replace(/\s+/g, " ").trim();
  return text.length > maxLength ? `${text.slice(0, maxLength)}…` : text;
}

/**
 * Finds the last real user message and counts the tool rounds after it. A user message whose
 * cleaned text is empty (pure injected context, e.g. Codex's `<environment_context>`) is skipped.
 * Tool rounds are counted as runs of consecutive tool results, so a step index is stable however a
 * wire API splits a round into items.
 */
export function resolveTurn(items: readonly ConversationItem[], extraTags: readonly string[] = []): TurnView {
  let userIndex = -1;
  let userText: string | undefined;
  let rawUserText: string | undefined;
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item?.type !== "user") continue;
    const cleaned = cleanUserText(item.text, extraTags);
    if (cleaned === "") continue;
    userIndex = i;
    userText = cleaned;
    rawUserText = item.text;
    break;
  }
  const after = items.slice(userIndex + 1);
  const callNames = new Map<string, string>();
  for (const item of items) {
    if (item.type !== "assistant") continue;
    for (const call of item.toolCalls) {
      if (call.id !== undefined) {
        callNames.set(call.id, call.namespace ? `${call.namespace}__${call.name}` : call.name);
      }
    }
  }
  let stepIndex = 0;
  let previous: ConversationItem["type"] | undefined;
  for (const item of after) {
    if (item.type === "tool_result" && previous !== "tool_result") stepIndex++;
    previous = item.type;
  }
  const trailingToolResults: ToolResultView[] = [];
  for (let i = items.length - 1; i > userIndex; i--) {
    const item = items[i];
    // Injected context after the results (Claude's <system-reminder> text) does not end the run.
    if (item?.type === "user") continue;
    if (item?.type !== "tool_result") break;
    trailingToolResults.unshift({
      toolName: item.toolName ?? (item.callId !== undefined ? callNames.get(item.callId) : undefined) ?? "tool",
      ...(item.callId !== undefined ? { callId: item.callId } : {}),
      output: item.output,
      snippet: toolOutputSnippet(item.output),
    });
  }
  return {
    ...(userText !== undefined ? { userText } : {}),
    ...(rawUserText !== undefined ? { rawUserText } : {}),
    stepIndex,
    trailingToolResults,
  };
}

/** Joins the text of content parts in any of the wire formats' part shapes. */
export function textOfParts(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const texts: string[] = [];
  for (const part of content) {
    if (typeof part === "string") texts.push(part);
    else if (part && typeof part === "object") {
      const record = part as Record<string, unknown>;
      if (typeof record["text"] === "string") texts.push(record["text"]);
      else if (record["type"] === "tool_reference" && typeof record["tool_name"] === "string") {
        texts.push(`[tool_reference ${record["tool_name"]}]`);
      }
    }
  }
  return texts.join("\n");
}
