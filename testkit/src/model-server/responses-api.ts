import type { ConversationItem, OfferedTool, ParsedModelRequest } from "./conversation.js";
import { textOfParts } from "./conversation.js";
import type { WireWriter } from "./wire-common.js";
import { arrayField, chunkText, field, makeId, nowSeconds, sendJson, stringField } from "./wire-common.js";
import { SseWriter } from "./sse.js";
import { responsesUsage } from "./model-usage.js";

/**
 * OpenAI Responses API (`POST /v1/responses`): used by Codex CLI / codex-acp / the Codex SDK and
 * by Pi's `openai-responses` provider.
 */

/** Parses a Responses request body (Codex and Pi shapes: typed items or bare `{role, content}` messages). */
export function parseResponsesRequest(body: unknown): ParsedModelRequest {
  const items: ConversationItem[] = [];
  const system: string[] = [];
  const instructions = stringField(body, "instructions");
  if (instructions) system.push(instructions);
  const input = field(body, "input");
  if (typeof input === "string") items.push({ type: "user", text: input });
  for (const item of Array.isArray(input) ? input : []) {
    const type = stringField(item, "type");
    const role = stringField(item, "role");
    if ((type === "message" || type === undefined) && role !== undefined) {
      const text = textOfParts(field(item, "content"));
      if (role === "user") items.push({ type: "user", text });
      else if (role === "assistant") items.push({ type: "assistant", text, toolCalls: [] });
      else system.push(text);
    } else if (type === "function_call" || type === "custom_tool_call") {
      const namespace = stringField(item, "namespace");
      items.push({
        type: "assistant",
        text: "",
        toolCalls: [
          {
            ...(stringField(item, "call_id") !== undefined ? { id: stringField(item, "call_id") } : {}),
            name: stringField(item, "name") ?? "unknown",
            ...(namespace !== undefined ? { namespace } : {}),
          },
        ],
      });
    } else if (type === "function_call_output" || type === "custom_tool_call_output") {
      const output = field(item, "output");
      const callId = stringField(item, "call_id");
      items.push({
        type: "tool_result",
        ...(callId !== undefined ? { callId } : {}),
        output: typeof output === "string" ? output : textOfParts(output),
      });
    }
  }
  return {
    api: "openai-responses",
    ...(stringField(body, "model") !== undefined ? { model: stringField(body, "model") } : {}),
    stream: field(body, "stream") === true,
    items,
    tools: parseResponsesTools(arrayField(body, "tools")),
    systemText: system.join("\n"),
  };
}

/** Flattens Responses tools: functions, freeform `custom` tools, and `namespace` groups (Codex MCP). */
export function parseResponsesTools(tools: unknown[], namespace?: string): OfferedTool[] {
  const out: OfferedTool[] = [];
  for (const tool of tools) {
    const type = stringField(tool, "type");
    const name = stringField(tool, "name");
    if (type === "namespace" && name) {
      out.push(...parseResponsesTools(arrayField(tool, "tools"), name));
    } else if ((type === "function" || type === "custom") && name) {
      const parameters = field(tool, "parameters");
      out.push({
        name,
        ...(namespace !== undefined ? { namespace } : {}),
        qualifiedName: namespace !== undefined ? `${namespace}__${name}` : name,
        kind: type,
        ...(parameters && typeof parameters === "object" ? { parameters: parameters as Record<string, unknown> } : {}),
      });
    }
  }
  return out;
}

/** The Responses error body. */
export function responsesErrorBody(message: string): unknown {
  return { error: { message, type: "server_error", param: null, code: "server_error" } };
}

/**
 * Writes a Responses answer. Streams carry the full event sequence Pi's client needs
 * (`response.created`, `response.in_progress`, `output_item.added`, `content_part.added`,
 * `output_text.delta`…, `output_text.done`, `content_part.done` / `function_call_arguments.*`,
 * `output_item.done`, `response.completed`) with `sequence_number`s; Codex needs only the last two.
 */
