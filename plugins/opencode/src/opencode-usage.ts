import type { TurnUsage } from "@switchyard/sdk";
import type { StepFinishPart } from "./opencode-wire.js";

const isCount = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value) && value >= 0;

/**
 * One OpenCode step's usage (`step-finish`) in the spec's terms. OpenCode's `output` excludes
 * its `reasoning` tokens (it bills both at the output price); the spec's `outputTokens`
 * includes them, so they are added back and reported as the reasoning breakdown. OpenCode's
 * `input` already excludes cache reads and writes. Its cost comes from its own price table
 * and is 0 for a model it has no price for: a 0 for tokens spent is left out (the host prices
 * or flags it), never reported as $0.
 */
export function stepUsageOf(part: Pick<StepFinishPart, "tokens" | "cost">, model: string | null): TurnUsage {
  const tokens = part.tokens;
  const reasoning = isCount(tokens.reasoning) ? tokens.reasoning : undefined;
  const figures: Omit<TurnUsage, "byModel"> = {
    ...(isCount(tokens.input) ? { inputTokens: tokens.input } : {}),
    ...(isCount(tokens.output) ? { outputTokens: tokens.output + (reasoning ?? 0) } : {}),
    ...(reasoning !== undefined ? { reasoningOutputTokens: reasoning } : {}),
    ...(isCount(tokens.cache?.read) ? { cacheReadInputTokens: tokens.cache.read } : {}),
    ...(isCount(tokens.cache?.write) ? { cacheCreationInputTokens: tokens.cache.write } : {}),
  };
  const spent =
    (figures.inputTokens ?? 0) +
    (figures.outputTokens ?? 0) +
    (figures.cacheReadInputTokens ?? 0) +
    (figures.cacheCreationInputTokens ?? 0);
  const priced = isCount(part.cost) && (part.cost > 0 || spent === 0) ? { ...figures, costUsd: part.cost } : figures;
  return model !== null ? { ...priced, byModel: { [model]: priced } } : priced;
}
