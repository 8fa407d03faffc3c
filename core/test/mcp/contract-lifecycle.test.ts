import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { sqliteStore } from "../support/sqlite-store.js";
import { releaseGate } from "@switchyard/testkit/scripted-provider";
import { EngineChild } from "../support/engine-child.js";
import { untilGatesReached } from "../support/gates.js";
import { McpLab, defaultProviders } from "../support/mcp-lab.js";
import { callTool, mustCall } from "../support/mcp-client.js";
import type { DelegateTaskResult } from "../../src/services/delegation/task-view.js";
import type { RunRecord } from "../../src/store/records.js";

/**
 * The delegated-task lifecycle of seed 000 through the real MCP endpoint, engine and SQLite:
 * nested work and completion follow-ups, statuses while work remains, Stop and interrupt of the
 * parent, held runs and Resume, stop-and-queue-ahead behind a result, and follow-up results.
 */

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

describe("delegated-task lifecycle contract (seed 000)", () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start({ providers: (dirs) => [...defaultProviders(dirs), stopOnlyProvider(dirs.gateDir)] });
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

  /** The sequence of the first event that wrote a record in the given state. */
  function firstSequence<R>(entity: "run" | "delegatedTask", id: string, state: (record: R) => boolean): number {
    const rows = sqliteStore(store())
      .db.prepare("SELECT sequence, data FROM events WHERE entity = ? AND entity_id = ? ORDER BY sequence")
      .all(entity, id) as { sequence: number; data: string }[];
    const found = rows.find((row) => state(JSON.parse(row.data) as R));
    if (found === undefined) throw new Error(`${entity} ${id} never reached that state`);
    return found.sequence;
  }

  /** The event sequence at which a run was started (its first upsert with status `starting`). */
  const startSequence = (runId: string) => firstSequence<RunRecord>("run", runId, (run) => run.status === "starting");

  const idle = (threadId: string) =>
    runsOf(threadId).every((run) => ["completed", "failed", "cancelled", "interrupted"].includes(run.status));

  it("nested delegation: the wait returns the child's final answer built from the grandchild's result, and the task stays nonterminal until then", async () => {
    const parent = await lab.liveAgent({ instance: "alpha" });
    const observer = await lab.client(["orchestration:read"]);
    const grandchild = {
      task: "@@gate nested-grandchild @@reply the grandchild measured 42",
      mode: "async",
      title: "Grandchild",
    };
    const wait = callTool<DelegateTaskResult>(parent.client, "delegate_task", {
      task: `@@tool delegate_task ${JSON.stringify(grandchild)} @@reply child delegated and ended its first turn`,
      title: "Child",
      mode: "wait",
    });
    const task = await until("the child's first turn to end with its grandchild still running", () => {
      const child = store().select("delegatedTask", "parent_thread_id = ?", [parent.threadId])[0];
      if (child === undefined || store().get("run", child.childRunId)?.status !== "completed") return null;
      return store().select("delegatedTask", "parent_thread_id = ?", [child.childThreadId]).length === 1 ? child : null;
    });

    const meanwhile = await mustCall<DelegateTaskResult>(observer, "task_status", { taskId: task.id });
    expect(meanwhile).toMatchObject({
      status: "running",
      workState: "waiting_for_children",
      summary: null,
      resultContextTransferId: null,
    });

    lab.release("nested-grandchild");
    const outcome = await wait;
    if (!outcome.ok) throw new Error(`delegate_task failed: ${outcome.code}: ${outcome.message}`);
    const result = outcome.value;
    // The child's follow-up turn (woken with the grandchild's result) gave the final answer.
    expect(result).toMatchObject({
      taskId: task.id,
      status: "completed",
      workState: "result_available",
      waitTimedOut: false,
      hasPendingChildRuns: false,
    });
    expect(result.summary).toMatch(/^scripted reply to: Delegated task "Grandchild"/);
    expect(result.summary).toContain("the grandchild measured 42");
    const childRuns = runsOf(result.childThreadId);
    expect(childRuns.map((run) => [run.kind, run.status, run.delegatedTaskId])).toEqual([
      ["work", "completed", task.id],
      ["notification", "completed", task.id],
    ]);
    const followUp = childRuns[1]!;
    expect(store().get("delegatedTask", task.id)).toMatchObject({ resultRunId: followUp.id, summary: result.summary });
    // The follow-up is the latest terminal turn, and its result is the published one.
    expect(result).toMatchObject({
      latestTerminalRunId: followUp.id,
      latestTerminalStatus: "completed",
      latestTerminalSummary: result.summary,
      latestTerminalResultContextTransferId: result.resultContextTransferId,
    });
    expect(store().get("contextTransfer", result.resultContextTransferId!)).toMatchObject({
      kind: "subagent_result",
      content: result.summary,
      sourceThreadId: result.childThreadId,
      targetThreadId: parent.threadId,
    });
    // The task was finalized only after the follow-up turn ended (in the event log's order).
    const followUpEnded = firstSequence<RunRecord>("run", followUp.id, (run) => run.status === "completed");
    expect(
      firstSequence<{ finalizedAt: string | null }>("delegatedTask", task.id, (record) => record.finalizedAt !== null),
    ).toBeGreaterThan(followUpEnded);
    parent.release();
  });

  it("a message steered into a task's turn that the turn refused still counts as the task's work: the task waits for it and publishes its answer", async () => {
    const parent = await lab.liveAgent({ instance: "alpha" });
    const started = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
      task: "@@refuse-steers @@gate refused-steer @@reply first answer",
      mode: "async",
    });
    await lab.waitForLiveTurn(started.childThreadId);
    const sent = await mustCall<SendResult>(parent.client, "t3_thread_send", {
      threadId: started.childThreadId,
      message: "@@reply the answer after the follow-up",
      mode: "steer",
    });
    expect(sent.delivery).toBe("steered");
    const fallback = await until("the refused steer to fall back to a queued run", () =>
      runsOf(started.childThreadId).find((run) => run.ordinal === 2),
    );
    expect(fallback).toMatchObject({ status: "queued", delegatedTaskId: started.taskId, kind: "work" });
    lab.release("refused-steer");
    await until("the task to be published", () => store().get("delegatedTask", started.taskId)!.finalizedAt);
    const done = await mustCall<DelegateTaskResult>(parent.client, "task_status", { taskId: started.taskId });
    expect(done).toMatchObject({
      status: "completed",
      workState: "result_available",
      summary: "the answer after the follow-up",
      hasPendingChildRuns: false,
    });
    expect(store().get("delegatedTask", started.taskId)!.resultRunId).toBe(fallback.id);
    parent.release();
  });

  it("reports a nonterminal status while the child's finished turn waits on its nested task (task_status and delegate_task)", async () => {
    const parent = await lab.liveAgent({ instance: "alpha" });
    const grandchild = { task: "@@gate status-grandchild @@reply nested done", mode: "async" };
    const args = {
      task: `@@tool delegate_task ${JSON.stringify(grandchild)} @@reply waiting on my helper`,
      mode: "async",
      clientRequestId: "status-while-nested",
    };
    const started = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", args);
    await until("the child's own turn to end", () => store().get("run", started.childRunId!)?.status === "completed");
    const polled = await mustCall<DelegateTaskResult>(parent.client, "task_status", { taskId: started.taskId });
    expect(polled).toMatchObject({
      status: "running",
      workState: "waiting_for_children",
      summary: null,
      resultContextTransferId: null,
    });
    const replayed = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", args);
    expect(replayed).toMatchObject({
      taskId: started.taskId,
      status: "running",
      workState: "waiting_for_children",
      summary: null,
    });
    // Reading a nonterminal status does not acknowledge anything.
    expect(store().get("delegatedTask", started.taskId)!.delivery).toBe("pending");
    lab.release("status-grandchild");
    await until("the task to be finalized", () => store().get("delegatedTask", started.taskId)!.finalizedAt);
    const done = await mustCall<DelegateTaskResult>(parent.client, "task_status", { taskId: started.taskId });
    expect(done).toMatchObject({ status: "completed", workState: "result_available" });
    expect(done.summary).toContain("nested done");
    parent.release();
  });

  it("does not wake an interrupted parent with a result; the result stays readable and arrives when the parent next runs", async () => {
    const parent = await lab.liveAgent({ instance: "alpha" });
    const started = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
      task: "@@gate interrupted-parent-child @@reply late result",
      mode: "async",
    });
    await lab.host.threads.interrupt({ threadId: parent.threadId, reason: "interrupted_by_user" });
    const ended = await lab.host.threads.waitForRun({ threadId: parent.threadId, timeoutMs: 10_000 });
    expect(ended.run?.status).toBe("interrupted");
    lab.release("interrupted-parent-child");
    await until("the task to be finalized", () => store().get("delegatedTask", started.taskId)!.finalizedAt);
    // The wake would have been queued in the transaction that finalized the task: there is none.
    expect(runsOf(parent.threadId)).toHaveLength(1);
    expect(store().get("item", `message:task-result:${started.taskId}`)).toBeNull();
    expect(store().get("delegatedTask", started.taskId)!.delivery).toBe("pending");
    const observer = await lab.client(["orchestration:read"]);
    expect(await mustCall<DelegateTaskResult>(observer, "task_status", { taskId: started.taskId })).toMatchObject({
      status: "completed",
      summary: "late result",
    });

    // The user talks to the parent again: after that turn, the result reaches it.
    await lab.host.threads.send({
      threadId: parent.threadId,
      text: "@@reply back at work",
      mode: "auto",
      createdBy: "user",
      creationSource: "cli",
    });
    const wake = await until("the result to reach the parent", () =>
      store().get("item", `message:task-result:${started.taskId}`),
    );
    expect(wake.text).toContain("late result");
    await until("the parent to go idle", () => idle(parent.threadId));
    expect(runsOf(parent.threadId).map((run) => [run.kind, run.status])).toEqual([
      ["work", "interrupted"],
      ["work", "completed"],
      ["notification", "completed"],
    ]);
    expect(store().get("delegatedTask", started.taskId)!.delivery).toBe("delivered");
  });

  it("does not catch an interrupted parent up on a pending child question; it is caught up when the parent next runs", async () => {
    const parent = await lab.liveAgent({ instance: "alpha" });
    const asked = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
      task: "@@ask Which port? @@reply configured",
      title: "Port question",
      mode: "wait",
    });
    expect(asked).toMatchObject({ hasPendingQuestion: true, waitTimedOut: false });
    const request = store().select("runtimeRequest", "thread_id = ? AND status = 'pending'", [asked.childThreadId])[0]!;
    expect(request.parentNotice).toMatchObject({ mode: "wait" });
    await lab.host.threads.interrupt({ threadId: parent.threadId, reason: "interrupted_by_user" });
    const ended = await lab.host.threads.waitForRun({ threadId: parent.threadId, timeoutMs: 10_000 });
    expect(ended.run?.status).toBe("interrupted");
    // The catch-up would have started in the transaction that ended the parent's run: none did.
    expect(runsOf(parent.threadId)).toHaveLength(1);
    expect(store().select("item", "thread_id = ? AND id LIKE 'message:question:%'", [parent.threadId])).toHaveLength(0);
    const observer = await lab.client(["orchestration:read"]);
    expect(await mustCall<DelegateTaskResult>(observer, "task_status", { taskId: asked.taskId })).toMatchObject({
      hasPendingQuestion: true,
      workState: "working",
    });

    await lab.host.threads.send({
      threadId: parent.threadId,
      text: "@@reply something else",
      mode: "auto",
      createdBy: "user",
      creationSource: "cli",
    });
    const notice = await until("the question to be caught up", () =>
      store().get("item", `message:question:${request.id}:catch-up`),
    );
    expect(notice.text).toContain("Which port?");
    await lab.host.threads.respondToRequest(request.id, { kind: "user_input", answers: { q1: ["8080"] } });
    await until("the task to be finalized", () => store().get("delegatedTask", asked.taskId)!.finalizedAt);
    await until("the parent to go idle", () => idle(parent.threadId));
  });

  it("withdraws a question notice queued behind a parent turn that is then interrupted", async () => {
    const parent = await lab.liveAgent({ instance: "beta", runtimeMode: "auto-accept-edits" });
    const started = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
      task: "@@ask Proceed with the migration? @@reply migrated",
      title: "Migration question",
      mode: "async",
    });
    const request = await until(
      "the child's question",
      () => store().select("runtimeRequest", "thread_id = ? AND status = 'pending'", [started.childThreadId])[0],
    );
    const notice = await until("the queued notice", () => store().get("runtimeRequest", request.id)!.parentNotice);
    expect(notice).toMatchObject({ mode: "queued" });
    await lab.host.threads.interrupt({ threadId: parent.threadId, reason: "interrupted_by_user" });
    const ended = await lab.host.threads.waitForRun({
      threadId: parent.threadId,
      runId: runsOf(parent.threadId)[0]!.id,
      timeoutMs: 10_000,
    });
    expect(ended.run?.status).toBe("interrupted");
    expect(store().get("run", notice.runId!)).toMatchObject({
      status: "cancelled",
      terminalReason: "parent_stopped",
      startedAt: null,
    });
    expect(store().get("runtimeRequest", request.id)!.parentNotice).toBeNull();
    expect(runsOf(parent.threadId).filter((run) => run.startedAt !== null)).toHaveLength(1);
    await lab.host.threads.respondToRequest(request.id, { kind: "user_input", answers: { q1: ["yes"] } });
    await until("the task to be finalized", () => store().get("delegatedTask", started.taskId)!.finalizedAt);
    expect(runsOf(parent.threadId).filter((run) => run.startedAt !== null)).toHaveLength(1);
  });

  it("releases the turns task_cancel held: the next explicit send runs them first, in order, and the counters drop", async () => {
    const parent = await lab.liveAgent({ instance: "alpha" });
    const task = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
      task: "@@gate held-original @@reply never finishes",
      mode: "async",
    });
    await lab.waitForLiveTurn(task.childThreadId);
    const queued = await mustCall<SendResult>(parent.client, "t3_thread_send", {
      threadId: task.childThreadId,
      message: "@@reply the held follow-up ran",
      mode: "queue",
    });
    expect(queued.delivery).toBe("queued");
    await mustCall(parent.client, "task_cancel", { taskId: task.taskId });
    await until("the cancelled task to settle", () => store().get("delegatedTask", task.taskId)!.finalizedAt);
    expect(store().get("run", queued.runId)).toMatchObject({ status: "queued", held: true });
    expect(await mustCall<DelegateTaskResult>(parent.client, "task_status", { taskId: task.taskId })).toMatchObject({
      status: "interrupted",
      hasPendingChildRuns: true,
    });

    const next = await mustCall<SendResult>(parent.client, "t3_thread_send", {
      threadId: task.childThreadId,
      message: "@@reply the new message ran",
      mode: "auto",
    });
    expect(next.delivery).toBe("queued");
    await until("the child to run everything", () => idle(task.childThreadId));
    const held = store().get("run", queued.runId)!;
    const sent = store().get("run", next.runId)!;
    expect([held.status, held.summary, sent.status, sent.summary]).toEqual([
      "completed",
      "the held follow-up ran",
      "completed",
      "the new message ran",
    ]);
    expect(startSequence(held.id)).toBeLessThan(startSequence(sent.id));
    expect(store().get("thread", task.childThreadId)!.stopped).toBe(false);
    const after = await mustCall<DelegateTaskResult>(parent.client, "task_status", { taskId: task.taskId });
    expect(after).toMatchObject({
      status: "interrupted",
      hasPendingChildRuns: false,
      latestTerminalRunId: sent.id,
      latestTerminalSummary: "the new message ran",
    });
    const observer = await lab.client(["orchestration:read"]);
    const shell = await mustCall<{ thread: { queuedRuns: number } }>(observer, "t3_thread_read", {
      threadId: task.childThreadId,
    });
    expect(shell.thread.queuedRuns).toBe(0);
    parent.release();
  });

  it("resumes a stopped child with ThreadManagementService.resume: held runs start in their queue order", async () => {
    const parent = await lab.liveAgent({ instance: "alpha" });
    const task = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
      task: "@@gate resume-original @@reply never",
      mode: "async",
    });
    await lab.waitForLiveTurn(task.childThreadId);
    const first = await mustCall<SendResult>(parent.client, "t3_thread_send", {
      threadId: task.childThreadId,
      message: "@@reply first held",
      mode: "queue",
    });
    const second = await mustCall<SendResult>(parent.client, "t3_thread_send", {
      threadId: task.childThreadId,
      message: "@@reply second held",
      mode: "queue",
    });
    await mustCall(parent.client, "task_cancel", { taskId: task.taskId });
    await until("the cancelled task to settle", () => store().get("delegatedTask", task.taskId)!.finalizedAt);
    expect([store().get("run", first.runId)!.held, store().get("run", second.runId)!.held]).toEqual([true, true]);

    const resumed = await lab.host.threads.resume(task.childThreadId);
    expect(resumed.resumedRunIds).toEqual([first.runId, second.runId]);
    expect(resumed.thread.stopped).toBe(false);
    await until("both held runs to finish", () => idle(task.childThreadId));
    expect(startSequence(first.runId)).toBeLessThan(startSequence(second.runId));
    expect(await mustCall<DelegateTaskResult>(parent.client, "task_status", { taskId: task.taskId })).toMatchObject({
      hasPendingChildRuns: false,
      latestTerminalRunId: second.runId,
      latestTerminalSummary: "second held",
    });
    // A thread that is not stopped resumes nothing.
    expect((await lab.host.threads.resume(task.childThreadId)).resumedRunIds).toEqual([]);
    parent.release();
  });

  it("stop-and-queue-ahead on a stop-only provider: a queued delegated-task result still runs before the new message", async () => {
    const parent = await lab.liveAgent({ instance: "stopper" });
    const task = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
      task: "@@gate queue-ahead-child @@reply the child's result",
      mode: "async",
    });
    const later = await lab.host.threads.send({
      threadId: parent.threadId,
      text: "@@gate queue-ahead-user @@reply user message done",
      mode: "queue",
      createdBy: "user",
      creationSource: "cli",
    });
    lab.release("queue-ahead-child");
    await until("the task to be finalized", () => store().get("delegatedTask", task.taskId)!.finalizedAt);
    parent.release();
    // The parent's turn ended: its queued message starts and the result waits behind it.
    const result = await until("the result notice to be queued", () =>
      runsOf(parent.threadId).find((run) => run.messageId === `message:task-result:${task.taskId}`),
    );
    await until(
      "the queued user message to be live",
      () => store().get("attempt", store().get("run", later.runId)!.currentAttemptId ?? "")?.status === "running",
    );
    expect(store().get("run", result.id)!.status).toBe("queued");

    const jump = await mustCall<SendResult>(parent.client, "t3_thread_send", {
      threadId: parent.threadId,
      message: "@@reply jumped ahead",
      mode: "restart",
    });
    expect(jump).toMatchObject({ delivery: "interrupted_and_queued", action: "interrupt_then_queue_first" });
    await until("the parent to run everything", () => idle(parent.threadId));
    expect(store().get("run", later.runId)!.status).toBe("interrupted");
    expect(startSequence(result.id)).toBeLessThan(startSequence(jump.runId));
    expect(store().get("run", jump.runId)).toMatchObject({ status: "completed", summary: "jumped ahead" });
  });

  it("stop-and-queue-ahead on a stop-only provider: a result still pending (not yet queued) when the turn is stopped runs before the new message", async () => {
    const parent = await lab.liveAgent({ instance: "stopper" });
    const task = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
      task: "@@reply the pending result",
      mode: "async",
    });
    // The parent's turn is live, so the finished result waits, pending, for that turn to end.
    await until("the task to be finalized", () => store().get("delegatedTask", task.taskId)!.finalizedAt);
    expect(store().get("delegatedTask", task.taskId)!.delivery).toBe("pending");
    const resultMessageId = `message:task-result:${task.taskId}`;
    expect(runsOf(parent.threadId).some((run) => run.messageId === resultMessageId)).toBe(false);

    const jump = await mustCall<SendResult>(parent.client, "t3_thread_send", {
      threadId: parent.threadId,
      message: "@@reply jumped ahead of nothing queued",
      mode: "restart",
    });
    expect(jump).toMatchObject({ delivery: "interrupted_and_queued", action: "interrupt_then_queue_first" });
    await until("the parent to run everything", () => idle(parent.threadId));
    const result = runsOf(parent.threadId).find((run) => run.messageId === resultMessageId)!;
    expect(result).toMatchObject({ kind: "notification", status: "completed" });
    expect(startSequence(result.id)).toBeLessThan(startSequence(jump.runId));
    expect(store().get("run", jump.runId)).toMatchObject({
      status: "completed",
      summary: "jumped ahead of nothing queued",
    });
  });

  it("gives a follow-up sent to a finished child its own result transfer without changing the published result", async () => {
    const parent = await lab.liveAgent({ instance: "alpha" });
    const done = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
      task: "@@reply the first answer",
      mode: "wait",
    });
    expect(done).toMatchObject({
      status: "completed",
      summary: "the first answer",
      latestTerminalRunId: null,
      latestTerminalResultContextTransferId: null,
    });
    const followUp = await mustCall<SendResult>(parent.client, "t3_thread_send", {
      threadId: done.childThreadId,
      message: "@@reply the second answer",
    });
    const ended = await lab.host.threads.waitForRun({
      threadId: done.childThreadId,
      runId: followUp.runId,
      timeoutMs: 10_000,
    });
    expect(ended.run?.status).toBe("completed");
    const status = await mustCall<DelegateTaskResult>(parent.client, "task_status", { taskId: done.taskId });
    expect(status).toMatchObject({
      status: "completed",
      summary: "the first answer",
      resultContextTransferId: done.resultContextTransferId,
      latestTerminalRunId: followUp.runId,
      latestTerminalStatus: "completed",
      latestTerminalSummary: "the second answer",
      hasPendingChildRuns: false,
    });
    expect(status.latestTerminalResultContextTransferId).not.toBeNull();
    expect(status.latestTerminalResultContextTransferId).not.toBe(done.resultContextTransferId);
    expect(store().get("contextTransfer", status.latestTerminalResultContextTransferId!)).toMatchObject({
      kind: "subagent_result",
      content: "the second answer",
      sourceThreadId: done.childThreadId,
      targetThreadId: parent.threadId,
      delegatedTaskId: done.taskId,
    });
    expect(store().get("contextTransfer", done.resultContextTransferId!)!.content).toBe("the first answer");
    expect(
      store().select("contextTransfer", "delegated_task_id = ? AND kind = 'subagent_result'", [done.taskId]),
    ).toHaveLength(2);
    parent.release();
  });
});

