import type { ConversationItem, OfferedTool, ParsedModelRequest } from "./conversation.js";
import { textOfParts } from "./conversation.js";
import type { WireWriter } from "./wire-common.js";
import { arrayField, chunkText, field, inputTokens, makeId, sendJson, stringField } from "./wire-common.js";
import { SseWriter } from "./sse.js";
import { anthropicUsage } from "./model-usage.js";

/**
 * Anthropic Messages (`POST /v1/messages`, with or without `?beta=true`): used by Claude Code, the
 * Claude Agent SDK, the claude ACP adapters and Pi's `anthropic-messages` provider.
 */

/** Parses a Messages request body. Mid-conversation `role:"system"` messages (Agent SDK) count as system text. */
export function parseAnthropicMessagesRequest(body: unknown): ParsedModelRequest {
  const items: ConversationItem[] = [];
  const system: string[] = [textOfParts(field(body, "system"))];
  for (const message of arrayField(body, "messages")) {
    const role = stringField(message, "role");
    const content = field(message, "content");
    if (role === "system") {
      system.push(textOfParts(content));
      continue;
    }
    const blocks =
      typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? content : [];
    if (role === "assistant") {
      const texts: string[] = [];
      const toolCalls: Array<{ id?: string; name: string }> = [];
      for (const block of blocks) {
        const type = stringField(block, "type");
        if (type === "text") texts.push(stringField(block, "text") ?? "");
        else if (type === "tool_use" || type === "server_tool_use") {
          const id = stringField(block, "id");
          toolCalls.push({ ...(id !== undefined ? { id } : {}), name: stringField(block, "name") ?? "unknown" });
        }
      }
      items.push({ type: "assistant", text: texts.join("\n"), toolCalls });
      continue;
    }
    // A user message can carry tool results and text side by side (Claude Code adds
    // <system-reminder> text there; a steer would add real text after the results).
    const texts: string[] = [];
    for (const block of blocks) {
      const type = stringField(block, "type");
      if (type === "tool_result") {
        const callId = stringField(block, "tool_use_id");
        items.push({
          type: "tool_result",
          ...(callId !== undefined ? { callId } : {}),
          output: textOfParts(field(block, "content")),
        });
      } else if (type === "text") texts.push(stringField(block, "text") ?? "");
    }
    if (texts.length > 0) items.push({ type: "user", text: texts.join("\n") });
  }
  const tools: OfferedTool[] = [];
  for (const tool of arrayField(body, "tools")) {
    const name = stringField(tool, "name");
    const schema = field(tool, "input_schema");
    const type = stringField(tool, "type");
    // Server tools (web_search_…) carry a versioned `type` and no input schema: not callable by the script.
    if (!name || (type !== undefined && type !== "custom" && !schema)) continue;
    tools.push({
      name,
      qualifiedName: name,
      kind: "function",
      ...(schema && typeof schema === "object" ? { parameters: schema as Record<string, unknown> } : {}),
    });
  }
  return {
    api: "anthropic-messages",
    ...(stringField(body, "model") !== undefined ? { model: stringField(body, "model") } : {}),
    stream: field(body, "stream") === true,
    items,
    tools,
    systemText: system.filter((s) => s !== "").join("\n"),
  };
}

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  429: "rate_limit_error",
  529: "overloaded_error",
};

/** The Messages error body for a status. */
export function anthropicErrorBody(message: string, status: number): unknown {
  return { type: "error", error: { type: ERROR_TYPES[status] ?? "api_error", message } };
}

/** Answer for `POST /v1/messages/count_tokens`. */
export function anthropicCountTokens(request: ParsedModelRequest): unknown {
  return { input_tokens: inputTokens(request) };
}

/**
 * Writes a Messages answer: `message_start`, `content_block_start` (text or `tool_use`), `ping`,
 * `content_block_delta`s (`text_delta` / `input_json_delta`), `content_block_stop`,
 * `message_delta` (stop reason `end_turn` / `tool_use`, usage), `message_stop`. An in-stream
 * failure is an `error` event.
 */
export const writeAnthropicMessagesResponse: WireWriter = async (res, action, context) => {
  const { request } = context;
  if (action.kind === "fail" && !action.inStream) {
    if (!(await context.pause())) return;
    sendJson(res, action.status, anthropicErrorBody(action.message, action.status));
    return;
  }
  const messageId = makeId("msg_");
  const model = request.model ?? "claude-scripted";
  const toolUseId = action.kind === "tool_call" ? action.callId.replace(/^call_/, "toolu_") : "";
  const usage = anthropicUsage(context.usage);
  const stopReason = action.kind === "tool_call" ? "tool_use" : "end_turn";
  let input: unknown = {};
  if (action.kind === "tool_call") {
    try {
      input = JSON.parse(action.arguments);
    } catch {
      input = { input: action.arguments };
    }
  }
  const block =
    action.kind === "tool_call"
      ? { type: "tool_use", id: toolUseId, name: action.tool.name, input }
      : { type: "text", text: action.kind === "text" ? action.text : "" };

  if (!request.stream) {
    if (!(await context.pause())) return;
    sendJson(res, 200, {
      id: messageId,
      type: "message",
      role: "assistant",
      model,
      content: [block],
      stop_reason: stopReason,
      stop_sequence: null,
      usage,
    });
    return;
  }

  const sse = new SseWriter(res);
  const emit = (type: string, data: Record<string, unknown> = {}): void => sse.send({ type, ...data }, type);
  emit("message_start", {
    message: {
      id: messageId,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 },
    },
  });
  if (!(await context.pause())) return;
  if (action.kind === "fail") {
    emit("error", { error: { type: ERROR_TYPES[action.status] ?? "api_error", message: action.message } });
    sse.end();
    return;
  }
  if (action.kind === "tool_call") {
    emit("content_block_start", {
      index: 0,
      content_block: { type: "tool_use", id: toolUseId, name: action.tool.name, input: {} },
    });
    emit("ping");
    const json = JSON.stringify(input);
    for (const piece of chunkText(json, context.chunkSize)) {
      emit("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: piece } });
    }
  } else {
    emit("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    emit("ping");
    for (const piece of chunkText(action.text, context.chunkSize)) {
      emit("content_block_delta", { index: 0, delta: { type: "text_delta", text: piece } });
    }
  }
  emit("content_block_stop", { index: 0 });
  emit("message_delta", {
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  emit("message_stop");
  sse.end();
};
