import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpLab, defaultProviders } from "../support/mcp-lab.js";
import { mustCall } from "../support/mcp-client.js";
import type { DelegateTaskResult } from "../../src/services/delegation/task-view.js";

/**
 * A stop that really stops, through the real MCP endpoint with scripted providers: cancelling
 * the top task of a three-level tree (every level's turn live at its gate) stops every
 * descendant, closes each descendant's provider session, and none of them takes another turn
 * (their gates opening afterwards produce nothing).
 */
describe("cascading stop: task_cancel stops a whole three-level tree", () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start({ providers: defaultProviders });
  });
  afterAll(async () => lab.stop());

  async function until<T>(what: string, probe: () => T | null | undefined | false): Promise<T> {
    const value = await lab.host.waiter.waitFor(() => probe() || null, { timeoutMs: 15_000 });
    if (value === null) throw new Error(`timed out waiting for ${what}`);
    return value as T;
  }

  const childTask = (threadId: string) =>
    lab.host.store.select("delegatedTask", "parent_thread_id = ?", [threadId])[0] ?? null;
  const live = (threadId: string) =>
    lab.host.store.count("attempt", "thread_id = ? AND status = 'running'", [threadId]) > 0;

  it("stops the child, grandchild and great-grandchild, closes their sessions, and no turn of theirs runs after", async () => {
    const root = await lab.liveAgent({ instance: "alpha" });
    const greatGrandchild = {
      task: "@@usage in=30 out=3 @@gate cascade-3 @@reply great-grandchild after stop",
      title: "great-grandchild",
      mode: "async",
      target: { providerInstanceId: "alpha" },
    };
    const grandchild = {
      task: `@@usage in=20 out=2 @@tool delegate_task ${JSON.stringify(greatGrandchild)} @@gate cascade-2 @@reply grandchild after stop`,
      title: "grandchild",
      mode: "async",
      target: { providerInstanceId: "beta" },
    };
    const child = await mustCall<DelegateTaskResult>(root.client, "delegate_task", {
      task: `@@usage in=10 out=1 @@tool delegate_task ${JSON.stringify(grandchild)} @@gate cascade-1 @@reply child after stop`,
      title: "child",
      mode: "async",
      clientRequestId: "cascade",
    });
    const grandchildTask = await until("the grandchild task", () => childTask(child.childThreadId));
    const greatGrandchildTask = await until("the great-grandchild task", () => childTask(grandchildTask.childThreadId));
    const threads = [child.childThreadId, grandchildTask.childThreadId, greatGrandchildTask.childThreadId];
    await until("every level's turn to be live", () => threads.every(live));
    const attemptsBefore = threads.map((threadId) => lab.host.store.count("attempt", "thread_id = ?", [threadId]));

    const cancelled = await mustCall<DelegateTaskResult & { cancelled: boolean }>(root.client, "task_cancel", {
      taskId: child.taskId,
      reason: "enough",
    });
    expect(cancelled.cancelled).toBe(true);

    for (const task of [child.taskId, grandchildTask.id, greatGrandchildTask.id]) {
      const settled = await until(`task ${task} to settle`, () =>
        lab.host.store.get("delegatedTask", task)!.finalizedAt ? lab.host.store.get("delegatedTask", task) : null,
      );
      expect(settled).toMatchObject({ status: "interrupted", cancelReason: "enough" });
    }
    for (const threadId of threads) {
      expect(lab.host.store.get("thread", threadId)!.stopped).toBe(true);
      const closed = await until(
        `${threadId}'s provider session to close`,
        () => lab.host.store.select("providerSession", "thread_id = ? AND status = 'closed'", [threadId])[0],
      );
      expect(closed.closeReason).toBe("stopped");
      expect(lab.host.sessions.get(threadId)).toBeNull();
    }

    // The interrupted turns still reported what they used, and the tree's roll-up is their sum.
    expect((await lab.host.usage.task(child.taskId)).subtree).toMatchObject({
      status: "reported",
      turns: { ended: 3, inFlight: 0 },
      tokens: { total: 66 },
    });

    // Opening the gates now changes nothing: no turn of the tree runs again, nothing replies.
    for (const gate of ["cascade-1", "cascade-2", "cascade-3"]) lab.release(gate);
    const probe = await mustCall<DelegateTaskResult>(root.client, "delegate_task", {
      task: "@@reply probe done",
      mode: "wait",
      clientRequestId: "cascade-probe",
    });
    expect(probe.status).toBe("completed");
    expect(threads.map((threadId) => lab.host.store.count("attempt", "thread_id = ?", [threadId]))).toEqual(
      attemptsBefore,
    );
    const texts = threads.flatMap((threadId) =>
      lab.host.store
        .select("item", "thread_id = ? AND kind = 'assistant_message'", [threadId])
        .map((item) => item.text),
    );
    expect(texts.filter((text) => text.includes("after stop"))).toEqual([]);
    root.release();
  });
});
