import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunRecord } from "../../src/store/records.js";
import { mustCall } from "../support/mcp-client.js";
import { McpLab } from "../support/mcp-lab.js";

type Shell = { threadId: string; status: string; runStatus?: string; latestRunStatus?: string };
type TaskResult = { taskId: string; childThreadId: string; status: string; summary: string | null };
type ReadItem = { kind: string; status: string; text: string; details: Record<string, unknown> };

/**
 * Seed 003: a child that hit a capacity or quota limit (OpenCode retrying a used-up free tier
 * forever) showed only a warning in its timeline and stayed running, so a router had to watch
 * for it. A provider that reports the limit (`warning` with `limit`) now fails the child's run:
 * the parent's row, its task and the thread list show a failed child with the reason.
 */
describe("capacity and quota limits of a child", () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start();
  });
  afterAll(async () => lab.stop());

  const store = () => lab.host.store;
  const runsOf = (threadId: string): RunRecord[] =>
    store().select("run", "thread_id = ?", [threadId], "ORDER BY ordinal");
  async function until<T>(what: string, probe: () => T | null | undefined | false): Promise<T> {
    const value = await lab.host.waiter.waitFor(() => probe() || null, { timeoutMs: 15_000 });
    if (value === null) throw new Error(`timed out waiting for ${what}`);
    return value as T;
  }

  it("a delegated child that hits a quota limit is a failed child with the reason on the parent's row", async () => {
    const parent = await lab.liveAgent({ instance: "alpha" });
    const observer = await lab.client(["orchestration:read"]);
    const task = await mustCall<TaskResult>(parent.client, "delegate_task", {
      task: "@@limit quota free_tier_limit Free tier limit reached for muse-spark-free; retrying in 30 s",
      title: "Quota child",
      mode: "async",
    });
    await until("the task to be published", () => store().get("delegatedTask", task.taskId)!.finalizedAt);

    const status = await mustCall<TaskResult>(observer, "task_status", { taskId: task.taskId });
    expect(status.status).toBe("failed");
    expect(status.summary).toContain("free_tier_limit");
    expect(status.summary).toContain("Free tier limit reached for muse-spark-free");
    expect(runsOf(task.childThreadId)[0]).toMatchObject({
      status: "failed",
      error: { code: "provider_quota" },
      terminalReason: "provider_limit",
    });

    // The parent's row: its sub-agent item is failed and says why.
    const read = await mustCall<{ items: ReadItem[] }>(observer, "t3_thread_read", {
      threadId: parent.threadId,
      view: "activity",
      afterPosition: -1,
    });
    const row = read.items.find((item) => item.kind === "subagent" && item.details["taskId"] === task.taskId);
    expect(row).toMatchObject({
      status: "failed",
      details: {
        status: "failed",
        error: { code: "provider_quota", message: expect.stringContaining("free_tier_limit") },
      },
    });

    // Listed as a failed child, and the warning stays in the child's timeline.
    const listed = await mustCall<{ threads: Shell[] }>(observer, "t3_thread_list", {
      projectId: lab.projectId,
      includeSubagents: true,
      runStatus: ["failed"],
    });
    expect(listed.threads.map((thread) => thread.threadId)).toContain(task.childThreadId);
    const notices = store()
      .select("item", "thread_id = ? AND kind = 'notice'", [task.childThreadId])
      .map((item) => item.data);
    expect(notices).toContainEqual({ level: "warning", limit: { kind: "quota", code: "free_tier_limit" } });
    parent.release();
  });

  it("a router child that hits a capacity limit reaches its parent as a failed turn with the reason", async () => {
    const parent = await lab.liveAgent({ instance: "alpha" });
    const client = await lab.client();
    const created = await mustCall<{ threads: { thread: { threadId: string } }[] }>(client, "create_threads", {
      threads: [
        {
          prompt: "@@limit capacity model_overloaded The model is overloaded; retrying",
          title: "Capacity child",
          target: { providerInstanceId: "beta" },
          parentThreadId: parent.threadId,
        },
      ],
      clientRequestId: "capacity-router-child",
    });
    const childId = created.threads[0]!.thread.threadId;
    const run = await until("the child's run to end", () => {
      const first = runsOf(childId)[0];
      return first !== undefined && first.endedAt !== null ? first : null;
    });
    expect(run).toMatchObject({ status: "failed", error: { code: "provider_capacity" } });
    const row = store()
      .select("item", "thread_id = ? AND kind = 'subagent'", [parent.threadId])
      .find((item) => item.data["childThreadId"] === childId)!;
    expect(row).toMatchObject({ status: "failed" });
    expect(row.data).toMatchObject({
      status: "failed",
      summary: expect.stringContaining("model_overloaded"),
      error: { code: "provider_capacity" },
    });
    parent.release();
  });
});
