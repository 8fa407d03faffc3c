import { describe, expect, it } from "vitest";
import { sessionEnvironment, toolRuleMatches, toolRuleVerdict } from "./profile-session.js";

describe("tool rules", () => {
  it("match by name, glob and argument pattern", () => {
    expect(toolRuleMatches("Bash", "bash")).toBe(true);
    expect(toolRuleMatches("Bash", "Read")).toBe(false);
    expect(toolRuleMatches("mcp__*", "mcp__github__create_issue")).toBe(true);
    expect(toolRuleMatches("Bash(git push:*)", "Bash", "git push origin main")).toBe(true);
    expect(toolRuleMatches("Bash(git push:*)", "Bash", "git status")).toBe(false);
    expect(toolRuleMatches("Bash(git push:*)", "Bash")).toBe(false);
    expect(toolRuleMatches("shell(rm *)", "shell", "rm -rf x")).toBe(true);
  });

  it("decide strictest first, with allowOnly denying what no rule names except the exempt", () => {
    const rules = { allow: ["Read", "Bash"], deny: ["Bash(rm:*)"], ask: ["Edit"], allowOnly: true };
    expect(toolRuleVerdict(rules, "Bash", "rm -rf /")).toBe("deny");
    expect(toolRuleVerdict(rules, "Bash", "ls")).toBe("allow");
    expect(toolRuleVerdict(rules, "Edit")).toBe("ask");
    expect(toolRuleVerdict(rules, "Write")).toBe("deny");
    expect(toolRuleVerdict(rules, "mcp__switchyard__task_status", null, { exempt: true })).toBe("default");
    expect(toolRuleVerdict({ ...rules, allowOnly: false }, "Write")).toBe("default");
    expect(toolRuleVerdict(null, "Bash")).toBe("default");
  });
});

describe("sessionEnvironment", () => {
  it("lays the profile's environment over the base and puts its home in the harness's variable", () => {
    const env = sessionEnvironment(
      { PATH: "/bin", CLAUDE_CONFIG_DIR: "/instance" },
      { environment: { REVIEW: "1" }, harnessHome: "/reviewer" },
      "CLAUDE_CONFIG_DIR",
    );
    expect(env).toEqual({ PATH: "/bin", CLAUDE_CONFIG_DIR: "/reviewer", REVIEW: "1" });
    expect(sessionEnvironment({ A: "1" }, {}, "HOME_VAR")).toEqual({ A: "1" });
  });
});
