import type { ModelDescriptor } from "@switchyard/sdk";
import type { v2 } from "../codex-wire.js";

/**
 * The efforts a Codex model takes, from its `model/list` entry (`supportedReasoningEfforts`,
 * `defaultReasoningEffort`): Codex's own names, passed back as `turn/start` `effort` (app-server)
 * or `model_reasoning_effort` (exec). A model Codex lists without efforts takes none.
 */
export function codexModelEfforts(
  model: Pick<v2.Model, "supportedReasoningEfforts" | "defaultReasoningEffort">,
): Pick<ModelDescriptor, "efforts" | "defaultEffort"> {
  const efforts = (model.supportedReasoningEfforts ?? [])
    .map((option) => option.reasoningEffort)
    .filter((effort) => typeof effort === "string" && effort !== "");
  if (efforts.length === 0) return {};
  return {
    efforts,
    ...(typeof model.defaultReasoningEffort === "string" && efforts.includes(model.defaultReasoningEffort)
      ? { defaultEffort: model.defaultReasoningEffort }
      : {}),
  };
}
