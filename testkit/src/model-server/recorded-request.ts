import type { IncomingHttpHeaders } from "node:http";
import type { OfferedTool, ParsedModelRequest, ToolResultView } from "./conversation.js";
import type { PresentedApiKey } from "./api-keys.js";
import type { ModelDecision } from "./decision.js";
import type { ScriptedUsage } from "./model-usage.js";

/** What kind of request the server recorded. */
export type RecordedRequestKind =
  | "openai-responses"
  | "openai-chat-completions"
  | "anthropic-messages"
  | "anthropic-count-tokens"
  | "gemini"
  | "models"
  | "websocket-upgrade"
  | "other";

/** One request the scripted model server received, for assertions. */
export interface RecordedRequest {
  /** 1-based arrival order. */
  seq: number;
  /** Which API (or non-model endpoint) it hit. */
  api: RecordedRequestKind;
  /** HTTP method. */
  method: string;
  /** Path with query string, e.g. `/v1/messages?beta=true`. */
  path: string;
  /** Request headers, lower-cased, with credentials replaced by `[redacted]`. */
  headers: Record<string, string>;
  /** The parsed JSON body (undefined for bodiless requests). */
  body: unknown;
  /** The model the harness asked for. */
  model?: string;
  /** Whether a streamed answer was requested. */
  stream: boolean;
  /** The last real user text (injected context stripped); what directives were read from. */
  userText?: string;
  /** Which script step this request played (tool rounds since the user message). */
  stepIndex: number;
  /** The tools offered, flattened (Codex namespaces resolved). */
  tools: OfferedTool[];
  /** Qualified names of the offered tools, e.g. `exec_command`, `mcp__probe__echo`. */
  toolNames: string[];
  /** The tool results the request ended with (the round trip's return leg). */
  toolResults: ToolResultView[];
  /** The last of {@link toolResults}, when any. */
  toolResult?: ToolResultView;
  /** A request the harness made for itself (router, next-speaker, title): answered automatically. */
  sideCall: boolean;
  /** The request parsed into the wire-independent view. */
  parsed?: ParsedModelRequest;
  /** What the server answered (set once decided). */
  decision?: ModelDecision;
  /** The token counts the answer reports (set once decided; reached the harness only if `completed`). */
  usage?: ScriptedUsage;
  /** The `@@hold` gate this request waits (or waited) on. */
  heldOn?: string;
  /** True once the answer was fully written. */
  completed: boolean;
  /** True when the client closed the connection before the answer was complete (interrupts, steers). */
  clientAborted: boolean;
  /** `Date.now()` at arrival. */
  receivedAt: number;
  /** The API key it presented (where, and which configured key it matched); absent when none. */
  apiKey?: PresentedApiKey;
  /** True when the server's `apiKeys` refused it (answered 401, nothing else recorded about it). */
  refused?: boolean;
  /** The route of the base URL it came through (`server.routeUrl(route)`): whose request it was. */
  route?: string;
}

/** Header names whose values are never recorded. */
export const SECRET_HEADERS: readonly string[] = [
  "authorization",
  "proxy-authorization",
  "x-api-key",
  "x-goog-api-key",
  "api-key",
  "cookie",
];

/** Copies headers with credentials redacted (kept as `[redacted]` so their presence is visible). */
export function redactHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    out[lower] = SECRET_HEADERS.includes(lower) ? "[redacted]" : Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

/** A one-line summary of a recorded request, for timeout messages and logs. */
export function describeRecordedRequest(request: RecordedRequest): string {
  const parts = [`#${request.seq} ${request.method} ${request.path} [${request.api}]`];
  if (request.userText !== undefined) parts.push(`user=${JSON.stringify(request.userText.slice(0, 80))}`);
  if (request.toolResult) parts.push(`toolResult=${request.toolResult.toolName}`);
  if (request.decision) {
    const d = request.decision;
    parts.push(
      d.kind === "text"
        ? `→ text ${JSON.stringify(d.text.slice(0, 60))}`
        : d.kind === "tool_call"
          ? `→ call ${d.tool.qualifiedName}`
          : `→ fail ${d.status}`,
    );
  }
  if (request.heldOn !== undefined) parts.push(`held=${request.heldOn}`);
  if (request.refused === true)
    parts.push(`refused (${request.apiKey === undefined ? "no key" : `unknown key in ${request.apiKey.via}`})`);
  if (request.clientAborted) parts.push("aborted");
  return parts.join(" ");
}
