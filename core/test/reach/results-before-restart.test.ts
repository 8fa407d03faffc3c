import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReachGrants } from "../../src/services/reach/reach-grants.js";
import { ReachLinks } from "../../src/services/reach/reach-links.js";
import type { RemoteTaskData } from "../../src/services/reach/remote-task-rows.js";
import type { RunRecord } from "../../src/store/records.js";
import { mustCall } from "../support/mcp-client.js";
import { McpLab, defaultProviders } from "../support/mcp-lab.js";
import { sqliteStore } from "../support/sqlite-store.js";

/** A provider that can stop a turn and queue messages, but neither steer nor restart a turn. */
function stopOnlyProvider(gateDir: string) {
  return {
    id: "stopper",
    driver: "scripted",
    options: {
      gateDir,
      capabilities: {
        turns: { interrupt: true, terminalStatusQuality: "strong", emitsTurnStarted: true },
        tools: { mcp: { http: true } },
        runtimeRequests: { userInputQuestions: true },
        runtimeModes: ["approval-required", "auto-accept-edits", "full-access"],
        interactionModes: ["plan", "default"],
      },
    },
  };
}

type SendResult = { runId: string; delivery: string; action: string };

/**
 * Seed 000 on two real servers: a `restart` send on a stop-only provider stops the parent's turn
 * and queues ahead of the queued messages, but the result of a task the parent delegated to a
 * linked environment, when it survives the stop, still runs first, as a local result does:
 * whether it was already queued or still pending when the turn was stopped.
 */
