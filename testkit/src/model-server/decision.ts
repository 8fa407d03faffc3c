import { cleanUserText } from "./conversation.js";
import type { OfferedTool, ParsedModelRequest, ToolResultView, TurnView } from "./conversation.js";
import { describeOfferedTools, findOfferedTool, shellToolCall } from "./offered-tools.js";
import { fillJsonSchema } from "./json-schema-fill.js";
import type { ScriptStep, StepTiming } from "./script.js";

/** What the scripted model answers to one request, before it is written in a wire format. */
export type ModelAction =
  | { kind: "text"; text: string }
  | { kind: "tool_call"; tool: OfferedTool; arguments: string; callId: string }
  | { kind: "fail"; message: string; status: number; inStream: boolean };

/** Where a decision came from, for assertions and debugging. */
export type DecisionSource = "side-call" | "queue" | "rule" | "directive" | "default";

/** An action plus its timing and provenance. */
export type ModelDecision = ModelAction &
  StepTiming & {
    /** Which mechanism produced it. */
    source: DecisionSource;
    /** Index of the script step played (absent for defaults and side calls). */
    step?: number;
  };

/** What a reply function sees. */
export interface ReplyContext {
  /** The parsed request. */
  request: ParsedModelRequest;
  /** Where the turn stands. */
  turn: TurnView;
  /** The last tool result, when the request ends with tool results. */
  toolResult?: ToolResultView;
}

/** The default text reply when the user text has no directive: `PONG`. */
export const DEFAULT_REPLY = "PONG";

/** The default reply after a tool result: `DONE after <tool>: <output snippet>`. */
export function defaultAfterToolReply(result: ToolResultView): string {
  return `DONE after ${result.toolName}: ${result.snippet}`;
}

/** Answer for requests a harness makes on its own (router, next-speaker, title generation). */
export function sideCallText(request: ParsedModelRequest): string {
  if (request.jsonSchema) return JSON.stringify(fillJsonSchema(request.jsonSchema));
  return "Scripted session";
}

/**
 * A side call is a request the harness makes for itself rather than for the user's turn: a
 * schema-constrained JSON call (Gemini CLI's router and next-speaker check) or a title request
 * (OpenCode, Claude). Side calls never consume queued responses, rules or directives.
 */
export function isSideCall(request: ParsedModelRequest): boolean {
  if (request.jsonSchema) return true;
  return request.tools.length === 0 && /\btitle\b/i.test(request.systemText) && /generat/i.test(request.systemText);
}

let callCounter = 0;
/** A fresh tool call id (`call_sy<n>`), unique within the process. */
export function nextCallId(): string {
  callCounter += 1;
  return `call_sy${callCounter.toString(36)}${Date.now().toString(36)}`;
}

/**
 * Every earlier user message of the conversation the harness sent (the last one excluded),
 * joined with ` | `: proves a resumed or forked conversation kept its history.
 */
export function conversationHistory(request: ParsedModelRequest): string {
  const users = request.items
    .filter((item): item is { type: "user"; text: string } => item.type === "user")
    .map((item) => cleanUserText(item.text));
  return users.slice(0, -1).join(" | ");
}

/**
 * `{{output.<field>}}`: the string value of `"<field>"` in the last tool result (for example a
 * `taskId` returned by one tool and passed to the next), or empty when there is none.
 */
export function outputField(context: ReplyContext, field: string): string {
  const output = context.toolResult?.output ?? "";
  const match = new RegExp(`\\\\?"${field}\\\\?"\\s*:\\s*\\\\?"([^"\\\\]+)`).exec(output);
  return match?.[1] ?? "";
}

/** Substitutes `{{output}}`, `{{output.<field>}}`, `{{tool}}`, `{{user}}` and `{{history}}` in a scripted reply or tool arguments. */
export function substitute(text: string, context: ReplyContext): string {
  return text
    .replace(/\{\{output\.([A-Za-z0-9_]+)\}\}/g, (_match, field: string) => outputField(context, field))
    .replace(/\{\{history\}\}/g, conversationHistory(context.request))
    .replace(/\{\{output\}\}/g, context.toolResult?.snippet ?? "")
    .replace(/\{\{tool\}\}/g, context.toolResult?.toolName ?? "")
    .replace(/\{\{user\}\}/g, context.turn.userText ?? "");
}

/** Applies {@link substitute} to every string inside tool arguments. */
function substituteArgs<T>(value: T, context: ReplyContext): T {
  if (typeof value === "string") return substitute(value, context) as T;
  if (Array.isArray(value)) return value.map((entry) => substituteArgs(entry, context)) as T;
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, substituteArgs(entry, context)])) as T;
  }
  return value;
}

/**
 * Turns one script step into an action for this request. Tool steps pick among the tools the
 * harness actually offered; if none matches, the model says so in text (a test then sees
 * `TOOL NOT OFFERED: …` in the harness's output instead of a hang).
 */
export function actionForStep(
  step: ScriptStep,
  context: ReplyContext,
  echoText: string,
  defaults?: DefaultReplies,
): ModelAction {
  if ("reply" in step) return { kind: "text", text: substitute(step.reply, context) };
  if ("echo" in step) return { kind: "text", text: echoText };
  if ("fail" in step) {
    return { kind: "fail", message: step.fail, status: step.status ?? 500, inStream: step.inStream ?? false };
  }
  if ("shell" in step) {
    const call = shellToolCall(context.request.tools, step.shell);
    if (!call)
      return { kind: "text", text: `NO SHELL TOOL OFFERED. Offered: ${describeOfferedTools(context.request.tools)}` };
    return { kind: "tool_call", tool: call.tool, arguments: JSON.stringify(call.args), callId: nextCallId() };
  }
  if ("tool" in step) {
    // `!Name` calls the tool even when the request does not offer it (a model that insists on a
    // tool its harness removed), so a test can see the harness refuse the call itself.
    const forced = step.tool.startsWith("!") ? step.tool.slice(1) : null;
    const tool =
      forced === null
        ? findOfferedTool(context.request.tools, step.tool)
        : (findOfferedTool(context.request.tools, forced) ??
          ({ name: forced, qualifiedName: forced, kind: "function" } satisfies OfferedTool));
    if (!tool) {
      return {
        kind: "text",
        text: `TOOL NOT OFFERED: ${step.tool}. Offered: ${describeOfferedTools(context.request.tools)}`,
      };
    }
    const args = substituteArgs(step.args ?? {}, context);
    let serialized: string;
    if (tool.kind === "custom") {
      serialized =
        typeof args === "string" ? args : typeof args["input"] === "string" ? args["input"] : JSON.stringify(args);
    } else {
      serialized = typeof args === "string" ? args : JSON.stringify(args);
    }
    return { kind: "tool_call", tool, arguments: serialized, callId: nextCallId() };
  }
  return defaultAction(context, defaults);
}

/** The unscripted answer: the after-tool reply when tool results came back, else `PONG`. */
export function defaultAction(context: ReplyContext, defaults?: DefaultReplies): ModelAction {
  if (context.toolResult) {
    return { kind: "text", text: (defaults?.afterTool ?? ((c) => defaultAfterToolReply(c.toolResult!)))(context) };
  }
  return { kind: "text", text: defaults?.reply ? defaults.reply(context) : DEFAULT_REPLY };
}

/** Overrides for the unscripted answers. */
export interface DefaultReplies {
  /** Reply to a user message without directives (default `PONG`). */
  reply?: (context: ReplyContext) => string;
  /** Reply after a tool result when the script has no further step (default `DONE after <tool>: <snippet>`). */
  afterTool?: (context: ReplyContext) => string;
}
