import type { ServerResponse } from "node:http";
import type { ModelAction } from "./decision.js";
import type { ParsedModelRequest } from "./conversation.js";
import type { ScriptedUsage } from "./model-usage.js";

/** What every wire writer gets besides the action. */
export interface WireWriteContext {
  /** The parsed request being answered. */
  request: ParsedModelRequest;
  /**
   * Plays the step's `@@wait`/`@@hold` once the response is open (for streams: after the
   * preamble events, so the harness sees a live, stalled stream). Resolves `false` when the
   * client went away meanwhile; the writer then stops.
   */
  pause: () => Promise<boolean>;
  /** Size of text deltas in characters. */
  chunkSize: number;
  /** The token counts this answer reports. */
  usage: ScriptedUsage;
}

/** A wire writer: answers one request with one action. */
export type WireWriter = (res: ServerResponse, action: ModelAction, context: WireWriteContext) => Promise<void>;

/** Splits text into deltas so clients exercise their delta accumulation. */
export function chunkText(text: string, size: number): string[] {
  if (text.length === 0) return [];
  const chunks: string[] = [];
  for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
  return chunks;
}

/** A rough, deterministic token estimate (4 characters per token) for usage fields. */
export function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/** Approximates input tokens from the request history. */
export function inputTokens(request: ParsedModelRequest): number {
  let chars = request.systemText.length;
  for (const item of request.items) {
    chars += item.type === "tool_result" ? item.output.length : item.text.length;
  }
  return Math.max(1, Math.ceil(chars / 4));
}

/** Sends a JSON body with a status. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return;
  const payload = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) });
  res.end(payload);
}

/** Reads a property of an unknown record. */
export function field(value: unknown, key: string): unknown {
  return value && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
}

/** Reads an array property (empty when absent). */
export function arrayField(value: unknown, key: string): unknown[] {
  const v = field(value, key);
  return Array.isArray(v) ? v : [];
}

/** Reads a string property. */
export function stringField(value: unknown, key: string): string | undefined {
  const v = field(value, key);
  return typeof v === "string" ? v : undefined;
}

/** A random-looking but process-unique id with a prefix (`resp_…`, `msg_…`). */
export function makeId(prefix: string): string {
  idCounter += 1;
  return `${prefix}${Date.now().toString(36)}${idCounter.toString(36)}`;
}
let idCounter = 0;

/** Seconds since the epoch (OpenAI `created` fields). */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
