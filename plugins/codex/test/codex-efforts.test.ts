import { describe, expect, it } from "vitest";
import { codexModelEfforts } from "../src/shared/codex-efforts.js";

// What the probe reports of a `model/list` entry's reasoning efforts (the real app-server's
// shape, codex-wire v2 Model): the values the host then accepts as target.effort.
describe("codexModelEfforts", () => {
  it("lists the model's supported efforts in Codex's order and its default", () => {
    expect(
      codexModelEfforts({
        supportedReasoningEfforts: [
          { reasoningEffort: "low", description: "fast" },
          { reasoningEffort: "medium", description: "balanced" },
          { reasoningEffort: "high", description: "deep" },
        ],
        defaultReasoningEffort: "medium",
      }),
    ).toEqual({ efforts: ["low", "medium", "high"], defaultEffort: "medium" });
  });

  it("reports no efforts for a model without any, and no default outside the list", () => {
    expect(codexModelEfforts({ supportedReasoningEfforts: [], defaultReasoningEffort: "medium" })).toEqual({});
    expect(
      codexModelEfforts({
        supportedReasoningEfforts: [{ reasoningEffort: "high", description: "" }],
        defaultReasoningEffort: "none",
      }),
    ).toEqual({ efforts: ["high"] });
  });
});
