/**
 * OpenCode under a real Switchyard host that is killed with SIGKILL mid-turn and started again
 * on the same home: the orphaned `opencode serve` is reaped, and the run the crash cut short
 * continues on a resumed OpenCode session that kept the conversation. Needs the built plugin
 * and core (`npx tsc -b plugins/opencode core`).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { ScriptedModelServer, isRunning } from "@switchyard/testkit";
import { EngineChild } from "../../../core/test/support/engine-child.js";
import { PLUGIN_DIR, createTwoModelHome, hostInstance } from "./opencode-lab.js";

/** Whether a process is gone (or a zombie) within `ms`: bounded in count and time. */
async function diesWithin(pid: number, ms: number): Promise<boolean> {
  for (let waited = 0; waited < ms; waited += 100) {
    if (!isRunning(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return !isRunning(pid);
}

describe("OpenCode across a host kill -9", () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }, 60_000);

  it("reaps the orphaned opencode serve and continues the cut-short run on the same OpenCode session", async () => {
    const server = await ScriptedModelServer.start();
    cleanups.push(() => server.close());
    const openCodeHome = await createTwoModelHome(server);
    cleanups.push(() => openCodeHome.cleanup());
    const home = mkdtempSync(join(tmpdir(), "switchyard-opencode-restart-"));
    const workspace = mkdtempSync(join(tmpdir(), "switchyard-opencode-ws-"));
    cleanups.push(
      () => rmSync(home, { recursive: true, force: true }),
      () => rmSync(workspace, { recursive: true, force: true }),
    );
    const config = { plugins: [PLUGIN_DIR], providers: [hostInstance("opencode", openCodeHome)] };
    // The continued turn (the boot reconciler's message) answers with the conversation so far.
    server.script(
      (ctx) => (ctx.turn.userText ?? "").includes("Switchyard server restarted"),
      [{ reply: "finished after the restart; history: {{history}}" }],
    );

    let host = EngineChild.start(home, config);
    cleanups.push(() => host.stop());
    await host.ready;
    const projectId = await host.call<string>("project", { path: workspace });
    const threadId = await host.call<string>("thread", {
      projectId,
      instance: "opencode",
      runtimeMode: "full-access",
      prompt: "long job @@hold oc-host-crash @@reply never reached",
    });
    await server.waitForHold("oc-host-crash", 90_000);
    const before = new Database(join(home, "switchyard.db"), { readonly: true });
    const harnessPids = (before.prepare("SELECT pid FROM harness_processes").all() as { pid: number }[]).map(
      (row) => row.pid,
    );
    const firstCursor = (
      before
        .prepare("SELECT json_extract(data, '$.resumeCursor') AS cursor FROM provider_sessions WHERE thread_id = ?")
        .get(threadId) as { cursor: string | null } | undefined
    )?.cursor;
    before.close();
    expect(harnessPids.length).toBeGreaterThanOrEqual(1);
    expect(firstCursor).toMatch(/^ses_/);

    await host.kill9();
    host = EngineChild.start(home, config);
    const ready = await host.ready;
    // The reaper's SIGKILL is sent at boot; a large process takes a moment to die.
    for (const pid of harnessPids)
      expect(await diesWithin(pid, 10_000), `opencode serve pid ${pid} survived the host`).toBe(true);
    expect(ready.report).toMatchObject({ reapedProcesses: harnessPids.length });
    expect(ready.report.continuedRuns).toHaveLength(1);
    server.release("oc-host-crash");

    const waited = await host.call<{ run: { status: string; summary: string | null } | null; timedOut: boolean }>(
      "wait",
      { threadId, timeoutMs: 120_000 },
    );
    expect(waited.timedOut).toBe(false);
    expect(waited.run?.status).toBe("completed");
    expect(waited.run?.summary).toContain(
      "finished after the restart; history: long job @@hold oc-host-crash @@reply never reached",
    );
    await host.call("drain");
    await host.stop();

    const db = new Database(join(home, "switchyard.db"), { readonly: true });
    try {
      // The test host dies on SIGTERM without closing its sessions, and opencode serve does not
      // watch its parent: stop the server the second host left, as its next boot would.
      for (const { pid } of db.prepare("SELECT pid FROM harness_processes").all() as { pid: number }[]) {
        try {
          process.kill(-pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
      const cursors = (
        db
          .prepare(
            "SELECT json_extract(data, '$.resumeCursor') AS cursor FROM provider_sessions WHERE thread_id = ? ORDER BY json_extract(data, '$.openedAt')",
          )
          .all(threadId) as { cursor: string | null }[]
      ).map((row) => row.cursor);
      expect(cursors.length).toBe(2);
      expect(new Set(cursors)).toEqual(new Set([firstCursor]));
    } finally {
      db.close();
    }
  }, 300_000);
});
