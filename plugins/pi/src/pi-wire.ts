/**
 * The subset of `pi --mode rpc` (1.6.0, and 0.73.1) this plugin speaks: JSONL over stdio, one JSON object
 * per `\n`-terminated line. Commands go to stdin and may carry an `id`; responses echo it;
 * events carry none. Shapes follow Pi's `modes/rpc/rpc-types.d.ts` and the agent event types of
 * `@earendil-works/pi-agent-core`; every field read from the wire is decoded defensively, because
 * a newer Pi may add or drop fields.
 */

/** Commands the adapter sends. */
export type PiRpcCommand =
  | {
      readonly id?: string;
      readonly type: "prompt";
      readonly message: string;
      readonly streamingBehavior?: "steer" | "followUp";
    }
  | { readonly id?: string; readonly type: "steer"; readonly message: string }
  | { readonly id?: string; readonly type: "abort" }
  | { readonly id?: string; readonly type: "get_state" }
  | { readonly id?: string; readonly type: "get_messages" }
  | { readonly id?: string; readonly type: "clone" }
  | { readonly id?: string; readonly type: "switch_session"; readonly sessionPath: string };

/** The answer to an `extension_ui_request` dialog (`select`, `confirm`, `input`, `editor`). */
export type PiExtensionUiResponse =
  | { readonly type: "extension_ui_response"; readonly id: string; readonly value: string }
  | { readonly type: "extension_ui_response"; readonly id: string; readonly confirmed: boolean }
  | { readonly type: "extension_ui_response"; readonly id: string; readonly cancelled: true };

/** Every line the adapter writes. */
export type PiRpcOutbound = PiRpcCommand | PiExtensionUiResponse;

/** A command's response. `data` depends on the command; failures carry `error`. */
export type PiRpcResponse =
  | {
      readonly type: "response";
      readonly id?: string;
      readonly command: string;
      readonly success: true;
      readonly data?: unknown;
    }
  | {
      readonly type: "response";
      readonly id?: string;
      readonly command: string;
      readonly success: false;
      readonly error: string;
    };

/**
 * What Pi 0.99+ says became of a `prompt`, `steer` or `follow_up` (`data.disposition`):
 * `started` a run, `queued` it into the running one, or `handled` (an extension command or input
 * handler consumed it: no model sees it). Null from an older Pi, which says nothing.
 */
export type PiDisposition = "started" | "queued" | "handled";

/** The disposition of a command's response data, or null. */
export function dispositionOf(data: unknown): PiDisposition | null {
  const disposition =
    typeof data === "object" && data !== null ? (data as { readonly disposition?: unknown }).disposition : undefined;
  return disposition === "started" || disposition === "queued" || disposition === "handled" ? disposition : null;
}

/** `get_state` data (the fields the adapter reads). */
export interface PiSessionState {
  readonly model?: { readonly id?: string; readonly provider?: string };
  readonly isStreaming: boolean;
  readonly sessionFile?: string;
  readonly sessionId: string;
  readonly messageCount: number;
  readonly pendingMessageCount: number;
}

/** Text content of a message. */
export interface PiTextContent {
  readonly type: "text";
  readonly text: string;
}

/** Thinking content of an assistant message. */
export interface PiThinkingContent {
  readonly type: "thinking";
  readonly thinking: string;
}

/** A tool call inside an assistant message. */
export interface PiToolCallContent {
  readonly type: "toolCall";
  readonly id: string;
  readonly name: string;
  readonly arguments: Record<string, unknown>;
}

/** Why an assistant message ended. */
export type PiStopReason = "stop" | "length" | "toolUse" | "error" | "aborted";

/** Token usage of one assistant message (pi-ai's `Usage`): input excludes cache reads. */
export interface PiUsage {
  readonly input?: number;
  readonly output?: number;
  readonly cacheRead?: number;
  readonly cacheWrite?: number;
  readonly totalTokens?: number;
  /** Dollars at the prices of Pi's model registry (0 for a model it has no price for). */
  readonly cost?: { readonly total?: number };
}

/** A message in Pi's conversation (user, assistant, toolResult, or an extension's custom one). */
export interface PiMessage {
  readonly role: string;
  readonly content?: string | readonly { readonly type: string; readonly [key: string]: unknown }[];
  readonly stopReason?: PiStopReason;
  readonly errorMessage?: string;
  readonly usage?: PiUsage;
  /** The model that wrote an assistant message. */
  readonly model?: string;
  readonly toolCallId?: string;
  readonly toolName?: string;
  readonly isError?: boolean;
}