describe("linked-environment results before a restart send", () => {
  let a: McpLab;
  let b: McpLab;
  beforeAll(async () => {
    [a, b] = await Promise.all([
      McpLab.start({
        listen: { host: "127.0.0.2" },
        providers: (dirs) => [...defaultProviders(dirs), stopOnlyProvider(dirs.gateDir)],
      }),
      McpLab.start({ listen: { host: "127.0.0.3" } }),
    ]);
    const issued = b.host.container.resolve(ReachGrants).issue({
      for: "a",
      projects: "*",
      verbs: ["read", "create", "send", "delegate", "cancel"],
      maxRuntimeMode: "full-access",
      ttlMs: 3_600_000,
    });
    a.host.container.resolve(ReachLinks).add({ name: "b", url: b.server.url, secret: issued.secret });
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  const runsOf = (threadId: string): RunRecord[] =>
    a.host.store.select("run", "thread_id = ?", [threadId], "ORDER BY ordinal");
  async function onA<T>(what: string, probe: () => T | null | undefined | false): Promise<T> {
    const value = await a.host.waiter.waitFor(() => probe() || null, { timeoutMs: 30_000 });
    if (value === null) throw new Error(`timed out waiting for ${what}`);
    return value as T;
  }
  /** The sequence of the event that first wrote the run as starting, on A. */
  function startSequence(runId: string): number {
    const rows = sqliteStore(a.host.store)
      .db.prepare("SELECT sequence, data FROM events WHERE entity = 'run' AND entity_id = ? ORDER BY sequence")
      .all(runId) as { sequence: number; data: string }[];
    const found = rows.find((row) => (JSON.parse(row.data) as RunRecord).status === "starting");
    if (found === undefined) throw new Error(`run ${runId} never started`);
    return found.sequence;
  }
  const idle = (threadId: string) =>
    runsOf(threadId).every((run) => ["completed", "failed", "cancelled", "interrupted"].includes(run.status));
  /** A's receipt of the task's result, once it is here. */
  const received = (taskId: string) => {
    const row = sqliteStore(a.host.store)
      .statement("SELECT data, received_at FROM reach_remote_tasks WHERE link_name = 'b' AND remote_task_id = ?")
      .get(taskId) as { data: string; received_at: number | null } | undefined;
    return row?.received_at != null ? (JSON.parse(row.data) as RemoteTaskData) : null;
  };
  const resultMessageId = (taskId: string) => `message:remote-task-result:b:${taskId}`;

  it("a result already queued when the turn is stopped runs before the new message", async () => {
    const parent = await a.liveAgent({ instance: "stopper" });
    const task = await mustCall<{ taskId: string }>(parent.client, "delegate_task", {
      task: "@@gate linked-queued-child @@reply the linked child's result",
      // The wake message names the title; the task's text would script the parent's turn.
      title: "Queued linked child",
      target: { providerInstanceId: "alpha" },
      environmentId: "b",
      mode: "async",
    });
    const later = await a.host.threads.send({
      threadId: parent.threadId,
      text: "@@gate linked-queued-user @@reply user message done",
      mode: "queue",
      createdBy: "user",
      creationSource: "cli",
    });
    b.release("linked-queued-child");
    await onA("the result to be received", () => received(task.taskId));
    parent.release();
    // The parent's turn ended: its queued message starts and the result waits behind it.
    const result = await onA("the result notice to be queued", () =>
      runsOf(parent.threadId).find((run) => run.messageId === resultMessageId(task.taskId)),
    );
    await onA(
      "the queued user message to be live",
      () =>
        a.host.store.get("attempt", a.host.store.get("run", later.runId)!.currentAttemptId ?? "")?.status === "running",
    );
    expect(a.host.store.get("run", result.id)!.status).toBe("queued");

    const jump = await mustCall<SendResult>(parent.client, "t3_thread_send", {
      threadId: parent.threadId,
      message: "@@reply jumped ahead",
      mode: "restart",
    });
    expect(jump).toMatchObject({ delivery: "interrupted_and_queued", action: "interrupt_then_queue_first" });
    await onA("the parent to run everything", () => idle(parent.threadId));
    expect(a.host.store.get("run", later.runId)!.status).toBe("interrupted");
    expect(a.host.store.get("run", result.id)).toMatchObject({ kind: "notification", status: "completed" });
    expect(startSequence(result.id)).toBeLessThan(startSequence(jump.runId));
    expect(a.host.store.get("run", jump.runId)).toMatchObject({ status: "completed", summary: "jumped ahead" });
  });

  it("a result still pending (not yet queued) when the turn is stopped runs before the new message", async () => {
    const parent = await a.liveAgent({ instance: "stopper" });
    const task = await mustCall<{ taskId: string }>(parent.client, "delegate_task", {
      task: "@@reply the pending linked result",
      title: "Pending linked child",
      target: { providerInstanceId: "alpha" },
      environmentId: "b",
      mode: "async",
    });
    // The parent's turn is live, so the received result waits, pending, for that turn to end.
    expect((await onA("the result to be received", () => received(task.taskId))).delivery).toBe("pending");
    expect(runsOf(parent.threadId).some((run) => run.messageId === resultMessageId(task.taskId))).toBe(false);

    const jump = await mustCall<SendResult>(parent.client, "t3_thread_send", {
      threadId: parent.threadId,
      message: "@@reply jumped ahead of nothing queued",
      mode: "restart",
    });
    expect(jump).toMatchObject({ delivery: "interrupted_and_queued", action: "interrupt_then_queue_first" });
    await onA("the parent to run everything", () => idle(parent.threadId));
    const result = runsOf(parent.threadId).find((run) => run.messageId === resultMessageId(task.taskId))!;
    expect(result).toMatchObject({ kind: "notification", status: "completed" });
    expect(startSequence(result.id)).toBeLessThan(startSequence(jump.runId));
    expect(a.host.store.get("run", jump.runId)).toMatchObject({
      status: "completed",
      summary: "jumped ahead of nothing queued",
    });
  });
  it("a linked result and a local one, both pending when the turn is stopped, both run before the new message", async () => {
    const parent = await a.liveAgent({ instance: "stopper" });
    const linked = await mustCall<{ taskId: string }>(parent.client, "delegate_task", {
      task: "@@reply the linked half",
      title: "Linked half",
      target: { providerInstanceId: "alpha" },
      environmentId: "b",
      mode: "async",
    });
    const local = await mustCall<{ taskId: string }>(parent.client, "delegate_task", {
      task: "@@reply the local half",
      title: "Local half",
      target: { providerInstanceId: "alpha" },
      mode: "async",
    });
    await onA("the linked result to be received", () => received(linked.taskId));
    await onA("the local task to be finalized", () => a.host.store.get("delegatedTask", local.taskId)?.finalizedAt);

    const jump = await mustCall<SendResult>(parent.client, "t3_thread_send", {
      threadId: parent.threadId,
      message: "@@reply jumped ahead of two results",
      mode: "restart",
    });
    expect(jump).toMatchObject({ delivery: "interrupted_and_queued", action: "interrupt_then_queue_first" });
    await onA("the parent to run everything", () => idle(parent.threadId));
    const linkedRun = runsOf(parent.threadId).find((run) => run.messageId === resultMessageId(linked.taskId))!;
    const localRun = runsOf(parent.threadId).find((run) => run.messageId === `message:task-result:${local.taskId}`)!;
    expect(linkedRun).toMatchObject({ kind: "notification", status: "completed" });
    expect(localRun).toMatchObject({ kind: "notification", status: "completed" });
    expect(startSequence(linkedRun.id)).toBeLessThan(startSequence(jump.runId));
    expect(startSequence(localRun.id)).toBeLessThan(startSequence(jump.runId));
  });
});
