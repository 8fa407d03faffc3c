import type { ParsedModelRequest } from "./conversation.js";
import type { ModelAction } from "./decision.js";
import { completeUsage, type ScriptedUsage } from "./model-usage.js";
import { estimateTokens, inputTokens } from "./wire-common.js";

/** The unscripted usage: a rough, deterministic estimate from the request and answer sizes. */
export function estimatedUsage(request: ParsedModelRequest, action: ModelAction): ScriptedUsage {
  const outputText = action.kind === "text" ? action.text : action.kind === "tool_call" ? action.arguments : "";
  return completeUsage({ inputTokens: inputTokens(request), outputTokens: estimateTokens(outputText) });
}
