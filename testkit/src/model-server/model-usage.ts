/**
 * The token counts the scripted model reports for one answer, in wire-neutral terms. Each wire
 * writes them its own way: OpenAI counts cached tokens inside `input_tokens` /
 * `prompt_tokens` and reasoning inside output, Anthropic reports cache reads and writes beside
 * `input_tokens`, Gemini counts cached content inside `promptTokenCount`.
 */
export interface ScriptedUsage {
  /** Input tokens not served from a prompt cache. */
  inputTokens: number;
  /** Input tokens served from a prompt cache. */
  cachedInputTokens: number;
  /** Input tokens written to a prompt cache (Anthropic only reports these). */
  cacheWriteInputTokens: number;
  /** Output tokens, reasoning included. */
  outputTokens: number;
  /** Of the output tokens, those spent on reasoning. */
  reasoningOutputTokens: number;
}

/** Usage a test scripts: any subset; the rest is 0. */
export type ScriptedUsageInput = Partial<ScriptedUsage>;

/** A scripted usage with every figure filled in. */
export function completeUsage(input: ScriptedUsageInput): ScriptedUsage {
  return {
    inputTokens: input.inputTokens ?? 0,
    cachedInputTokens: input.cachedInputTokens ?? 0,
    cacheWriteInputTokens: input.cacheWriteInputTokens ?? 0,
    outputTokens: input.outputTokens ?? 0,
    reasoningOutputTokens: input.reasoningOutputTokens ?? 0,
  };
}

const USAGE_KEYS: Readonly<Record<string, keyof ScriptedUsage>> = {
  in: "inputTokens",
  cached: "cachedInputTokens",
  "cache-write": "cacheWriteInputTokens",
  out: "outputTokens",
  reasoning: "reasoningOutputTokens",
};

/** Parses `in=1000 cached=200 out=50 reasoning=10 cache-write=0` (the `@@usage` directive). */
export function parseUsageDirective(argument: string): { usage?: ScriptedUsageInput; error?: string } {
  const usage: ScriptedUsageInput = {};
  for (const pair of argument.split(/\s+/).filter((part) => part !== "")) {
    const [key = "", value = ""] = pair.split("=", 2);
    const figure = USAGE_KEYS[key];
    const number = Number(value);
    if (figure === undefined || value === "" || !Number.isInteger(number) || number < 0) {
      return {
        error: `@@usage: "${pair}" is not one of ${Object.keys(USAGE_KEYS)
          .map((k) => `${k}=<count>`)
          .join(", ")}`,
      };
    }
    usage[figure] = number;
  }
  return { usage };
}

/** OpenAI Responses `usage`. */
export function responsesUsage(usage: ScriptedUsage): Record<string, unknown> {
  const input = usage.inputTokens + usage.cachedInputTokens;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage.cachedInputTokens },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningOutputTokens },
    total_tokens: input + usage.outputTokens,
  };
}

/** OpenAI Chat Completions `usage`. */
export function chatCompletionsUsage(usage: ScriptedUsage): Record<string, unknown> {
  const prompt = usage.inputTokens + usage.cachedInputTokens;
  return {
    prompt_tokens: prompt,
    prompt_tokens_details: { cached_tokens: usage.cachedInputTokens },
    completion_tokens: usage.outputTokens,
    completion_tokens_details: { reasoning_tokens: usage.reasoningOutputTokens },
    total_tokens: prompt + usage.outputTokens,
  };
}

/** Anthropic Messages `usage`. */
export function anthropicUsage(usage: ScriptedUsage): {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
} {
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cache_creation_input_tokens: usage.cacheWriteInputTokens,
    cache_read_input_tokens: usage.cachedInputTokens,
  };
}

/** Gemini `usageMetadata`. */
export function geminiUsageMetadata(usage: ScriptedUsage): Record<string, unknown> {
  const prompt = usage.inputTokens + usage.cachedInputTokens;
  return {
    promptTokenCount: prompt,
    ...(usage.cachedInputTokens > 0 ? { cachedContentTokenCount: usage.cachedInputTokens } : {}),
    candidatesTokenCount: usage.outputTokens - usage.reasoningOutputTokens,
    ...(usage.reasoningOutputTokens > 0 ? { thoughtsTokenCount: usage.reasoningOutputTokens } : {}),
    totalTokenCount: prompt + usage.outputTokens,
  };
}
