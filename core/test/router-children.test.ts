import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { releaseGate } from "@switchyard/testkit/scripted-provider";
import type { RunRecord, TimelineItemRecord } from "../src/store/records.js";
import { EngineChild } from "./support/engine-child.js";
import { callTool, mustCall } from "./support/mcp-client.js";
import { McpLab } from "./support/mcp-lab.js";

/** Router children: lineage, listing, and each finished child turn delivered to the parent once. */
describe("router children", async () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start();
  });
  afterAll(async () => {
    await lab.stop();
  });

  const store = () => lab.host.store;
  const deliveries = (parentId: string) =>
    store().select("item", "thread_id = ? AND id LIKE 'message:child-turn:%'", [parentId], "ORDER BY position");
  const runsOf = (threadId: string) => store().select("run", "thread_id = ?", [threadId], "ORDER BY ordinal");
  /** Waits, on committed events, until `check` holds. */
  const until = async <T>(what: string, check: () => T | null | undefined | false): Promise<T> => {
    const value = await lab.host.waiter.waitFor(() => check() || null, { timeoutMs: 20_000 });
    if (value === null) throw new Error(`timed out waiting for ${what}`);
    return value as T;
  };
  const idle = (threadId: string) => {
    const runs = runsOf(threadId);
    return (
      runs.length > 0 && runs.every((run) => ["completed", "failed", "cancelled", "interrupted"].includes(run.status))
    );
  };
  const planner = async (title = "planner") =>
    (
      await lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId: "alpha",
        title,
        runtimeMode: "full-access",
        createdBy: "user",
        creationSource: "cli",
      })
    ).thread;

  it("is the parent's child everywhere, and its finished turn reaches the parent as a message", async () => {
    const parent = await planner();
    const client = await lab.client();
    const created = await mustCall<{ threads: { thread: Record<string, unknown>; runId: string }[] }>(
      client,
      "create_threads",
      {
        threads: [
          {
            prompt: "@@reply MANGO",
            title: "mango child",
            target: { providerInstanceId: "beta" },
            parentThreadId: parent.id,
          },
        ],
        clientRequestId: "router-child-1",
      },
    );
    const child = created.threads[0]!.thread;
    expect(child).toMatchObject({
      relationship: "subagent",
      parentThreadId: parent.id,
      delegatedTaskId: null,
      reportBack: true,
      projectId: lab.projectId,
      providerInstanceId: "beta",
    });

    // Listed like a sub-agent: hidden by default, shown with includeSubagents.
    const listed = await mustCall<{ threads: { threadId: string }[] }>(client, "t3_thread_list", {
      projectId: lab.projectId,
      limit: 100,
    });
    expect(listed.threads.map((t) => t.threadId)).toContain(parent.id);
    expect(listed.threads.map((t) => t.threadId)).not.toContain(child.threadId);
    const withChildren = await mustCall<{ threads: { threadId: string; parentThreadId: string | null }[] }>(
      client,
      "t3_thread_list",
      { projectId: lab.projectId, includeSubagents: true, limit: 100 },
    );
    expect(withChildren.threads.find((t) => t.threadId === child.threadId)?.parentThreadId).toBe(parent.id);

    // The parent's timeline shows the child, and gets its finished turn as one message.
    await until("the delivery", () => deliveries(parent.id).length === 1 && idle(parent.id));
    const [delivery] = deliveries(parent.id);
    expect(delivery!.text).toContain("MANGO");
    expect(delivery!.text).toContain(String(child.threadId));
    expect(delivery!.data).toMatchObject({
      origin: "router_child",
      childThreadId: child.threadId,
      childRunId: created.threads[0]!.runId,
      notification: true,
    });
    const read = await mustCall<{ items: { kind: string; details: Record<string, unknown>; status: string }[] }>(
      client,
      "t3_thread_read",
      { threadId: parent.id, view: "activity" },
    );
    expect(read.items.find((item) => item.kind === "subagent")).toMatchObject({
      status: "completed",
      details: { origin: "router_child", childThreadId: child.threadId },
    });
    expect(read.items.find((item) => item.kind === "user_message")?.details).toMatchObject({
      childThreadId: child.threadId,
      notification: true,
    });
    // The parent acted on it: a notification turn that ran.
    expect(runsOf(parent.id).map((run) => [run.kind, run.status])).toEqual([["notification", "completed"]]);
    expect(store().get("contextTransfer", `transfer:child-turn:${created.threads[0]!.runId}`)).toMatchObject({
      status: "consumed",
      sourceThreadId: child.threadId,
      targetThreadId: parent.id,
    });

    // A retry of the same create_threads call creates nothing new.
    const again = await mustCall<{ replayed: boolean; threads: { thread: { threadId: string } }[] }>(
      client,
      "create_threads",
      {
        threads: [
          {
            prompt: "@@reply MANGO",
            title: "mango child",
            target: { providerInstanceId: "beta" },
            parentThreadId: parent.id,
          },
        ],
        clientRequestId: "router-child-1",
      },
    );
    expect(again).toMatchObject({ replayed: true, threads: [{ thread: { threadId: child.threadId } }] });
    expect(store().select("item", "thread_id = ? AND kind = 'subagent'", [parent.id])).toHaveLength(1);
  });

  it("delivers every finished turn of the child once, and none of a child created with reportBack false", async () => {
    const parent = await planner();
    const { thread: child } = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "alpha",
      parentThreadId: parent.id,
      prompt: "@@reply first",
      createdBy: "user",
      creationSource: "api",
    });
    const { thread: quiet } = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "alpha",
      parentThreadId: parent.id,
      reportBack: false,
      prompt: "@@reply unreported",
      createdBy: "user",
      creationSource: "api",
    });
    expect(quiet.lineage).toMatchObject({
      relationship: "subagent",
      parentThreadId: parent.id,
      reportBack: false,
      depth: 1,
      rootThreadId: parent.id,
    });
    await until("the first delivery", () => deliveries(parent.id).length === 1 && idle(parent.id) && idle(quiet.id));
    await lab.host.threads.send({
      threadId: child.id,
      text: "@@reply second",
      mode: "auto",
      createdBy: "user",
      creationSource: "api",
    });
    await until("the second delivery", () => deliveries(parent.id).length === 2 && idle(parent.id) && idle(child.id));
    expect(deliveries(parent.id).map((item) => /Result:\n(\w+)/.exec(item.text)?.[1])).toEqual(["first", "second"]);
    expect(deliveries(parent.id).map((item) => item.data.childThreadId)).toEqual([child.id, child.id]);
    expect(runsOf(parent.id).filter((run) => run.kind === "notification")).toHaveLength(2);
  });

  it("refuses a parent that does not exist, a parent in another project, and reportBack without a parent", async () => {
    const client = await lab.client();
    const missing = await callTool(client, "create_threads", {
      projectId: lab.projectId,
      threads: [{ prompt: "x", parentThreadId: "thread_nope" }],
    });
    expect(missing).toMatchObject({ ok: false, code: "thread_not_found" });
    const other = await lab.host.projects.add(mkdtempSync(join(tmpdir(), "switchyard-other-")), "other");
    const parent = await planner();
    const elsewhere = await callTool(client, "create_threads", {
      projectId: other.id,
      threads: [{ prompt: "x", parentThreadId: parent.id }],
    });
    expect(elsewhere).toMatchObject({ ok: false, code: "invalid_request" });
    expect(elsewhere.ok ? "" : elsewhere.message).toContain("its parent's project");
    const orphan = await callTool(client, "create_threads", {
      projectId: lab.projectId,
      threads: [{ prompt: "x", reportBack: true }],
    });
    expect(orphan).toMatchObject({ ok: false, code: "invalid_request" });
    await expect(
      lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId: "alpha",
        reportBack: true,
        createdBy: "user",
        creationSource: "api",
      }),
    ).rejects.toThrow(/reportBack needs parentThreadId/);
  });

  it("does not wake a parent interrupted on request: its queued delivery is withdrawn and arrives once after its next run", async () => {
    const { thread: parent } = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "alpha",
      prompt: "@@gate interrupted-planner @@reply planner-busy",
      createdBy: "user",
      creationSource: "cli",
    });
    await lab.waitForLiveTurn(parent.id);
    const { thread: child } = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "alpha",
      parentThreadId: parent.id,
      prompt: "@@reply while-busy",
      createdBy: "user",
      creationSource: "api",
    });
    // Queued behind the planner's live turn.
    await until("the queued delivery", () => deliveries(parent.id).length === 1 && idle(child.id));
    expect(runsOf(parent.id).map((run) => run.status)).toEqual(["running", "queued"]);
    await lab.host.threads.interrupt({ threadId: parent.id, reason: "interrupted_by_user" });
    await until("the interrupt", () => idle(parent.id));
    const [, withdrawn] = runsOf(parent.id);
    expect(withdrawn).toMatchObject({ status: "cancelled", terminalReason: "parent_stopped", kind: "notification" });
    const transferId = `transfer:child-turn:${runsOf(child.id)[0]!.id}`;
    expect(store().get("contextTransfer", transferId)?.status).toBe("pending");
    // The next run the user starts ends, and then the owed result arrives, once.
    await lab.host.threads.send({
      threadId: parent.id,
      text: "@@reply back again",
      mode: "auto",
      createdBy: "user",
      creationSource: "cli",
    });
    await until("the delivery after the next run", () => runsOf(parent.id).length === 4 && idle(parent.id));
    const runs = runsOf(parent.id);
    expect(runs.map((run) => [run.kind, run.status])).toEqual([
      ["work", "interrupted"],
      ["notification", "cancelled"],
      ["work", "completed"],
      ["notification", "completed"],
    ]);
    expect(runs[3]!.messageId).toBe(`message:child-turn:${runsOf(child.id)[0]!.id}`);
    expect(store().get("contextTransfer", transferId)?.status).toBe("consumed");
  });
});

