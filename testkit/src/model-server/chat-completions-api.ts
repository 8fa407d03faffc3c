import type { ConversationItem, OfferedTool, ParsedModelRequest } from "./conversation.js";
import { textOfParts } from "./conversation.js";
import type { WireWriter } from "./wire-common.js";
import { arrayField, chunkText, field, makeId, nowSeconds, sendJson, stringField } from "./wire-common.js";
import { SseWriter } from "./sse.js";
import { chatCompletionsUsage } from "./model-usage.js";

/**
 * OpenAI Chat Completions (`POST /v1/chat/completions`): used by OpenCode (through
 * `@ai-sdk/openai-compatible`) and Pi's `openai-completions` provider.
 */

/** Parses a Chat Completions request body. */
export function parseChatCompletionsRequest(body: unknown): ParsedModelRequest {
  const items: ConversationItem[] = [];
  const system: string[] = [];
  for (const message of arrayField(body, "messages")) {
    const role = stringField(message, "role");
    const text = textOfParts(field(message, "content"));
    if (role === "user") items.push({ type: "user", text });
    else if (role === "assistant") {
      const toolCalls = arrayField(message, "tool_calls").map((call) => {
        const id = stringField(call, "id");
        return { ...(id !== undefined ? { id } : {}), name: stringField(field(call, "function"), "name") ?? "unknown" };
      });
      items.push({ type: "assistant", text, toolCalls });
    } else if (role === "tool") {
      const callId = stringField(message, "tool_call_id");
      const name = stringField(message, "name");
      items.push({
        type: "tool_result",
        ...(callId !== undefined ? { callId } : {}),
        ...(name !== undefined ? { toolName: name } : {}),
        output: text,
      });
    } else system.push(text);
  }
  const tools: OfferedTool[] = [];
  for (const tool of arrayField(body, "tools")) {
    const fn = field(tool, "function");
    const name = stringField(fn, "name");
    if (!name) continue;
    const parameters = field(fn, "parameters");
    tools.push({
      name,
      qualifiedName: name,
      kind: "function",
      ...(parameters && typeof parameters === "object" ? { parameters: parameters as Record<string, unknown> } : {}),
    });
  }
  return {
    api: "openai-chat-completions",
    ...(stringField(body, "model") !== undefined ? { model: stringField(body, "model") } : {}),
    stream: field(body, "stream") === true,
    items,
    tools,
    systemText: system.join("\n"),
    includeUsage: field(field(body, "stream_options"), "include_usage") === true,
  };
}

/** The Chat Completions error body. */
export function chatCompletionsErrorBody(message: string): unknown {
  return { error: { message, type: "server_error", param: null, code: "server_error" } };
}

/**
 * Writes a Chat Completions answer: `chat.completion.chunk`s (role delta, content or
 * `tool_calls` deltas, a finish chunk), a usage chunk when `stream_options.include_usage`, then
 * `data: [DONE]`. An in-stream failure is a `data: {"error": …}` record without `[DONE]`.
 */
export const writeChatCompletionsResponse: WireWriter = async (res, action, context) => {
  const { request } = context;
  const id = makeId("chatcmpl-");
  const created = nowSeconds();
  const model = request.model ?? "scripted-model";
  if (action.kind === "fail" && !action.inStream) {
    if (!(await context.pause())) return;
    sendJson(res, action.status, chatCompletionsErrorBody(action.message));
    return;
  }
  const usage = chatCompletionsUsage(context.usage);
  const toolCall =
    action.kind === "tool_call"
      ? { id: action.callId, type: "function", function: { name: action.tool.name, arguments: action.arguments } }
      : undefined;

  if (!request.stream) {
    if (!(await context.pause())) return;
    sendJson(res, 200, {
      id,
      object: "chat.completion",
      created,
      model,
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: action.kind === "text" ? action.text : null,
            ...(toolCall ? { tool_calls: [toolCall] } : {}),
          },
          finish_reason: toolCall ? "tool_calls" : "stop",
        },
      ],
      usage,
    });
    return;
  }

  const sse = new SseWriter(res);
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): void => {
    sse.send({ id, object: "chat.completion.chunk", created, model, choices, ...extra });
  };
  const delta = (d: Record<string, unknown>, finishReason: string | null = null): void => {
    chunk([{ index: 0, delta: d, finish_reason: finishReason }]);
  };
  sse.open();
  if (action.kind !== "fail") delta({ role: "assistant", content: "" });
  if (!(await context.pause())) return;
  if (action.kind === "fail") {
    sse.send({ error: { message: action.message, type: "server_error", param: null, code: "server_error" } });
    sse.end();
    return;
  }
  if (action.kind === "text") {
    for (const piece of chunkText(action.text, context.chunkSize)) delta({ content: piece });
    delta({}, "stop");
  } else {
    delta({
      tool_calls: [
        { index: 0, id: action.callId, type: "function", function: { name: action.tool.name, arguments: "" } },
      ],
    });
    for (const piece of chunkText(action.arguments, context.chunkSize)) {
      delta({ tool_calls: [{ index: 0, function: { arguments: piece } }] });
    }
    delta({}, "tool_calls");
  }
  if (request.includeUsage) chunk([], { usage });
  sse.send("[DONE]");
  sse.end();
};
