import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";

describe("switchyard demo", () => {
  it("runs a real Codex thread that delegates to a real Pi thread and prints both transcripts and the lineage", async () => {
    const result = await runCli(["demo"], { timeoutMs: 240_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("MCP endpoint    http://127.0.0.1:");
    expect(result.stdout).toContain("Parent thread (codex)");
    expect(result.stdout).toContain("[tool call] switchyard/delegate_task → completed");
    expect(result.stdout).toContain("Child thread (pi)");
    expect(result.stdout).toMatch(/\[assistant\] Pi wrote: Steel rails cross at dawn/);
    expect(result.stdout).toMatch(/└─ pi {2}Poem about rail yards {2}\(task task:[^:]+:[^ ]+: completed/);
  }, 300_000);
});
