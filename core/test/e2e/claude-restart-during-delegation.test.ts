import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { createClaudeHome, createPiHome, ScriptedModelServer } from "@switchyard/testkit";
import { EngineChild } from "../support/engine-child.js";

/** Alive and not a zombie (this machine's init reaps orphans slowly). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** Whether `pid` is still running after up to `boundMs` (checked every 50 ms). */
async function stillRunningAfter(pid: number, boundMs: number): Promise<boolean> {
  for (let waited = 0; running(pid) && waited < boundMs; waited += 50)
    await new Promise((resolve) => setTimeout(resolve, 50));
  return running(pid);
}

const CLAUDE_PLUGIN = fileURLToPath(new URL("../../../plugins/claude", import.meta.url));
const PI_PLUGIN = fileURLToPath(new URL("../../../plugins/pi", import.meta.url));

describe("server killed while a delegated child runs (real Claude parent on the Agent SDK, real Pi child)", () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }, 60_000);

  it("restarts, reaps the orphaned claude and pi processes, resumes Claude by session id, and the waiting parent gets exactly one result", async () => {
    const server = await ScriptedModelServer.start();
    cleanups.push(() => server.close());
    const claudeHome = await createClaudeHome({ modelServerUrl: server.url, model: "claude-fake", toolSearch: true });
    const piHome = await createPiHome({ modelServerUrl: server.url });
    cleanups.push(
      () => claudeHome.cleanup(),
      () => piHome.cleanup(),
    );
    const home = mkdtempSync(join(tmpdir(), "switchyard-e2e-restart-"));
    const workspace = mkdtempSync(join(tmpdir(), "switchyard-e2e-ws-"));
    cleanups.push(
      () => rmSync(home, { recursive: true, force: true }),
      () => rmSync(workspace, { recursive: true, force: true }),
    );
    const config = {
      plugins: [CLAUDE_PLUGIN, PI_PLUGIN],
      providers: [
        { id: "claude", driver: "claude", homePath: claudeHome.home, environment: claudeHome.env },
        { id: "pi", driver: "pi", homePath: piHome.home, environment: piHome.env },
      ],
    };
    // A resumed agent asked to continue finishes the task it was given.
    // (Pi talks Chat Completions here; Claude, the parent, Anthropic Messages.)
    server.script(
      (ctx) =>
        (ctx.turn.userText ?? "").includes("Switchyard server restarted") &&
        ctx.request.api === "openai-chat-completions",
      [{ reply: "Pi finished after the restart" }],
    );

    let host = EngineChild.start(home, config);
    cleanups.push(() => host.stop());
    await host.ready;
    const projectId = await host.call<string>("project", { path: workspace });
    const task = {
      task: "long job @@shell echo started @@then @@hold pi-child @@reply never reached",
      target: { providerInstanceId: "pi" },
      mode: "wait",
      clientRequestId: "restart-e2e",
    };
    const parent = await host.call<string>("thread", {
      projectId,
      instance: "claude",
      runtimeMode: "full-access",
      prompt: `delegate @@tool delegate_task ${JSON.stringify(task)}`,
    });
    // Wait until Pi's second model call is held: the child has started (its first call ran a
    // command, so Pi has written its session file) and the parent waits on it.
    await server.waitForHold("pi-child", 90_000);
    const harnessPids = new Database(join(home, "switchyard.db"), { readonly: true })
      .prepare("SELECT pid FROM harness_processes")
      .all() as { pid: number }[];
    expect(harnessPids.length).toBeGreaterThanOrEqual(2);

    await host.kill9();
    host = EngineChild.start(home, config);
    const ready = await host.ready;
    // The previous host's harness processes (claude, Pi) were stopped, not left running.
    // The boot sent SIGKILL to each group; on a loaded machine the kernel may take a moment to
    // finish a killed process, so allow it a bounded time before calling it a survivor.
    for (const { pid } of harnessPids)
      expect(await stillRunningAfter(pid, 10_000), `harness pid ${pid} survived the restart`).toBe(false);
    expect(ready.report, JSON.stringify(ready.report)).toMatchObject({
      continuedRuns: [expect.any(String), expect.any(String)],
    });
    server.release("pi-child");

    await host.call("waitFor", {
      sql: "SELECT 1 FROM delegated_tasks WHERE json_extract(data, '$.finalizedAt') IS NOT NULL",
      params: [],
      timeoutMs: 120_000,
    });
    await host.call("waitFor", {
      sql: "SELECT 1 FROM items WHERE id LIKE 'message:task-result:%'",
      params: [],
      timeoutMs: 120_000,
    });
    await host.call("waitFor", {
      sql: "SELECT 1 FROM runs WHERE thread_id = ? AND status = 'completed' AND json_extract(data, '$.kind') = 'notification'",
      params: [parent],
      timeoutMs: 120_000,
    });
    await host.call("drain");
    await host.stop();

    const db = new Database(join(home, "switchyard.db"), { readonly: true });
    try {
      const tasks = (db.prepare("SELECT data FROM delegated_tasks").all() as { data: string }[]).map((row) =>
        JSON.parse(row.data),
      );
      expect(tasks).toHaveLength(1);
      expect(tasks[0]).toMatchObject({
        status: "completed",
        summary: "Pi finished after the restart",
        delivery: "delivered",
      });
      expect(db.prepare("SELECT COUNT(*) AS n FROM context_transfers WHERE kind = 'subagent_result'").get()).toEqual({
        n: 1,
      });
      expect(db.prepare("SELECT COUNT(*) AS n FROM items WHERE id LIKE 'message:task-result:%'").get()).toEqual({
        n: 1,
      });
    } finally {
      db.close();
    }
    // Claude resumed its session (the same session id, in a new process) and its next model
    // request carried the result.
    const claudeRequests = server.requests.filter((r) => r.api === "anthropic-messages");
    const resumed = claudeRequests.find((r) => (r.userText ?? "").includes("Switchyard server restarted"));
    expect(resumed, "the parent was not continued on a resumed Claude session").toBeDefined();
    expect(JSON.stringify(resumed!.body)).toContain("delegate @@tool delegate_task");
    expect(claudeRequests.some((r) => (r.userText ?? "").includes("Pi finished after the restart"))).toBe(true);
  }, 300_000);
});
