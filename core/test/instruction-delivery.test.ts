import { describe, expect, it } from "vitest";
import { deliverInstructions } from "../src/engine/instruction-delivery.js";

describe("instruction delivery: one channel, composed by the host", () => {
  it("hands instructions to a provider with an instruction channel, in order, without touching the text", () => {
    expect(deliverInstructions("do it", ["orchestration", null, "  ", "role"], true)).toEqual({
      text: "do it",
      instructions: "orchestration\n\nrole",
    });
  });

  it("folds them into the prompt for any other provider, and passes none on the channel", () => {
    expect(deliverInstructions("do it", ["orchestration", "role"], false)).toEqual({
      text: "<switchyard_instructions>\norchestration\n\nrole\n</switchyard_instructions>\n\ndo it",
      instructions: null,
    });
  });

  it("leaves a turn without instructions as it is", () => {
    expect(deliverInstructions("do it", [null, ""], false)).toEqual({ text: "do it", instructions: null });
  });
});
