import { describe, expect, it } from "vitest";
import { stepUsageOf } from "../src/opencode-usage.js";

/**
 * One OpenCode `step-finish` part's usage, without a server (opencode-adapter.test.ts runs the
 * real `opencode serve` against the scripted model server and sums the parts of a turn).
 */
describe("stepUsageOf", () => {
  it("adds reasoning back into output (OpenCode bills them apart) and keeps the cache figures and OpenCode's cost", () => {
    const part = {
      tokens: { input: 100, output: 40, reasoning: 25, cache: { read: 3_000, write: 200 } },
      cost: 0.0123,
    };
    const figures = {
      inputTokens: 100,
      outputTokens: 65,
      reasoningOutputTokens: 25,
      cacheReadInputTokens: 3_000,
      cacheCreationInputTokens: 200,
      costUsd: 0.0123,
    };
    expect(stepUsageOf(part, "anthropic/claude-sonnet-4-5")).toEqual({
      ...figures,
      byModel: { "anthropic/claude-sonnet-4-5": figures },
    });
  });

  it("leaves out OpenCode's $0 for tokens spent on a model it cannot price: unknown cost, not $0", () => {
    expect(
      stepUsageOf({ tokens: { input: 10, output: 5, reasoning: 0, cache: { read: 0, write: 0 } }, cost: 0 }, null),
    ).toEqual({
      inputTokens: 10,
      outputTokens: 5,
      reasoningOutputTokens: 0,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
    });
  });
});
