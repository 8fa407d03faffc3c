import { describe, expect, it } from "vitest";
import { parseMcpToolName } from "./mcp-tool-name.js";

describe("parseMcpToolName", () => {
  it("splits mcp__<server>__<tool>, keeping a tool name that has __ in it", () => {
    expect(parseMcpToolName("mcp__switchyard__delegate_task")).toEqual({ server: "switchyard", tool: "delegate_task" });
    expect(parseMcpToolName("mcp__t3-code__a__b")).toEqual({ server: "t3-code", tool: "a__b" });
    expect(parseMcpToolName("Bash")).toBeNull();
  });
});
