import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpLab, defaultProviders } from "../support/mcp-lab.js";
import { mustCall } from "../support/mcp-client.js";
import { sqliteStore } from "../support/sqlite-store.js";
import { scriptedInstance } from "../support/test-host.js";
import type { DelegateTaskResult } from "../../src/services/delegation/task-view.js";
import type { NativeSubagentView } from "../../src/services/native-subagents.js";
import type { TreeUsage } from "../../src/services/usage/usage-service.js";
import { PARENT_TURN_ENDED_SUMMARY } from "../../src/engine/native-subagent-endings.js";

/**
 * Provider-native sub-agents through the real MCP endpoint, engine and SQLite: the scripted
 * provider reports one (`@@subagent {json}`) with its model, agent type, task, transcript and
 * usage, and the child turns up under the run that spawned it in task_status and t3_thread_read,
 * marked native (observed, never an orchestrator-owned child), its transcript bounded, its usage
 * shown on it and never counted twice in the tree's totals.
 */
describe("native sub-agents: recorded as observed children of the run that spawned them", () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start({
      providers: (dirs) => [
        ...(defaultProviders(dirs) as Record<string, unknown>[]),
        // A provider with native sub-agents that does not report their usage (pessimistic: none kept).
        scriptedInstance("quiet", {
          gateDir: dirs.gateDir,
          stateDir: `${dirs.home}/scripted-state`,
          capabilities: { subagents: { native: "observed", exposesChildThreadIds: false } },
        }),
      ],
    });
  });
  afterAll(async () => lab.stop());

  type ReadResult = { usage: TreeUsage; nativeSubagents?: NativeSubagentView[]; runs: { runId: string }[] };
  type StatusResult = DelegateTaskResult & { nativeSubagents?: NativeSubagentView[] };

  // 45 messages, the first one longer than a message's bound.
  const messages = [
    { role: "user", text: `Survey the repository. ${"x".repeat(2_500)}` },
    ...Array.from({ length: 44 }, (_, i) => ({ role: i % 2 === 0 ? "user" : "assistant", text: `step ${i + 1}` })),
  ];
  const native = {
    title: "survey",
    task: "Survey the repository and list the packages",
    agentType: "explorer",
    model: "alpha-small",
    toolCall: true,
    usage: { inputTokens: 300, outputTokens: 30 },
    messages,
  };

  it("shows the child with provider, model, type, task, status and usage under the child's run; totals count the parent turn once", async () => {
    const root = await lab.liveAgent({ instance: "alpha" });
    const task = await mustCall<DelegateTaskResult>(root.client, "delegate_task", {
      task: `@@usage in=500 out=50 @@subagent ${JSON.stringify(native)} @@reply surveyed`,
      title: "with a native helper",
      target: { providerInstanceId: "alpha" },
      mode: "wait",
      clientRequestId: "native-1",
    });
    expect(task.status).toBe("completed");

    const status = await mustCall<DelegateTaskResult>(root.client, "task_status", { taskId: task.taskId });
    expect(status.nativeSubagents).toHaveLength(1);
    const child = status.nativeSubagents![0]!;
    expect(child).toMatchObject({
      origin: "provider_native",
      runId: task.childRunId,
      title: "survey",
      status: "completed",
      providerInstanceId: "alpha",
      model: "alpha-small",
      agentType: "explorer",
      task: "Survey the repository and list the packages",
      summary: "survey done",
      usage: {
        tokens: { input: 300, output: 30, cacheRead: 0, cacheWrite: 0, total: 330 },
        costUsd: null,
        countedIn: "parent_turn",
      },
      // The newest 40 of 45 messages.
      transcript: { messages: 40, dropped: 5, latest: { role: "assistant", text: "step 44" } },
    });
    expect(child.parentItemId).toMatch(/:tool:task-/);
    // The native child's usage is a breakdown of the child thread's turn: 550, not 880.
    expect(status.usage!.own).toMatchObject({ status: "reported", tokens: { total: 550 } });
    expect(status.usage!.subtree).toMatchObject({ tokens: { total: 550 } });

    // t3_thread_read of the thread that spawned it lists it too; the root's tree counts 550 once.
    const reader = await lab.client(["orchestration:read"]);
    const read = await mustCall<ReadResult>(reader, "t3_thread_read", { threadId: task.childThreadId });
    expect(read.nativeSubagents).toEqual([child]);
    expect(read.runs.map((run) => run.runId)).toContain(child.runId);
    expect(read.usage.subtree).toMatchObject({ tokens: { total: 550 } });
    // Within a tight character budget the read still fits: the native list gives way before the thread's usage.
    const tight = await mustCall<ReadResult>(reader, "t3_thread_read", {
      threadId: task.childThreadId,
      maxChars: 3_000,
    });
    expect(JSON.stringify(tight).length).toBeLessThanOrEqual(3_000);
    expect(tight.nativeSubagents).toBeUndefined();
    const rootRead = await mustCall<ReadResult>(reader, "t3_thread_read", { threadId: root.threadId });
    expect(rootRead.nativeSubagents).toBeUndefined();
    expect(rootRead.usage.subtree).toMatchObject({ tokens: { total: 550 } });

    // Observed, never owned: no thread, no delegated task was made for it.
    expect(lab.host.store.count("delegatedTask", "parent_thread_id = ?", [task.childThreadId])).toBe(0);
    expect(lab.host.store.count("thread", "1 = 1", [])).toBe(2);

    // The transcript kept: the newest 40 messages, each at most 2,000 characters.
    const item = lab.host.store.get("item", child.itemId)!;
    const transcript = (item.data as { transcript: { text: string; truncated: boolean }[] }).transcript;
    expect(transcript).toHaveLength(40);
    expect(transcript[0]!.text).toBe("step 5");
    expect(transcript.every((message) => message.text.length <= 2_001)).toBe(true);
    // Held until the child's final event, the transcript is logged once: the item's two changes
    // (running, then completed), not one per message.
    expect(
      sqliteStore(lab.host.store)
        .db.prepare("SELECT COUNT(*) AS n FROM events WHERE entity = 'item' AND entity_id = ?")
        .get(child.itemId),
    ).toEqual({ n: 2 });
    root.release();
  });

  // A harness that leaves its children to its turn's end: spawned, never reported ended.
  const unended = { title: "left open", model: "alpha-small", status: "running" };

  it("ends a native child its harness never ended when its parent turn ends: failed, saying why", async () => {
    const { thread } = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "alpha",
      prompt: `@@subagent ${JSON.stringify(unended)} @@reply parent done`,
      createdBy: "user",
      creationSource: "cli",
    });
    const { run } = await lab.host.threads.waitForRun({ threadId: thread.id, timeoutMs: 10_000 });
    expect(run?.status).toBe("completed");
    const reader = await lab.client(["orchestration:read"]);
    const read = await mustCall<ReadResult>(reader, "t3_thread_read", { threadId: thread.id });
    expect(read.nativeSubagents).toHaveLength(1);
    expect(read.nativeSubagents![0]).toMatchObject({
      title: "left open",
      status: "failed",
      summary: PARENT_TURN_ENDED_SUMMARY,
    });
  });

  it("a stop of the tree (task_cancel) ends a native child still running in the stopped turn", async () => {
    const root = await lab.liveAgent({ instance: "alpha" });
    const task = await mustCall<DelegateTaskResult>(root.client, "delegate_task", {
      task: `@@subagent ${JSON.stringify(unended)} @@gate native-stop @@reply never`,
      title: "stopped with a native child",
      target: { providerInstanceId: "alpha" },
      mode: "async",
      clientRequestId: "native-stop",
    });
    const childItems = () => lab.host.store.select("item", "thread_id = ? AND kind = 'subagent'", [task.childThreadId]);
    await lab.host.waiter.waitFor(() => (childItems().length === 1 ? true : null), { timeoutMs: 10_000 });
    const running = await mustCall<StatusResult>(root.client, "task_status", { taskId: task.taskId });
    expect(running.nativeSubagents?.map((child) => child.status)).toEqual(["running"]);

    await mustCall(root.client, "task_cancel", { taskId: task.taskId, reason: "stop the tree" });
    await lab.host.waiter.waitFor(
      () => (lab.host.store.get("delegatedTask", task.taskId)!.finalizedAt !== null ? true : null),
      { timeoutMs: 10_000 },
    );
    const stopped = await mustCall<StatusResult>(root.client, "task_status", { taskId: task.taskId });
    expect(stopped.status).toBe("interrupted");
    expect(stopped.nativeSubagents).toMatchObject([{ title: "left open", status: "failed" }]);
    lab.release("native-stop");
    root.release();
  });

  it("keeps no usage for a child whose provider does not declare per-sub-agent usage", async () => {
    const { thread } = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "quiet",
      prompt: `@@subagent ${JSON.stringify({ title: "quiet helper", usage: { inputTokens: 9 }, model: "q-1" })} @@reply ok`,
      createdBy: "user",
      creationSource: "cli",
    });
    await lab.host.threads.waitForRun({ threadId: thread.id, timeoutMs: 10_000 });
    const reader = await lab.client(["orchestration:read"]);
    const read = await mustCall<ReadResult>(reader, "t3_thread_read", { threadId: thread.id });
    expect(read.nativeSubagents).toHaveLength(1);
    expect(read.nativeSubagents![0]).toMatchObject({ title: "quiet helper", model: "q-1", usage: null });
  });
});
