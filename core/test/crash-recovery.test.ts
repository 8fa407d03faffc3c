import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { releaseGate } from "@switchyard/testkit/scripted-provider";
import { EngineChild } from "./support/engine-child.js";
import { untilGatesReached } from "./support/gates.js";

/** How many times each run was written with a terminal status, from the event log itself. */
function terminalWrites(dbFile: string): Map<string, number> {
  const db = new Database(dbFile, { readonly: true });
  try {
    const counts = new Map<string, number>();
    const rows = db
      .prepare(
        "SELECT entity_id, json_extract(data, '$.status') AS status FROM events WHERE entity = 'run' ORDER BY sequence",
      )
      .all() as { entity_id: string; status: string }[];
    const last = new Map<string, string>();
    for (const row of rows) {
      const terminal = ["completed", "failed", "cancelled", "interrupted"].includes(row.status);
      if (terminal && last.get(row.entity_id) !== row.status)
        counts.set(row.entity_id, (counts.get(row.entity_id) ?? 0) + 1);
      last.set(row.entity_id, row.status);
    }
    return counts;
  } finally {
    db.close();
  }
}

describe("crash recovery: a host killed with SIGKILL mid-run", () => {
  const dirs: string[] = [];
  let child: EngineChild | null = null;
  afterEach(async () => {
    await child?.stop();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("continues or finalizes every run exactly once after a restart, and the waiting parent gets exactly one result", async () => {
    const root = mkdtempSync(join(tmpdir(), "switchyard-crash-"));
    dirs.push(root);
    const home = join(root, "home");
    const gateDir = join(root, "gates");
    const stateDir = join(root, "state");
    const workspace = mkdtempSync(join(tmpdir(), "switchyard-crash-ws-"));
    dirs.push(workspace);

    child = EngineChild.startScripted(home, gateDir, stateDir);
    await child.ready;
    const projectId = await child.call<string>("project", { path: workspace });
    // A plain run held at a gate, a queued run behind it, and a parent waiting on a delegated child.
    const plain = await child.call<string>("thread", {
      projectId,
      instance: "alpha",
      prompt: "@@gate plain @@reply plain-done",
    });
    const queued = await child.call<{ runId: string }>("send", {
      threadId: plain,
      text: "@@reply queued-done",
      mode: "queue",
    });
    const delegation = {
      task: "@@gate child @@reply child-result",
      target: { providerInstanceId: "beta" },
      mode: "wait",
      clientRequestId: "crash-1",
    };
    const parent = await child.call<string>("thread", {
      projectId,
      instance: "alpha",
      runtimeMode: "full-access",
      prompt: `delegate @@tool delegate_task ${JSON.stringify(delegation)}`,
    });
    await child.call("waitFor", {
      sql: "SELECT 1 FROM attempts WHERE thread_id LIKE 'thread:delegated-task:%' AND status = 'running'",
      params: [],
      timeoutMs: 15_000,
    });
    await child.call("waitFor", {
      sql: "SELECT 1 FROM attempts WHERE thread_id = ? AND status = 'running'",
      params: [plain],
      timeoutMs: 15_000,
    });
    await untilGatesReached(gateDir, ["plain", "child"]);

    await child.kill9();

    child = EngineChild.startScripted(home, gateDir, stateDir);
    const ready = await child.ready;
    // Every live run was resumable (the scripted provider resumes from its state files).
    expect(ready.report.continuedRuns.length).toBe(3);
    releaseGate(gateDir, "plain");
    releaseGate(gateDir, "child");
    const plainRun = await child.call<{ run: { status: string } }>("wait", { threadId: plain, timeoutMs: 20_000 });
    expect(plainRun.run.status).toBe("completed");
    const queuedRun = await child.call<{ run: { status: string; summary: string } }>("wait", {
      threadId: plain,
      runId: queued.runId,
      timeoutMs: 20_000,
    });
    expect(queuedRun.run).toMatchObject({ status: "completed", summary: "queued-done" });
    // The continued parent (its session reopened with a credential) retries its unfinished
    // delegate_task: the resumed conversation keeps its request scope, so the retry lands on
    // the same task and the wait returns its one result.
    const parentRun = await child.call<{ run: { status: string; summary: string } }>("wait", {
      threadId: parent,
      timeoutMs: 20_000,
    });
    expect(parentRun.run.status).toBe("completed");
    expect(parentRun.run.summary).toContain("child-result");
    await child.call("drain");
    await child.stop();
    child = null;

    const dbFile = join(home, "switchyard.db");
    const db = new Database(dbFile, { readonly: true });
    try {
      const tasks = db.prepare("SELECT data FROM delegated_tasks").all() as { data: string }[];
      expect(tasks).toHaveLength(1);
      const task = JSON.parse(tasks[0]!.data) as {
        status: string;
        summary: string;
        finalizedAt: string | null;
        delivery: string;
      };
      // Acknowledged by the parent's wait, so no wake message was needed.
      expect(task).toMatchObject({ status: "completed", summary: "child-result", delivery: "acknowledged" });
      expect(task.finalizedAt).not.toBeNull();
      expect(db.prepare("SELECT COUNT(*) AS n FROM context_transfers WHERE kind = 'subagent_result'").get()).toEqual({
        n: 1,
      });
      expect(db.prepare("SELECT COUNT(*) AS n FROM items WHERE id LIKE 'message:task-result:%'").get()).toEqual({
        n: 0,
      });
      expect(
        db
          .prepare(
            "SELECT COUNT(*) AS n FROM runs WHERE status NOT IN ('completed', 'failed', 'cancelled', 'interrupted')",
          )
          .get(),
      ).toEqual({ n: 0 });
    } finally {
      db.close();
    }
    for (const [runId, writes] of terminalWrites(dbFile)) expect(writes, runId).toBe(1);
  });

  it("records runs of a provider that cannot resume as interrupted, once, and starts what was queued behind them", async () => {
    const root = mkdtempSync(join(tmpdir(), "switchyard-crash-"));
    dirs.push(root);
    const home = join(root, "home");
    const gateDir = join(root, "gates");
    const workspace = mkdtempSync(join(tmpdir(), "switchyard-crash-ws-"));
    dirs.push(workspace);
    child = EngineChild.startScripted(home, gateDir, join(root, "state"));
    await child.ready;
    const projectId = await child.call<string>("project", { path: workspace });
    const threadId = await child.call<string>("thread", {
      projectId,
      instance: "gamma",
      prompt: "@@gate never @@reply unreachable",
    });
    const queued = await child.call<{ runId: string }>("send", {
      threadId,
      text: "@@reply after-crash",
      mode: "queue",
    });
    await child.call("waitFor", {
      sql: "SELECT 1 FROM attempts WHERE thread_id = ? AND status = 'running'",
      params: [threadId],
      timeoutMs: 15_000,
    });
    await child.kill9();

    child = EngineChild.startScripted(home, gateDir, join(root, "state"));
    const ready = await child.ready;
    expect(ready.report.interruptedRuns).toHaveLength(1);
    const first = await child.call<{ run: { status: string; terminalReason: string } }>("wait", {
      threadId,
      runId: ready.report.interruptedRuns[0],
      timeoutMs: 5_000,
    });
    expect(first.run).toMatchObject({ status: "interrupted", terminalReason: "server_restart" });
    const next = await child.call<{ run: { status: string; summary: string } }>("wait", {
      threadId,
      runId: queued.runId,
      timeoutMs: 20_000,
    });
    expect(next.run).toMatchObject({ status: "completed", summary: "after-crash" });
    await child.stop();
    child = null;
    // A second restart finds nothing to recover and changes nothing.
    child = EngineChild.startScripted(home, gateDir, join(root, "state"));
    const again = await child.ready;
    expect(again.report).toMatchObject({ continuedRuns: [], interruptedRuns: [] });
    await child.stop();
    child = null;
    for (const [runId, writes] of terminalWrites(join(home, "switchyard.db"))) expect(writes, runId).toBe(1);
  });
});
