import type { ModelDescriptor } from "@switchyard/sdk";

/** Pi's thinking levels below `xhigh`, weakest first (`pi --thinking <level>`). */
const PI_THINKING_LEVELS = ["off", "minimal", "low", "medium", "high"] as const;

/**
 * The efforts a Pi model takes: Pi's thinking levels, for a model Pi marks as reasoning, with
 * `xhigh` only where the model maps it (models.json `thinkingLevelMap.xhigh`; `--list-models`
 * cannot tell, so those models do not offer it). A model without reasoning runs only "off",
 * so it takes no effort setting.
 */
export function piModelEfforts(model: {
  readonly reasoning: boolean;
  readonly xhigh?: boolean;
}): Pick<ModelDescriptor, "efforts"> {
  if (!model.reasoning) return {};
  return { efforts: [...PI_THINKING_LEVELS, ...(model.xhigh === true ? ["xhigh"] : [])] };
}