describe("nested delegation across a host killed with SIGKILL", () => {
  const dirs: string[] = [];
  let child: EngineChild | null = null;
  afterEach(async () => {
    await child?.stop();
    child = null;
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("publishes the child's follow-up answer once, and wakes the parent once, after a restart while the grandchild still ran", async () => {
    const root = mkdtempSync(join(tmpdir(), "switchyard-nested-crash-"));
    dirs.push(root);
    const home = join(root, "home");
    const gateDir = join(root, "gates");
    const stateDir = join(root, "state");
    const workspace = mkdtempSync(join(tmpdir(), "switchyard-nested-crash-ws-"));
    dirs.push(workspace);
    const sql = (query: string) => ({ sql: query, params: [], timeoutMs: 15_000 });

    child = EngineChild.startScripted(home, gateDir, stateDir);
    await child.ready;
    const projectId = await child.call<string>("project", { path: workspace });
    const grandchild = {
      task: "@@gate crash-grandchild @@reply the grandchild counted 7",
      mode: "async",
      title: "Grandchild",
    };
    const delegation = {
      task: `@@tool delegate_task ${JSON.stringify(grandchild)} @@reply first turn done`,
      title: "Child",
      mode: "async",
      clientRequestId: "nested-crash",
    };
    const parent = await child.call<string>("thread", {
      projectId,
      instance: "alpha",
      runtimeMode: "full-access",
      prompt: `delegate @@tool delegate_task ${JSON.stringify(delegation)}`,
    });
    // The parent's and the child's own turns ended; the grandchild is live at its gate.
    const depth = (n: number) => `json_extract(t.data, '$.lineage.depth') = ${n}`;
    expect(
      await child.call(
        "waitFor",
        sql(`SELECT 1 FROM runs r JOIN threads t ON t.id = r.thread_id WHERE ${depth(1)} AND r.status = 'completed'`),
      ),
    ).toBe(true);
    expect(
      await child.call(
        "waitFor",
        sql(`SELECT 1 FROM attempts a JOIN threads t ON t.id = a.thread_id WHERE ${depth(2)} AND a.status = 'running'`),
      ),
    ).toBe(true);
    expect(
      await child.call("waitFor", sql(`SELECT 1 FROM runs WHERE thread_id = '${parent}' AND status = 'completed'`)),
    ).toBe(true);
    await untilGatesReached(gateDir, ["crash-grandchild"]);

    await child.kill9();

    child = EngineChild.startScripted(home, gateDir, stateDir);
    const ready = await child.ready;
    expect(ready.report.continuedRuns).toHaveLength(1);
    releaseGate(gateDir, "crash-grandchild");
    // The child's answer reaches the idle parent as one wake message.
    expect(
      await child.call(
        "waitFor",
        sql(`SELECT 1 FROM items WHERE thread_id = '${parent}' AND id LIKE 'message:task-result:%'`),
      ),
    ).toBe(true);
    const wake = await child.call<{ run: { status: string; kind: string } }>("wait", {
      threadId: parent,
      timeoutMs: 20_000,
    });
    expect(wake.run).toMatchObject({ status: "completed", kind: "notification" });
    await child.call("drain");
    await child.stop();
    child = null;

    const db = new Database(join(home, "switchyard.db"), { readonly: true });
    try {
      const tasks = (db.prepare("SELECT data FROM delegated_tasks").all() as { data: string }[]).map(
        (row) =>
          JSON.parse(row.data) as {
            id: string;
            depth: number;
            status: string;
            summary: string;
            delivery: string;
            childThreadId: string;
            resultRunId: string;
          },
      );
      const outer = tasks.find((task) => task.depth === 1)!;
      const inner = tasks.find((task) => task.depth === 2)!;
      expect(inner).toMatchObject({ status: "completed", summary: "the grandchild counted 7", delivery: "delivered" });
      expect(outer).toMatchObject({ status: "completed", delivery: "delivered" });
      expect(outer.summary).toMatch(/^scripted reply to: Delegated task "Grandchild"/);
      expect(outer.summary).toContain("the grandchild counted 7");
      // Nothing else was published for either task.
      expect(db.prepare("SELECT COUNT(*) AS n FROM context_transfers WHERE kind = 'subagent_result'").get()).toEqual({
        n: 2,
      });
      const childRuns = db
        .prepare(
          "SELECT json_extract(data, '$.kind') AS kind, status, id FROM runs WHERE thread_id = ? ORDER BY ordinal",
        )
        .all(outer.childThreadId) as { kind: string; status: string; id: string }[];
      expect(childRuns.map((run) => [run.kind, run.status])).toEqual([
        ["work", "completed"],
        ["notification", "completed"],
      ]);
      expect(outer.resultRunId).toBe(childRuns[1]!.id);
      // One wake into the child (the grandchild's result), one into the parent (the child's answer).
      expect(
        db.prepare("SELECT thread_id FROM items WHERE id LIKE 'message:task-result:%' ORDER BY thread_id").all(),
      ).toEqual(
        [{ thread_id: outer.childThreadId }, { thread_id: parent }].sort((a, b) =>
          a.thread_id < b.thread_id ? -1 : 1,
        ),
      );
      const wakeText = db
        .prepare(
          "SELECT json_extract(data, '$.text') AS text FROM items WHERE thread_id = ? AND id LIKE 'message:task-result:%'",
        )
        .get(parent) as { text: string };
      expect(wakeText.text).toContain("the grandchild counted 7");
    } finally {
      db.close();
    }
  });
});