/** How many times each run was written with a terminal status, from the event log itself. */
function terminalWrites(db: Database.Database): Map<string, number> {
  const counts = new Map<string, number>();
  const last = new Map<string, string>();
  for (const row of db
    .prepare(
      "SELECT entity_id, json_extract(data, '$.status') AS status FROM events WHERE entity = 'run' ORDER BY sequence",
    )
    .all() as { entity_id: string; status: string }[]) {
    if (
      ["completed", "failed", "cancelled", "interrupted"].includes(row.status) &&
      last.get(row.entity_id) !== row.status
    )
      counts.set(row.entity_id, (counts.get(row.entity_id) ?? 0) + 1);
    last.set(row.entity_id, row.status);
  }
  return counts;
}

describe("router children across a host killed with SIGKILL", () => {
  const dirs: string[] = [];
  let child: EngineChild | null = null;
  afterEach(async () => {
    await child?.stop();
    child = null;
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("delivers each child's finished turn to the parent exactly once: finished before the kill, live at the kill, and queued behind the parent at the kill", async () => {
    const root = mkdtempSync(join(tmpdir(), "switchyard-router-crash-"));
    dirs.push(root);
    const home = join(root, "home");
    const gateDir = join(root, "gates");
    const stateDir = join(root, "state");
    const workspace = mkdtempSync(join(tmpdir(), "switchyard-router-crash-ws-"));
    dirs.push(workspace);

    child = EngineChild.startScripted(home, gateDir, stateDir);
    await child.ready;
    const projectId = await child.call<string>("project", { path: workspace });
    // The planner works (held at a gate) while its children run.
    const parent = await child.call<string>("thread", {
      projectId,
      instance: "alpha",
      runtimeMode: "full-access",
      prompt: "@@gate planner @@reply planner-done",
    });
    const early = await child.call<string>("thread", {
      projectId,
      instance: "beta",
      parentThreadId: parent,
      title: "early",
      prompt: "@@reply EARLY",
    });
    const live = await child.call<string>("thread", {
      projectId,
      instance: "alpha",
      parentThreadId: parent,
      title: "live",
      prompt: "@@gate live-child @@reply LIVE",
    });
    const doomed = await child.call<string>("thread", {
      projectId,
      instance: "gamma",
      parentThreadId: parent,
      title: "doomed",
      prompt: "@@gate never-released @@reply UNREACHABLE",
    });
    await child.call("waitFor", {
      sql: "SELECT 1 FROM items WHERE thread_id = ? AND id LIKE 'message:child-turn:%'",
      params: [parent],
      timeoutMs: 15_000,
    });
    for (const threadId of [parent, live, doomed]) {
      await child.call("waitFor", {
        sql: "SELECT 1 FROM attempts WHERE thread_id = ? AND status = 'running'",
        params: [threadId],
        timeoutMs: 15_000,
      });
    }

    await child.kill9();

    child = EngineChild.startScripted(home, gateDir, stateDir);
    const ready = await child.ready;
    // The planner and the live child resume; the child on gamma (no resume) ends interrupted,
    // which is a finished turn the planner is owed too.
    expect(ready.report.continuedRuns).toHaveLength(2);
    expect(ready.report.interruptedRuns).toHaveLength(1);
    releaseGate(gateDir, "planner");
    releaseGate(gateDir, "live-child");
    // Three deliveries, each run by the planner.
    await child.call("waitFor", {
      sql: "SELECT COUNT(*) AS n FROM runs WHERE thread_id = ? AND json_extract(data, '$.kind') = 'notification' AND status = 'completed' HAVING n = 3",
      params: [parent],
      timeoutMs: 20_000,
    });
    await child.call("drain");
    await child.stop();
    child = null;

    const db = new Database(join(home, "switchyard.db"), { readonly: true });
    try {
      const items = db
        .prepare("SELECT data FROM items WHERE thread_id = ? AND id LIKE 'message:child-turn:%' ORDER BY position")
        .all(parent)
        .map((row) => JSON.parse((row as { data: string }).data) as TimelineItemRecord);
      expect(items.map((item) => item.data.childThreadId).sort()).toEqual([early, live, doomed].sort());
      expect(items.find((item) => item.data.childThreadId === early)!.text).toContain("EARLY");
      expect(items.find((item) => item.data.childThreadId === live)!.text).toContain("LIVE");
      expect(items.find((item) => item.data.childThreadId === doomed)!.text).toContain("status interrupted");
      // Exactly one delivery message per finished child turn in the whole log, not just the projection.
      const messageWrites = db
        .prepare(
          "SELECT entity_id, COUNT(DISTINCT json_extract(data, '$.runId')) AS runs FROM events WHERE entity = 'item' AND entity_id LIKE 'message:child-turn:%' GROUP BY entity_id",
        )
        .all() as { entity_id: string; runs: number }[];
      expect(messageWrites).toHaveLength(3);
      for (const row of messageWrites) expect(row.runs, row.entity_id).toBe(1);
      const parentRuns = db
        .prepare("SELECT data FROM runs WHERE thread_id = ? ORDER BY ordinal")
        .all(parent)
        .map((row) => JSON.parse((row as { data: string }).data) as RunRecord);
      expect(parentRuns.filter((run) => run.kind === "notification").map((run) => run.status)).toEqual([
        "completed",
        "completed",
        "completed",
      ]);
      expect(
        db
          .prepare(
            "SELECT COUNT(*) AS n FROM context_transfers WHERE id LIKE 'transfer:child-turn:%' AND json_extract(data, '$.status') = 'consumed'",
          )
          .get(),
      ).toEqual({ n: 3 });
      expect(
        db
          .prepare(
            "SELECT COUNT(*) AS n FROM runs WHERE status NOT IN ('completed', 'failed', 'cancelled', 'interrupted')",
          )
          .get(),
      ).toEqual({ n: 0 });
      for (const [runId, writes] of terminalWrites(db)) expect(writes, runId).toBe(1);
    } finally {
      db.close();
    }
  }, 90_000);
});
