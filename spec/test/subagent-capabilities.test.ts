/**
 * The native sub-agent capability fields decode pessimistically: control, usage and transcript
 * are claims about reported sub-agents, so none of them survives without `subagents.native`.
 */
import { describe, expect, it } from "vitest";
import { NO_CAPABILITIES, decodeCapabilities } from "../src/index.js";

describe("subagents capability decoding", () => {
  it("nothing declared: no native sub-agents, no control, nothing reported", () => {
    expect(decodeCapabilities({}).capabilities.subagents).toEqual({
      native: "none",
      exposesChildThreadIds: false,
      control: "none",
      reportsUsage: false,
      reportsTranscript: false,
    });
    expect(NO_CAPABILITIES.subagents.control).toBe("none");
  });

  it("an older declaration that says only `observed` is observed, without usage or transcript", () => {
    const { capabilities, warnings } = decodeCapabilities({ subagents: { native: "observed" } });
    expect(capabilities.subagents).toMatchObject({ control: "observe", reportsUsage: false, reportsTranscript: false });
    expect(warnings).toEqual([]);
  });

  it("keeps a well-formed declaration", () => {
    const { capabilities, warnings } = decodeCapabilities({
      subagents: { native: "full", control: "stop", reportsUsage: true, reportsTranscript: true },
    });
    expect(capabilities.subagents).toMatchObject({ control: "stop", reportsUsage: true, reportsTranscript: true });
    expect(warnings).toEqual([]);
  });

  it("weakens claims about sub-agents the provider does not report, and unknown levels, with a warning each", () => {
    const without = decodeCapabilities({
      subagents: { control: "steer", reportsUsage: true, reportsTranscript: true },
    });
    expect(without.capabilities.subagents).toMatchObject({
      native: "none",
      control: "none",
      reportsUsage: false,
      reportsTranscript: false,
    });
    expect(without.warnings).toHaveLength(3);
    const unknown = decodeCapabilities({ subagents: { native: "observed", control: "own" } });
    expect(unknown.capabilities.subagents.control).toBe("observe");
    expect(unknown.warnings).toEqual([
      'subagents.control: expected none|observe|stop|steer, got "own"; treated as observe',
    ]);
  });
});
