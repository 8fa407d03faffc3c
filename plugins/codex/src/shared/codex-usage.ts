import type { TurnUsage } from "@switchyard/sdk";

/** One model request's token counts as both Codex drivers report them (camelCase here). */
export interface CodexTokenCounts {
  /** Input tokens, cached ones included (OpenAI's convention). */
  readonly inputTokens: number;
  readonly cachedInputTokens?: number | undefined;
  readonly cacheWriteInputTokens?: number | undefined;
  /** Output tokens, reasoning included. */
  readonly outputTokens: number;
  readonly reasoningOutputTokens?: number | undefined;
}

const isCount = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value) && value >= 0;

/**
 * Codex's counts in the spec's terms. Codex counts cached input inside `inputTokens`; the
 * spec's `inputTokens` excludes cache reads, so they are taken out (the price table bills them
 * at the cache price). Reasoning stays inside `outputTokens`, as both conventions have it. A
 * figure Codex left out stays out (never a 0 it did not measure).
 */
export function codexUsageOf(counts: CodexTokenCounts): TurnUsage {
  const cached = isCount(counts.cachedInputTokens) ? counts.cachedInputTokens : undefined;
  return {
    ...(isCount(counts.inputTokens) ? { inputTokens: Math.max(0, counts.inputTokens - (cached ?? 0)) } : {}),
    ...(cached !== undefined ? { cacheReadInputTokens: cached } : {}),
    ...(isCount(counts.cacheWriteInputTokens) ? { cacheCreationInputTokens: counts.cacheWriteInputTokens } : {}),
    ...(isCount(counts.outputTokens) ? { outputTokens: counts.outputTokens } : {}),
    ...(isCount(counts.reasoningOutputTokens) ? { reasoningOutputTokens: counts.reasoningOutputTokens } : {}),
  };
}

/** `codex exec --json`'s snake_case usage (`turn.completed`), in the spec's terms. */
export function codexExecUsageOf(usage: {
  readonly input_tokens: number;
  readonly cached_input_tokens?: number;
  readonly cache_write_input_tokens?: number;
  readonly output_tokens: number;
  readonly reasoning_output_tokens?: number;
}): TurnUsage {
  return codexUsageOf({
    inputTokens: usage.input_tokens,
    cachedInputTokens: usage.cached_input_tokens,
    cacheWriteInputTokens: usage.cache_write_input_tokens,
    outputTokens: usage.output_tokens,
    reasoningOutputTokens: usage.reasoning_output_tokens,
  });
}

/**
 * A model request's usage with the model that served it. Codex reports no model with its token
 * counts and the host often names none (Codex then runs its config's model): without it the
 * host's price table could not price the turn.
 */
export function codexModelUsage(usage: TurnUsage, model: string | null): TurnUsage {
  if (model === null) return usage;
  const { byModel: _byModel, ...figures } = usage;
  return { ...figures, byModel: { [model]: figures } };
}
