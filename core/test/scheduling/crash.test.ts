import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { releaseGate } from "@switchyard/testkit/scripted-provider";
import { EngineChild } from "../support/engine-child.js";
import { connectMcp, mustCall } from "../support/mcp-client.js";

/** Rows of a query on a home's database, read-only. */
function rows<T>(home: string, sql: string, ...params: unknown[]): T[] {
  const db = new Database(join(home, "switchyard.db"), { readonly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

/** How many times each run of a task was written with a terminal status, from the event log. */
function terminalWrites(home: string, taskId: string): number[] {
  const events = rows<{ entity_id: string; status: string }>(
    home,
    "SELECT entity_id, json_extract(data, '$.status') AS status FROM events WHERE entity = 'run' AND json_extract(data, '$.scheduledTaskId') = ? ORDER BY sequence",
    taskId,
  );
  const counts = new Map<string, number>();
  const last = new Map<string, string>();
  for (const event of events) {
    if (
      ["completed", "failed", "cancelled", "interrupted"].includes(event.status) &&
      last.get(event.entity_id) !== event.status
    )
      counts.set(event.entity_id, (counts.get(event.entity_id) ?? 0) + 1);
    last.set(event.entity_id, event.status);
  }
  return [...counts.values()];
}

/** Waits (bounded) until the wall clock is past an instant: the child process runs on real time. */
async function until(ms: number): Promise<void> {
  for (let i = 0; i < 100 && Date.now() <= ms; i += 1)
    await new Promise((resolve) => setTimeout(resolve, Math.min(100, ms - Date.now() + 5)));
}

describe("scheduled tasks across a host killed with SIGKILL", () => {
  const dirs: string[] = [];
  let child: EngineChild | null = null;
  afterEach(async () => {
    await child?.stop();
    child = null;
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  const setup = () => {
    const root = mkdtempSync(join(tmpdir(), "switchyard-sched-crash-"));
    const workspace = mkdtempSync(join(tmpdir(), "switchyard-sched-crash-ws-"));
    dirs.push(root, workspace);
    return { home: join(root, "home"), gateDir: join(root, "gates"), stateDir: join(root, "state"), workspace };
  };

  it("a kill -9 between a trigger and its run's start, then a restart, yields exactly one run", async () => {
    const { home, gateDir, stateDir, workspace } = setup();
    child = EngineChild.startScripted(home, gateDir, stateDir);
    const { mcpUrl } = await child.ready;
    const projectId = await child.call<string>("project", { path: workspace });
    // The agent's turn holds its thread, so the task's run, bound to that thread, queues behind it.
    const threadId = await child.call<string>("thread", {
      projectId,
      instance: "alpha",
      runtimeMode: "full-access",
      prompt: "@@gate busy @@reply busy-done",
    });
    await child.call("waitFor", {
      sql: "SELECT 1 FROM attempts WHERE thread_id = ? AND status = 'running'",
      params: [threadId],
      timeoutMs: 15_000,
    });
    const grants = await child.call<{ threadId: string; token: string }[]>("grants");
    const agent = await connectMcp(mcpUrl, grants.find((g) => g.threadId === threadId)!.token);
    const at = new Date(Date.now() + 1_500).toISOString();
    const task = await mustCall<{ scheduledTaskId: string; boundThreadId: string }>(agent, "schedule_task", {
      prompt: "@@reply scheduled-after-crash",
      schedule: { type: "fixed_time", at },
    });
    await agent.close();
    expect(task.boundThreadId).toBe(threadId);
    // The trigger commits with its queued run; the run has not started when the host dies.
    await child.call("waitFor", {
      sql: "SELECT 1 FROM scheduled_triggers WHERE task_id = ?",
      params: [task.scheduledTaskId],
      timeoutMs: 15_000,
    });
    const before = rows<{ status: string }>(
      home,
      "SELECT status FROM runs WHERE json_extract(data, '$.scheduledTaskId') = ?",
      task.scheduledTaskId,
    );
    expect(before).toEqual([{ status: "queued" }]);
    await child.kill9();

    child = EngineChild.startScripted(home, gateDir, stateDir);
    await child.ready;
    releaseGate(gateDir, "busy");
    await child.call("waitFor", {
      sql: "SELECT 1 FROM runs WHERE json_extract(data, '$.scheduledTaskId') = ? AND status = 'completed'",
      params: [task.scheduledTaskId],
      timeoutMs: 20_000,
    });
    await child.call("drain");
    await child.stop();
    // And a second restart fires nothing more.
    child = EngineChild.startScripted(home, gateDir, stateDir);
    await child.ready;
    await child.stop();
    child = null;

    expect(rows(home, "SELECT id FROM scheduled_triggers WHERE task_id = ?", task.scheduledTaskId)).toHaveLength(1);
    const runs = rows<{ status: string; summary: string; threadId: string }>(
      home,
      "SELECT status, json_extract(data, '$.summary') AS summary, thread_id AS threadId FROM runs WHERE json_extract(data, '$.scheduledTaskId') = ?",
      task.scheduledTaskId,
    );
    expect(runs).toEqual([{ status: "completed", summary: "scheduled-after-crash", threadId }]);
    expect(terminalWrites(home, task.scheduledTaskId)).toEqual([1]);
  });

  it("runs a fixed-time occurrence that came due while the host was down exactly once after the restart", async () => {
    const { home, gateDir, stateDir, workspace } = setup();
    child = EngineChild.startScripted(home, gateDir, stateDir);
    const { mcpUrl } = await child.ready;
    const projectId = await child.call<string>("project", { path: workspace });
    const client = await connectMcp(mcpUrl, await child.call<string>("clientToken"));
    // Whole seconds: one-shot times are kept to the second.
    const atMs = Math.ceil((Date.now() + 1_500) / 1_000) * 1_000;
    const task = await mustCall<{ scheduledTaskId: string }>(client, "schedule_task", {
      projectId,
      target: { providerInstanceId: "alpha" },
      prompt: "@@reply caught-up",
      schedule: { type: "fixed_time", at: new Date(atMs).toISOString() },
    });
    await client.close();
    await child.kill9();
    expect(rows(home, "SELECT id FROM scheduled_triggers")).toHaveLength(0);
    await until(atMs + 200);

    child = EngineChild.startScripted(home, gateDir, stateDir);
    await child.ready;
    await child.call("waitFor", {
      sql: "SELECT 1 FROM runs WHERE json_extract(data, '$.scheduledTaskId') = ? AND status = 'completed'",
      params: [task.scheduledTaskId],
      timeoutMs: 20_000,
    });
    await child.call("drain");
    await child.kill9();
    child = EngineChild.startScripted(home, gateDir, stateDir);
    await child.ready;
    await child.stop();
    child = null;

    const triggers = rows<{ data: string }>(
      home,
      "SELECT data FROM scheduled_triggers WHERE task_id = ?",
      task.scheduledTaskId,
    ).map((row) => JSON.parse(row.data) as Record<string, unknown>);
    expect(triggers).toHaveLength(1);
    expect(triggers[0]).toMatchObject({
      outcome: "started",
      scheduledFor: new Date(atMs).toISOString(),
      catchUp: true,
    });
    expect(terminalWrites(home, task.scheduledTaskId)).toEqual([1]);
  });
});