/** The streaming delta inside `message_update`. */
export interface PiAssistantMessageEvent {
  readonly type: string;
  readonly contentIndex?: number;
  readonly delta?: string;
}

/** A tool result as Pi reports it in `tool_execution_end`. */
export interface PiToolResult {
  readonly content?: readonly { readonly type: string; readonly text?: string; readonly mimeType?: string }[];
  /** The tool's own structured result (any shape; see `subagentCardsOf` for the one read). */
  readonly details?: unknown;
}

/** Events on stdout (no `id`). */
export type PiRpcEvent =
  | { readonly type: "agent_start" }
  | { readonly type: "agent_end"; readonly messages?: readonly PiMessage[] }
  | { readonly type: "turn_start" }
  | { readonly type: "turn_end"; readonly message?: PiMessage }
  | { readonly type: "message_start"; readonly message: PiMessage }
  // `message` (the message so far) only before 1.x, which streams deltas alone.
  | {
      readonly type: "message_update";
      readonly message?: PiMessage;
      readonly assistantMessageEvent?: PiAssistantMessageEvent;
    }
  | { readonly type: "message_end"; readonly message: PiMessage }
  | {
      readonly type: "tool_execution_start";
      readonly toolCallId: string;
      readonly toolName: string;
      readonly args?: unknown;
    }
  | {
      readonly type: "tool_execution_update";
      readonly toolCallId: string;
      readonly toolName: string;
      readonly partialResult?: PiToolResult;
    }
  | {
      readonly type: "tool_execution_end";
      readonly toolCallId: string;
      readonly toolName: string;
      readonly result?: PiToolResult;
      readonly isError?: boolean;
    }
  | { readonly type: "queue_update"; readonly steering?: readonly string[]; readonly followUp?: readonly string[] }
  | { readonly type: "compaction_start"; readonly reason?: string }
  | {
      readonly type: "compaction_end";
      readonly reason?: string;
      readonly aborted?: boolean;
      readonly willRetry?: boolean;
      readonly errorMessage?: string;
    }
  | {
      readonly type: "auto_retry_start";
      readonly attempt?: number;
      readonly maxAttempts?: number;
      readonly delayMs?: number;
      readonly errorMessage?: string;
    }
  | {
      readonly type: "auto_retry_end";
      readonly success?: boolean;
      readonly attempt?: number;
      readonly finalError?: string;
    }
  | {
      readonly type: "extension_error";
      readonly extensionPath?: string;
      readonly event?: string;
      readonly error?: string;
    };

/** A request from an extension for the client's UI (dialogs block until answered). */
export interface PiExtensionUiRequest {
  readonly type: "extension_ui_request";
  readonly id: string;
  readonly method:
    | "select"
    | "confirm"
    | "input"
    | "editor"
    | "notify"
    | "setStatus"
    | "setWidget"
    | "setTitle"
    | "set_editor_text"
    | string;
  readonly title?: string;
  readonly message?: string;
  readonly options?: readonly string[];
  readonly notifyType?: "info" | "warning" | "error";
}

/** Dialog methods: Pi waits for an `extension_ui_response`. The rest are fire-and-forget. */
export const PI_DIALOG_METHODS: readonly string[] = ["select", "confirm", "input", "editor"];

/** Anything Pi writes on stdout. */
export type PiRpcInbound = PiRpcResponse | PiRpcEvent | PiExtensionUiRequest;

/** True for a command response. */
export function isResponse(message: { readonly type?: unknown }): message is PiRpcResponse {
  return message.type === "response";
}

/** True for an extension UI request. */
export function isExtensionUiRequest(message: { readonly type?: unknown }): message is PiExtensionUiRequest {
  return message.type === "extension_ui_request";
}

/** The plain text of a message's content (text parts only, in order). */
export function messageText(message: PiMessage | undefined): string {
  if (message === undefined) return "";
  const { content } = message;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((part): part is PiTextContent => part.type === "text" && typeof part["text"] === "string")
    .map((part) => part.text)
    .join("");
}

/** The thinking text of an assistant message. */
export function messageThinking(message: PiMessage | undefined): string {
  const content = message?.content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((part): part is PiThinkingContent => part.type === "thinking" && typeof part["thinking"] === "string")
    .map((part) => part.thinking)
    .join("");
}

/** The text of a tool result (text parts joined; images noted). */
export function toolResultText(result: PiToolResult | undefined): string | undefined {
  const content = result?.content;
  if (!Array.isArray(content)) return undefined;
  const parts = content.map((part) =>
    part.type === "text" ? (part.text ?? "") : `[${part.type}${part.mimeType ? ` ${part.mimeType}` : ""}]`,
  );
  return parts.join("\n");
}
