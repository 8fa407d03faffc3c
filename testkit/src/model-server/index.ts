/**
 * The provider test lab's scripted model server: a stand-in language model on 127.0.0.1 that
 * real harnesses (Codex, Pi, Claude Code, OpenCode, Gemini CLI) are pointed at.
 */
export { ScriptedModelServer } from "./server.js";
export type {
  MatchContext,
  RequestMatcher,
  ScriptInput,
  ScriptRule,
  ScriptedModelServerOptions,
  UsageContext,
} from "./server.js";
export type { ScriptedUsage, ScriptedUsageInput } from "./model-usage.js";
export { completeUsage, parseUsageDirective } from "./model-usage.js";
export { estimatedUsage } from "./estimated-usage.js";
export type { RecordedRequest, RecordedRequestKind } from "./recorded-request.js";
export { SECRET_HEADERS, describeRecordedRequest, redactHeaders } from "./recorded-request.js";
export type { PresentedApiKey } from "./api-keys.js";
export type {
  ConversationItem,
  ConversationToolCall,
  JsonSchema,
  OfferedTool,
  ParsedModelRequest,
  ToolResultView,
  TurnView,
  WireApiKind,
} from "./conversation.js";
export {
  INJECTED_CONTEXT_TAGS,
  INTERRUPTED_REQUEST_MARKER,
  cleanUserText,
  resolveTurn,
  toolOutputSnippet,
  unquoteJsonString,
} from "./conversation.js";
export type {
  EchoAction,
  FailAction,
  ParsedScript,
  ReplyAction,
  ScriptAction,
  ScriptStep,
  ShellAction,
  StepTiming,
  ToolAction,
  ToolArguments,
} from "./script.js";
export { DIRECTIVE_NAMES, hasDirectives, parseScript, toSteps } from "./script.js";
export type { DecisionSource, DefaultReplies, ModelAction, ModelDecision, ReplyContext } from "./decision.js";
export { DEFAULT_REPLY, defaultAfterToolReply, isSideCall } from "./decision.js";
export type { ShellToolMapping } from "./offered-tools.js";
export { SHELL_TOOL_MAPPINGS, findOfferedTool, shellToolCall } from "./offered-tools.js";
export { fillJsonSchema } from "./json-schema-fill.js";
export type { SseEvent } from "./sse.js";
export { SseWriter, parseSse, readSseJson } from "./sse.js";
export { parseResponsesRequest } from "./responses-api.js";
export { parseChatCompletionsRequest } from "./chat-completions-api.js";
export { parseAnthropicMessagesRequest } from "./anthropic-messages-api.js";
export { parseGeminiRequest } from "./gemini-api.js";
