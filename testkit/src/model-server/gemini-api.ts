import type { ConversationItem, OfferedTool, ParsedModelRequest } from "./conversation.js";
import type { WireWriter } from "./wire-common.js";
import { arrayField, chunkText, field, makeId, sendJson, stringField } from "./wire-common.js";
import { SseWriter } from "./sse.js";
import { geminiUsageMetadata } from "./model-usage.js";

/**
 * Gemini API (`POST /v1beta/models/{model}:streamGenerateContent?alt=sse` and
 * `:generateContent`): used by Gemini CLI (`GOOGLE_GEMINI_BASE_URL`).
 */

/** The model id and method from a Gemini path (`/v1beta/models/gemini-x:generateContent`). */
export function parseGeminiPath(pathname: string): { model: string; method: string } | undefined {
  const match = /\/models\/([^/:]+):([A-Za-z]+)$/.exec(pathname);
  return match?.[1] && match[2] ? { model: decodeURIComponent(match[1]), method: match[2] } : undefined;
}

/** Parses a Gemini `generateContent` / `streamGenerateContent` body. */
export function parseGeminiRequest(body: unknown, model: string, stream: boolean): ParsedModelRequest {
  const items: ConversationItem[] = [];
  for (const content of arrayField(body, "contents")) {
    const role = stringField(content, "role") ?? "user";
    const texts: string[] = [];
    const toolCalls: Array<{ id?: string; name: string }> = [];
    for (const part of arrayField(content, "parts")) {
      if (field(part, "thought") === true) continue;
      const text = stringField(part, "text");
      const call = field(part, "functionCall");
      const response = field(part, "functionResponse");
      if (text !== undefined) texts.push(text);
      if (call) {
        const id = stringField(call, "id");
        toolCalls.push({ ...(id !== undefined ? { id } : {}), name: stringField(call, "name") ?? "unknown" });
      }
      if (response) {
        const id = stringField(response, "id");
        const name = stringField(response, "name");
        const payload = field(response, "response");
        items.push({
          type: "tool_result",
          ...(id !== undefined ? { callId: id } : {}),
          ...(name !== undefined ? { toolName: name } : {}),
          output: typeof payload === "string" ? payload : JSON.stringify(payload ?? {}),
        });
      }
    }
    if (role === "model") items.push({ type: "assistant", text: texts.join(""), toolCalls });
    else if (texts.length > 0) items.push({ type: "user", text: texts.join("\n") });
  }
  const tools: OfferedTool[] = [];
  for (const group of arrayField(body, "tools")) {
    for (const declaration of arrayField(group, "functionDeclarations")) {
      const name = stringField(declaration, "name");
      if (!name) continue;
      const parameters = field(declaration, "parametersJsonSchema") ?? field(declaration, "parameters");
      tools.push({
        name,
        qualifiedName: name,
        kind: "function",
        ...(parameters && typeof parameters === "object" ? { parameters: parameters as Record<string, unknown> } : {}),
      });
    }
  }
  const config = field(body, "generationConfig");
  const system = field(body, "systemInstruction");
  const systemText = arrayField(system, "parts")
    .map((p) => stringField(p, "text") ?? "")
    .join("\n");
  const schema = field(config, "responseJsonSchema") ?? field(config, "responseSchema");
  const wantsJson = stringField(config, "responseMimeType") === "application/json";
  return {
    api: "gemini",
    model,
    stream,
    items,
    tools,
    systemText,
    ...(wantsJson
      ? { jsonSchema: schema && typeof schema === "object" ? (schema as Record<string, unknown>) : {} }
      : {}),
  };
}

const STATUS_NAMES: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  503: "UNAVAILABLE",
};

/** The Gemini error body for a status. */
export function geminiErrorBody(message: string, status: number): unknown {
  return { error: { code: status, message, status: STATUS_NAMES[status] ?? "INTERNAL" } };
}

/**
 * Writes a Gemini answer. With `alt=sse`: `data:` records (no `event:` lines) each holding a
 * `GenerateContentResponse`; the last has `finishReason:"STOP"` and `usageMetadata`. Without
 * `alt=sse` a stream is a JSON array of the same chunks; `:generateContent` is one JSON object.
 */
export const writeGeminiResponse: WireWriter = async (res, action, context) => {
  const { request } = context;
  if (action.kind === "fail" && !action.inStream) {
    if (!(await context.pause())) return;
    sendJson(res, action.status, geminiErrorBody(action.message, action.status));
    return;
  }
  const responseId = makeId("gresp");
  const modelVersion = request.model ?? "gemini-scripted";
  const usageMetadata = geminiUsageMetadata(context.usage);
  const chunk = (parts: unknown[], last: boolean): Record<string, unknown> => ({
    candidates: [{ content: { role: "model", parts }, ...(last ? { finishReason: "STOP" } : {}), index: 0 }],
    ...(last ? { usageMetadata } : {}),
    modelVersion,
    responseId,
  });
  const chunks: Record<string, unknown>[] = [];
  if (action.kind === "tool_call") {
    let args: unknown = {};
    try {
      args = JSON.parse(action.arguments);
    } catch {
      args = { input: action.arguments };
    }
    chunks.push(chunk([{ functionCall: { name: action.tool.name, args } }], true));
  } else if (action.kind === "text") {
    const pieces = request.stream ? chunkText(action.text, context.chunkSize) : [action.text];
    if (pieces.length === 0) pieces.push("");
    pieces.forEach((piece, i) => chunks.push(chunk([{ text: piece }], i === pieces.length - 1)));
  }

  if (!request.stream) {
    if (!(await context.pause())) return;
    sendJson(res, 200, chunks[0]);
    return;
  }
  const url = new URL(`http://x${res.req.url ?? "/"}`);
  if (url.searchParams.get("alt") !== "sse") {
    if (!(await context.pause())) return;
    sendJson(res, 200, action.kind === "fail" ? [geminiErrorBody(action.message, action.status)] : chunks);
    return;
  }
  const sse = new SseWriter(res);
  sse.open();
  if (!(await context.pause())) return;
  if (action.kind === "fail") {
    sse.send(geminiErrorBody(action.message, action.status));
    sse.end();
    return;
  }
  for (const c of chunks) sse.send(c);
  sse.end();
};
