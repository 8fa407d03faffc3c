/** The session-lab helpers against real processes: what /proc shows of a child this test starts. */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { commandLineOf, descendantCommandLines, environmentOf, mcpGrantFor, turnInput } from "../src/index.js";

describe("session lab", () => {
  it("reads the argv and environment of a process this test started, and of its children", async () => {
    // A child that starts a grandchild and waits; both carry markers the reads must find.
    const script =
      "require('node:child_process').spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)', 'grandchild-marker'], { stdio: 'ignore' }); process.stdout.write('ready\\n'); setTimeout(() => {}, 30000);";
    const child = spawn(process.execPath, ["-e", script, "child-marker"], {
      env: { ...process.env, SESSION_LAB_MARKER: "env-marker" },
      stdio: ["ignore", "pipe", "ignore"],
      detached: true,
    });
    try {
      await once(child.stdout, "data");
      expect(commandLineOf(child.pid!)).toContain("child-marker");
      expect(environmentOf(child.pid!)).toContain("SESSION_LAB_MARKER=env-marker");
      const lines = descendantCommandLines();
      expect(lines.some((line) => line.includes("child-marker"))).toBe(true);
      // The grandchild may take a moment to exist; the read is bounded by the attempts, not a clock.
      let found = false;
      for (let attempt = 0; attempt < 200 && !found; attempt += 1) {
        found = descendantCommandLines().some((line) => line.includes("grandchild-marker"));
        if (!found) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(found).toBe(true);
    } finally {
      process.kill(-child.pid!, "SIGKILL");
    }
  });

  it("makes a fresh turn input each call, and a grant shaped as the host's", () => {
    const first = turnInput("a");
    const second = turnInput("b", { model: "m" });
    expect(first.turnId).not.toBe(second.turnId);
    expect(second).toMatchObject({ text: "b", model: "m", runtimeMode: "full-access", interactionMode: "default", instructions: null, restartOfTurnId: null });
    expect(mcpGrantFor("http://127.0.0.1:1/mcp", "tok", { serverName: "t3-code" })).toMatchObject({ serverName: "t3-code", url: "http://127.0.0.1:1/mcp", token: "tok" });
  });
});
