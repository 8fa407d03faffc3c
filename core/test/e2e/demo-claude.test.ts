import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";

describe("switchyard demo --pair", () => {
  it("claude:pi runs a real Claude thread (Agent SDK) that delegates to a real Pi thread, offline", async () => {
    const result = await runCli(["demo", "--pair", "claude:pi"], { timeoutMs: 240_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("a real Claude thread delegates to a real Pi thread");
    expect(result.stdout).toContain("Parent thread (claude)");
    expect(result.stdout).toContain("[tool call] switchyard/delegate_task → completed");
    expect(result.stdout).toContain("Child thread (pi)");
    expect(result.stdout).toMatch(/\[assistant\] Pi wrote: Steel rails cross at dawn/);
    expect(result.stdout).toMatch(/└─ pi {2}Poem about rail yards {2}\(task task:[^:]+:[^ ]+: completed/);
  }, 300_000);

  it("refuses a pair it cannot run, naming the drivers it can", async () => {
    const result = await runCli(["demo", "--pair", "claude:claude"], { timeoutMs: 60_000 });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("--pair takes <parent>:<child>, two different drivers among codex, pi, claude");
  }, 120_000);
});
