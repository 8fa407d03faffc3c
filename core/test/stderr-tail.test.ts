import { describe, expect, it } from "vitest";
import { ProcessRunner } from "../src/plugin-host/process-runner.js";
import { createSilentLogger } from "../src/logging/logger.js";
import { STDERR_TAIL_LINES, withStderrTail } from "../src/spec/index.js";

const runner = new ProcessRunner(createSilentLogger(), null);

/** Runs a Node script through the host's process helpers and waits for it to exit. */
async function runScript(script: string, env: Record<string, string> = {}) {
  const child = runner.spawn(process.execPath, ["-e", script], {
    cwd: process.cwd(),
    env,
    label: "stderr test",
    stdin: "ignore",
  });
  const seenByPlugin: string[] = [];
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => seenByPlugin.push(chunk));
  const exit = await child.exited;
  return { child, exit, seenByPlugin: seenByPlugin.join("") };
}

describe("harness stderr tail (the host's process helpers)", () => {
  it("keeps the last lines a harness wrote on stderr, with secrets scrubbed, and the plugin still reads the stream", async () => {
    const { child, exit, seenByPlugin } = await runScript(
      `for (let i = 1; i <= 30; i++) console.error("line " + i + (i === 29 ? " Authorization: Bearer abcdefghijklmnop" : "") + (i === 30 ? " key=" + process.env.MY_API_KEY : "")); process.exit(2);`,
      { MY_API_KEY: "supersecret-value-123" },
    );
    expect(exit.exitCode).toBe(2);
    const tail = child.stderrTail();
    const lines = tail.split("\n");
    expect(lines).toHaveLength(STDERR_TAIL_LINES);
    expect(lines[0]).toBe("line 11");
    expect(lines.at(-1)).toBe("line 30 key=[redacted]");
    expect(tail).toContain("Bearer [redacted]");
    expect(tail).not.toContain("supersecret-value-123");
    expect(tail).not.toContain("abcdefghijklmnop");
    expect(seenByPlugin).toContain("supersecret-value-123");
  });

  it("keeps the tail of stderr nobody reads, past a megabyte of output", async () => {
    const child = runner.spawn(
      process.execPath,
      ["-e", `process.stderr.write("x".repeat(1 << 20) + "\\nlast words\\n")`],
      { cwd: process.cwd(), label: "chatty", stdin: "ignore" },
    );
    expect((await child.exited).exitCode).toBe(0);
    expect(child.stderrTail().split("\n").at(-1)).toBe("last words");
  });

  it("appends a tail to an error message once, and leaves a message without one alone", () => {
    expect(withStderrTail("codex app-server exited (code 1).", "Error: CODEX_HOME points to /x")).toBe(
      "codex app-server exited (code 1). Its stderr ended with:\nError: CODEX_HOME points to /x",
    );
    expect(withStderrTail("failed", "")).toBe("failed");
    expect(withStderrTail("failed: boom", "boom")).toBe("failed: boom");
  });
});
