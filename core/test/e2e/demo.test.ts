import { existsSync } from "node:fs";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { CLI, runCli } from "../support/cli.js";
import { until } from "../support/until.js";

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

  it("--keep records the server in its home (status, threads, ui find it) and prints a sign-in link that works", async () => {
    const demo = execa(process.execPath, [CLI, "demo", "--keep"], { reject: false, stdin: "ignore" });
    let stdout = "";
    demo.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    try {
      await until("the server is kept", () => stdout.includes("Press Ctrl-C to stop."), {
        attempts: 4_800,
        intervalMs: 50,
      });
      const link = /^Web UI: (http:\/\/127\.0\.0\.1:\d+)\/#code=(sy_uc_[\w-]+) /m.exec(stdout);
      expect(link, stdout).not.toBeNull();
      const [, url, code] = link!;
      const home = /\(home ([^)]+)\)\. Press Ctrl-C/.exec(stdout)![1]!;
      expect(stdout).toContain(`switchyard threads list --home ${home}`);

      const status = await runCli(["status", "--json", "--home", home]);
      expect(status.code, status.stderr).toBe(0);
      expect((JSON.parse(status.stdout) as { server: { url: string; pid: number } }).server).toMatchObject({
        url,
        pid: demo.pid,
      });
      const threads = await runCli(["threads", "list", "--home", home]);
      expect(threads.stdout).toMatch(/Ask Pi for a poem\s+codex/);
      const ui = await runCli(["ui", "--json", "--home", home]);
      expect((JSON.parse(ui.stdout) as { link: string }).link.startsWith(`${url}/#code=`)).toBe(true);

      const signIn = await fetch(`${url}/api/v1/ui/session`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          origin: url!,
          "sec-fetch-site": "same-origin",
          "x-switchyard-csrf": "1",
        },
        body: JSON.stringify({ code }),
      });
      expect(signIn.status).toBe(200);
      expect(await signIn.json()).toMatchObject({ verbs: ["read", "operate", "approve"] });

      demo.kill("SIGINT");
      expect((await demo).exitCode).toBe(0);
      expect(existsSync(home)).toBe(false);
    } finally {
      demo.kill("SIGKILL");
    }
  }, 300_000);
});