export const writeResponsesResponse: WireWriter = async (res, action, context) => {
  const { request } = context;
  const responseId = makeId("resp_");
  const base = {
    id: responseId,
    object: "response",
    created_at: nowSeconds(),
    model: request.model ?? "scripted-model",
    output: [] as unknown[],
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
  };
  if (action.kind === "fail" && !action.inStream) {
    if (!(await context.pause())) return;
    sendJson(res, action.status, responsesErrorBody(action.message));
    return;
  }

  let item: Record<string, unknown> | undefined;
  if (action.kind === "text") {
    item = {
      id: makeId("msg_"),
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: action.text, annotations: [] }],
    };
  } else if (action.kind === "tool_call") {
    item =
      action.tool.kind === "custom"
        ? {
            id: makeId("ctc_"),
            type: "custom_tool_call",
            status: "completed",
            call_id: action.callId,
            name: action.tool.name,
            input: action.arguments,
          }
        : {
            id: makeId("fc_"),
            type: "function_call",
            status: "completed",
            call_id: action.callId,
            name: action.tool.name,
            ...(action.tool.namespace !== undefined ? { namespace: action.tool.namespace } : {}),
            arguments: action.arguments,
          };
  }
  const usage = responsesUsage(context.usage);

  if (!request.stream) {
    if (!(await context.pause())) return;
    sendJson(res, 200, { ...base, status: "completed", output: item ? [item] : [], usage });
    return;
  }

  const sse = new SseWriter(res);
  let sequence = 0;
  const emit = (type: string, data: Record<string, unknown>): void => {
    sse.send({ type, sequence_number: sequence++, ...data }, type);
  };
  emit("response.created", { response: { ...base, status: "in_progress" } });
  emit("response.in_progress", { response: { ...base, status: "in_progress" } });
  if (!(await context.pause())) return;

  if (action.kind === "fail") {
    emit("response.failed", {
      response: { ...base, status: "failed", error: { code: "server_error", message: action.message } },
    });
    sse.end();
    return;
  }
  const itemId = String(item?.["id"]);
  if (action.kind === "text") {
    emit("response.output_item.added", {
      output_index: 0,
      item: { id: itemId, type: "message", status: "in_progress", role: "assistant", content: [] },
    });
    const emptyPart = { type: "output_text", text: "", annotations: [] };
    emit("response.content_part.added", { item_id: itemId, output_index: 0, content_index: 0, part: emptyPart });
    for (const delta of chunkText(action.text, context.chunkSize)) {
      emit("response.output_text.delta", { item_id: itemId, output_index: 0, content_index: 0, delta, logprobs: [] });
    }
    emit("response.output_text.done", {
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      text: action.text,
      logprobs: [],
    });
    emit("response.content_part.done", {
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      part: { type: "output_text", text: action.text, annotations: [] },
    });
  } else if (item?.["type"] === "custom_tool_call") {
    emit("response.output_item.added", { output_index: 0, item: { ...item, status: "in_progress", input: "" } });
    for (const delta of chunkText(action.arguments, context.chunkSize)) {
      emit("response.custom_tool_call_input.delta", { item_id: itemId, output_index: 0, delta });
    }
    emit("response.custom_tool_call_input.done", { item_id: itemId, output_index: 0, input: action.arguments });
  } else if (action.kind === "tool_call") {
    emit("response.output_item.added", { output_index: 0, item: { ...item, status: "in_progress", arguments: "" } });
    for (const delta of chunkText(action.arguments, context.chunkSize)) {
      emit("response.function_call_arguments.delta", { item_id: itemId, output_index: 0, delta });
    }
    emit("response.function_call_arguments.done", { item_id: itemId, output_index: 0, arguments: action.arguments });
  }
  emit("response.output_item.done", { output_index: 0, item });
  emit("response.completed", { response: { ...base, status: "completed", output: [item], usage } });
  sse.end();
};
