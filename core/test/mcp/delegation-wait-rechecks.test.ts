// A delegate_task wait re-checks its task only on commits that could end it (the task's record,
// a request or run of the child, the waiting run), not on every item, attempt or session write
// of the two threads: those were most of the re-checks of every delegation.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { McpLab } from "../support/mcp-lab.js";
import { mustCall } from "../support/mcp-client.js";
import { untilGatesReached } from "../support/gates.js";
import type { DelegateTaskResult } from "../../src/services/delegation/task-view.js";

describe("a delegate_task wait", () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start();
  });
  afterAll(async () => lab.stop());

  it("is not re-checked by the child's or the parent's item writes, and still ends on the result", async () => {
    const parent = await lab.liveAgent({ instance: "alpha" });
    const waiting = mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
      task: "@@gate recheck-child @@reply rechecked",
      target: { providerInstanceId: "alpha" },
      mode: "wait",
    });
    await untilGatesReached(lab.t.gateDir, ["recheck-child"]);
    const [task] = lab.host.store.select("delegatedTask", "parent_thread_id = ?", [parent.threadId]);
    if (task === undefined) throw new Error("no delegated task");
    const store = lab.host.store;
    const reads = vi.spyOn(store, "get");
    try {
      // Timeline writes on both threads, each its own commit: none of them can end the wait.
      for (const [i, threadId] of [
        task.childThreadId,
        parent.threadId,
        task.childThreadId,
        parent.threadId,
      ].entries()) {
        await lab.host.engine.apply(async (ctx) => {
          const thread = await ctx.require("thread", threadId);
          ctx.put("thread", { ...thread, updatedAt: ctx.now });
          ctx.put("item", {
            id: `item:recheck:${i}`,
            threadId,
            runId: null,
            attemptId: null,
            kind: "notice",
            status: "completed",
            text: `note ${i}`,
            data: {},
            position: 10_000 + i,
            createdBy: "system",
            creationSource: "system",
            createdAt: ctx.now,
            updatedAt: ctx.now,
          });
        });
      }
      const taskReads = reads.mock.calls.filter(([entity, id]) => entity === "delegatedTask" && id === task.id);
      expect(taskReads).toHaveLength(0);
    } finally {
      reads.mockRestore();
    }
    lab.release("recheck-child");
    const result = await waiting;
    expect(result).toMatchObject({
      taskId: task.id,
      status: "completed",
      summary: "rechecked",
      workState: "result_available",
    });
    parent.release();
  });
});
