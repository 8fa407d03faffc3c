import { describe, expect, it } from "vitest";
import type { SDKResultMessage } from "@anthropic-ai/claude-agent-sdk";
import { turnUsageOf } from "../src/claude-turn.js";

/**
 * Claude's per-turn usage from its `result` message, without a harness: the shapes are those
 * Claude Code 2.1.332 writes (claude-adapter.test.ts runs the real CLI against the scripted
 * model server).
 */
const result = (fields: Record<string, unknown>) =>
  ({ type: "result", subtype: "success", ...fields }) as unknown as SDKResultMessage;

describe("turnUsageOf", () => {
  it("takes the turn's tokens from usage and its cost, thinking tokens and models from model_usage_since_last_result", () => {
    const usage = turnUsageOf(
      result({
        usage: {
          input_tokens: 12,
          output_tokens: 340,
          cache_read_input_tokens: 9_000,
          cache_creation_input_tokens: 500,
        },
        total_cost_usd: 7.5,
        model_usage_since_last_result: {
          "claude-sonnet-4-5-20250929": {
            inputTokens: 10,
            outputTokens: 300,
            thinkingTokens: 120,
            cacheReadInputTokens: 9_000,
            cacheCreationInputTokens: 500,
            costUSD: 0.0093,
          },
          "claude-haiku-4-5-20251001": {
            inputTokens: 2,
            outputTokens: 40,
            thinkingTokens: 0,
            cacheReadInputTokens: 0,
            cacheCreationInputTokens: 0,
            costUSD: 0.0002,
          },
        },
      }),
    );
    expect(usage).toMatchObject({
      inputTokens: 12,
      outputTokens: 340,
      cacheReadInputTokens: 9_000,
      cacheCreationInputTokens: 500,
      reasoningOutputTokens: 120,
    });
    // The running total_cost_usd is not the turn's cost.
    expect(usage.costUsd).toBeCloseTo(0.0095, 10);
    expect(usage.byModel!["claude-sonnet-4-5-20250929"]).toEqual({
      inputTokens: 10,
      outputTokens: 300,
      reasoningOutputTokens: 120,
      cacheReadInputTokens: 9_000,
      cacheCreationInputTokens: 500,
      costUsd: 0.0093,
    });
  });

  it("leaves out a cost no model reported and thinking tokens an older CLI did not count: unknown, not 0", () => {
    const usage = turnUsageOf(
      result({
        usage: { input_tokens: 5, output_tokens: 7 },
        model_usage_since_last_result: {
          "claude-opus-4-5": { inputTokens: 5, outputTokens: 7, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
        },
      }),
    );
    expect(usage).toEqual({
      inputTokens: 5,
      outputTokens: 7,
      byModel: {
        "claude-opus-4-5": { inputTokens: 5, outputTokens: 7, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
      },
    });
    // Without the per-turn breakdown there is no per-turn cost at all.
    expect(turnUsageOf(result({ usage: { input_tokens: 5, output_tokens: 7 }, total_cost_usd: 3 }))).toEqual({
      inputTokens: 5,
      outputTokens: 7,
    });
  });
});
