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
  const thoughtApart =
    thought !== undefined &&
    thought > 0 &&
    total !== null &&
    total >= input + output + (cacheApart ? cache : 0) + thought;
  return {
    ...(isCount(usage.inputTokens) ? { inputTokens: cacheApart ? input : Math.max(0, input - cache) } : {}),
    ...(isCount(usage.outputTokens) ? { outputTokens: thoughtApart ? output + thought! : output } : {}),
    ...(cacheRead !== undefined ? { cacheReadInputTokens: cacheRead } : {}),
    ...(cacheWrite !== undefined ? { cacheCreationInputTokens: cacheWrite } : {}),
    ...(thought !== undefined ? { reasoningOutputTokens: thought } : {}),
  };
}

/** The session's cumulative cost in US dollars from a `usage_update`, or null (another update, no cost, another currency). */
export function sessionCostUsdOf(update: acp.SessionUpdate): number | null {
  if (update.sessionUpdate !== "usage_update") return null;
  const cost = update.cost;
  return cost !== null && cost !== undefined && cost.currency.toUpperCase() === "USD" && isCount(cost.amount)
    ? cost.amount
    : null;
}

/**
 * A turn's ending with its cost: what the session's cumulative cost (`usage_update`) grew by
 * during the turn. Left out when either end is unknown (a loaded session before its first
 * report, an agent that reports no cost), and when it did not grow though the turn spent
 * tokens (the agent has no price for its model): unknown, never $0.
 */
export function withTurnCost<E extends { readonly usage?: TurnUsage }>(
  ending: E,
  baselineUsd: number | null,
  currentUsd: number | null,
): E {
  if (baselineUsd === null || currentUsd === null || currentUsd < baselineUsd) return ending;
  const cost = currentUsd - baselineUsd;
  const spent = (ending.usage?.inputTokens ?? 0) + (ending.usage?.outputTokens ?? 0);
  if (cost === 0 && (spent > 0 || ending.usage === undefined)) return ending;
  return { ...ending, usage: { ...ending.usage, costUsd: cost } };
}
