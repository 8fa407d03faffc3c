import type * as acp from "@agentclientprotocol/sdk/unstable";
import type { TurnUsage } from "../harness/index.js";

const isCount = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value) && value >= 0;

/**
 * A `session/prompt` response's usage (ACP's unstable `usage`) in the spec's terms. ACP says
 * `totalTokens` sums every token type but not whether `inputTokens` holds the cache figures
 * or `outputTokens` the thought tokens, and agents follow their model vendor's convention
 * (Anthropic: apart; OpenAI: inside). The total tells which: a figure is apart when the total
 * has room for it. The spec's input excludes cache reads and writes; its output includes
 * reasoning. A figure the agent left out stays out.
 */
export function acpUsageOf(usage: acp.Usage): TurnUsage {
  const input = isCount(usage.inputTokens) ? usage.inputTokens : 0;
  const output = isCount(usage.outputTokens) ? usage.outputTokens : 0;
  const cacheRead = isCount(usage.cachedReadTokens) ? usage.cachedReadTokens : undefined;
  const cacheWrite = isCount(usage.cachedWriteTokens) ? usage.cachedWriteTokens : undefined;
  const thought = isCount(usage.thoughtTokens) ? usage.thoughtTokens : undefined;
  const cache = (cacheRead ?? 0) + (cacheWrite ?? 0);
  const total = isCount(usage.totalTokens) ? usage.totalTokens : null;
  const cacheApart = total === null || cache === 0 || total >= input + output + cache;
  const thoughtApart = thought !== undefined && thought > 0 && total !== null && total >= input + output + (cacheApart ? cache : 0) + thought;
  return {
    ...(isCount(usage.inputTokens) ? { inputTokens: cacheApart ? input : Math.max(0, input - cache) } : {}),
    ...(isCount(usage.outputTokens) ? { outputTokens: thoughtApart ? output + thought! : output } : {}),
    ...(cacheRead !== undefined ? { cacheReadInputTokens: cacheRead } : {}),
    ...(cacheWrite !== undefined ? { cacheCreationInputTokens: cacheWrite } : {}),
    ...(thought !== undefined ? { reasoningOutputTokens: thought } : {}),
  };
}
