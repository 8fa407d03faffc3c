/**
 * The OpenCode protocol as this driver speaks it: `opencode serve` (opencode-ai 1.18.33) over
 * HTTP and its `/event` server-sent events, through `@opencode-ai/sdk` v2 (1.19.3), whose types
 * are generated from the server's OpenAPI document. Only the shapes the adapter reads are named
 * here; the rest stays the SDK's.
 */
import type {
  AssistantMessage,
  Event,
  Message,
  Part,
  PermissionRequest,
  Provider,
  QuestionInfo,
  QuestionRequest,
  StepFinishPart,
  TextPart,
  ToolPart,
} from "@opencode-ai/sdk/v2";

export type { OpencodeClient } from "@opencode-ai/sdk/v2";
export type {
  AssistantMessage,
  Event,
  Message,
  Part,
  PermissionRequest,
  Provider,
  QuestionInfo,
  QuestionRequest,
  StepFinishPart,
  TextPart,
  ToolPart,
};

/** What `permission.reply` takes: run it once, for the session, or refuse. */
export type PermissionReply = "once" | "always" | "reject";

/** An error OpenCode puts on an assistant message or a `session.error` event. */
export type OpenCodeError = NonNullable<AssistantMessage["error"]>;

/** The name OpenCode gives an aborted message's error (`session.abort`). */
export const ABORTED_ERROR_NAME = "MessageAbortedError";

/**
 * Events that carry no information for a turn. `plugin.added` fires once per bundled plugin at
 * every start (45 of them in 1.18.33), the rest are UI and catalog notices.
 */
export const IGNORED_EVENT_TYPES: ReadonlySet<string> = new Set([
  "plugin.added",
  "server.heartbeat",
  "catalog.updated",
  "reference.updated",
  "integration.updated",
  "session.diff",
  "file.watcher.updated",
  "lsp.updated",
  "todo.updated",
]);

/**
 * The metadata the adapter puts on the text part of every prompt it sends, so the conversation
 * itself records which host turn each user message belongs to (forks cut by it, across restarts).
 */
export interface SwitchyardPartMetadata {
  /** The host turn the message was sent in (the first prompt or a steer). */
  readonly switchyardTurnId: string;
}

/** The host turn id a part's metadata names, or null. */
export function switchyardTurnIdOf(part: { readonly metadata?: Record<string, unknown> | undefined }): string | null {
  const value = part.metadata?.["switchyardTurnId"];
  return typeof value === "string" ? value : null;
}

/** The usage figures of a `step-finish` part. */
export type StepTokens = StepFinishPart["tokens"];

/** The line `opencode serve` prints once it accepts connections. */
export const LISTENING_LINE = /opencode server listening on (http:\/\/\S+)/;
