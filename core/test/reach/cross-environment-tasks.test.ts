import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ForeignTasks } from "../../src/services/reach/foreign-tasks.js";
import type { ReachCallMeta } from "../../src/services/reach/link-calls.js";
import { ReachGrants } from "../../src/services/reach/reach-grants.js";
import { RemoteTasks, remoteResultMessageId } from "../../src/services/reach/remote-tasks.js";
import { isOrchestratorFailure } from "../../src/engine/orchestrator-failure.js";
import { stopThread } from "../../src/engine/task-stop.js";
import { McpLab } from "../support/mcp-lab.js";
import { sqliteStore } from "../support/sqlite-store.js";

/**
 * The two halves of a delegation across environments on real stores: the side that runs the
 * child (foreign lineage, budgets, the grant, the durable outbox) and the side that delegated
 * (the task row, its idempotent receipt and the delivery of the result to the parent as an event).
 */
describe("tasks across environments", () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start({ budgets: { maxDelegationDepth: 3 } });
  });
  afterAll(async () => {
    await lab.stop();
  });

  const foreign = () => lab.host.container.resolve(ForeignTasks);
  const grants = () => lab.host.container.resolve(ReachGrants);
  const remote = () => lab.host.container.resolve(RemoteTasks);
  const until = async <T>(what: string, check: () => T | null | undefined | false): Promise<T> => {
    const value = await lab.host.waiter.waitFor(() => check() || null, { timeoutMs: 20_000 });
    if (value === null) throw new Error(`timed out waiting for ${what}`);
    return value as T;
  };
  const outboxRows = () =>
    sqliteStore(lab.host.store)
      .statement("SELECT task_id, result, finished_at, acked_at FROM reach_foreign_tasks")
      .all() as {
      task_id: string;
      result: string | null;
      finished_at: number | null;
      acked_at: number | null;
    }[];
  const meta = (
    overrides: Partial<NonNullable<ReachCallMeta["delegation"]>> = {},
    ceiling = { runtimeMode: "full-access", interactionMode: "default" },
  ): ReachCallMeta => ({
    environmentId: "env_parentside",
    callerThreadId: "thread-on-a",
    ceiling,
    delegation: {
      environmentId: "env_parentside",
      threadId: "thread-on-a",
      runId: "run-on-a",
      rootThreadId: "root-on-a",
      depth: 1,
      maxDepth: 3,
      ...overrides,
    },
  });
  const runsOfMessage = (threadId: string, messageId: string) =>
    lab.host.store.select("run", "thread_id = ?", [threadId]).filter((run) => run.messageId === messageId);
  const refusal = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (error) {
      if (isOrchestratorFailure(error)) return error;
      throw error;
    }
    throw new Error("expected a typed refusal");
  };

  it("runs a child with its foreign lineage, puts its result in the outbox once, and keeps it until acknowledged", async () => {
    const { grant } = grants().issue({
      for: "linux",
      projects: "*",
      verbs: ["delegate", "read"],
      maxRuntimeMode: "approval-required",
      ttlMs: 3_600_000,
    });
    const view = await foreign().delegate(grant, meta({ depth: 2 }), {
      task: "@@reply PEAR",
      target: { providerInstanceId: "alpha" },
      clientRequestId: "pear",
      projectId: lab.projectId,
    });
    const child = lab.host.store.get("thread", view.childThreadId)!;
    expect(child.lineage).toMatchObject({
      depth: 2,
      foreignParent: {
        environmentId: "env_parentside",
        threadId: "thread-on-a",
        runId: "run-on-a",
        rootThreadId: "root-on-a",
      },
    });
    // The caller claimed full-access; the grant allows approval-required: the narrower holds.
    expect(child.runtimeMode).toBe("approval-required");
    expect(view.childThreadLink).toBe(`switchyard-thread://v2/${lab.registry.environmentId}/${view.childThreadId}`);

    // A retry of the same request is the same task.
    const again = await foreign().delegate(grant, meta({ depth: 2 }), {
      task: "@@reply PEAR",
      target: { providerInstanceId: "alpha" },
      clientRequestId: "pear",
      projectId: lab.projectId,
    });
    expect(again.taskId).toBe(view.taskId);

    const results = await foreign().results(grant, { waitMs: 20_000 });
    expect(results).toEqual([
      {
        taskId: view.taskId,
        status: "completed",
        summary: "PEAR",
        parent: expect.objectContaining({ threadId: "thread-on-a" }),
      },
    ]);
    expect(await foreign().view(grant, view.taskId)).toMatchObject({
      status: "completed",
      workState: "result_available",
      summary: "PEAR",
    });
    // Not acknowledged: handed over again.
    expect((await foreign().results(grant, { waitMs: 0 })).map((result) => result.taskId)).toEqual([view.taskId]);
    expect(await foreign().results(grant, { acknowledge: [view.taskId], waitMs: 0 })).toEqual([]);
    expect(outboxRows().filter((row) => row.task_id === view.taskId)).toEqual([
      expect.objectContaining({ finished_at: expect.any(Number), acked_at: expect.any(Number) }),
    ]);

    // Another grant does not see the task.
    const { grant: other } = grants().issue({
      for: "other",
      projects: "*",
      verbs: ["read"],
      maxRuntimeMode: "approval-required",
      ttlMs: 3_600_000,
    });
    expect((await refusal(Promise.resolve().then(() => foreign().view(other, view.taskId)))).code).toBe(
      "task_not_found",
    );
  });

  it("refuses, before creating anything, what the grant or the budgets across both sides do not allow", async () => {
    const threadsBefore = lab.host.store.count("thread", "1 = 1", []);
    const { grant: readOnly } = grants().issue({
      for: "reader",
      projects: "*",
      verbs: ["read"],
      maxRuntimeMode: "full-access",
      ttlMs: 3_600_000,
    });
    const noDelegate = await refusal(
      foreign().delegate(readOnly, meta(), { task: "@@reply X", projectId: lab.projectId }),
    );
    expect(noDelegate).toMatchObject({
      code: "capability_denied",
      details: { verb: "delegate", grantId: readOnly.id },
    });

    const { grant } = grants().issue({
      for: "budgeted",
      projects: [lab.projectId],
      verbs: ["delegate"],
      maxRuntimeMode: "auto-accept-edits",
      ttlMs: 3_600_000,
    });
    const tooDeep = await refusal(foreign().delegate(grant, meta({ depth: 3, maxDepth: 2 }), { task: "@@reply X" }));
    expect(tooDeep).toMatchObject({ code: "invalid_request", details: { budget: "maxDelegationDepth", limit: 2 } });
    const tooDeepHere = await refusal(
      foreign().delegate(grant, meta({ depth: 4, maxDepth: 10 }), { task: "@@reply X" }),
    );
    expect(tooDeepHere).toMatchObject({ code: "invalid_request", details: { budget: "maxDelegationDepth", limit: 3 } });
    const noTarget = await refusal(foreign().delegate(grant, meta(), { task: "@@reply X" }));
    expect(noTarget).toMatchObject({ code: "invalid_request", details: { field: "target" } });
    const tooBroad = await refusal(
      foreign().delegate(grant, meta(), {
        task: "@@reply X",
        target: { providerInstanceId: "alpha" },
        runtimeMode: "full-access",
      }),
    );
    expect(tooBroad).toMatchObject({
      code: "runtime_mode_escalation_denied",
      details: { maxRuntimeMode: "auto-accept-edits" },
    });
    const noLineage = await refusal(
      foreign().delegate(
        grant,
        {
          environmentId: "env_parentside",
          callerThreadId: null,
          ceiling: { runtimeMode: "full-access", interactionMode: "default" },
        },
        { task: "@@reply X" },
      ),
    );
    expect(noLineage.code).toBe("parent_not_active");
    expect(lab.host.store.count("thread", "1 = 1", [])).toBe(threadsBefore);
  });

  it("counts a remote run's unfinished children against maxConcurrentChildrenPerRun", async () => {
    const small = await McpLab.start({ budgets: { maxConcurrentChildrenPerRun: 1 } });
    try {
      const { grant } = small.host.container
        .resolve(ReachGrants)
        .issue({ for: "linux", projects: "*", verbs: ["delegate"], maxRuntimeMode: "full-access", ttlMs: 3_600_000 });
      const tasks = small.host.container.resolve(ForeignTasks);
      await tasks.delegate(grant, meta(), {
        task: "@@gate hold-breadth @@reply ONE",
        target: { providerInstanceId: "alpha" },
        clientRequestId: "one",
        projectId: small.projectId,
      });
      const second = await refusal(
        tasks.delegate(grant, meta(), {
          task: "@@reply TWO",
          target: { providerInstanceId: "alpha" },
          clientRequestId: "two",
          projectId: small.projectId,
        }),
      );
      expect(second).toMatchObject({
        code: "invalid_request",
        details: { budget: "maxConcurrentChildrenPerRun", limit: 1 },
      });
      // Another run of the delegating side is another budget.
      await tasks.delegate(grant, meta({ runId: "another-run" }), {
        task: "@@reply THREE",
        target: { providerInstanceId: "alpha" },
        clientRequestId: "three",
        projectId: small.projectId,
      });
      small.release("hold-breadth");
    } finally {
      await small.stop();
    }
  });

  it("receives a remote result once and delivers it to the parent as the usual result message", async () => {
    const parent = await lab.liveAgent({ title: "parent on a" });
    const run = lab.host.store.select("run", "thread_id = ?", [parent.threadId])[0]!;
    await remote().record({
      linkName: "mac",
      remoteTaskId: "task:remote-1",
      environmentId: "env_mac",
      parentThreadId: parent.threadId,
      parentRunId: run.id,
      childThreadId: "thread-on-b",
      childThreadLink: "switchyard-thread://v2/env_mac/thread-on-b",
      title: "on the mac",
    });
    // Recorded twice (a retried delegation): still one task, one item in the parent.
    await remote().record({
      linkName: "mac",
      remoteTaskId: "task:remote-1",
      environmentId: "env_mac",
      parentThreadId: parent.threadId,
      parentRunId: run.id,
      childThreadId: "thread-on-b",
      childThreadLink: "switchyard-thread://v2/env_mac/thread-on-b",
      title: "on the mac",
    });
    expect((await remote().outstanding("mac")).map((task) => task.remoteTaskId)).toEqual(["task:remote-1"]);
    expect(
      lab.host.store.select("item", "thread_id = ? AND kind = 'subagent'", [parent.threadId]).map((item) => item.data),
    ).toEqual([expect.objectContaining({ origin: "remote_task", environment: "mac", taskId: "task:remote-1" })]);

    expect(
      await remote().receive("mac", { taskId: "task:remote-1", status: "completed", summary: "@@reply THANKS" }),
    ).toBe(true);
    expect(
      await remote().receive("mac", { taskId: "task:remote-1", status: "completed", summary: "@@reply THANKS" }),
    ).toBe(false);
    expect(await remote().outstanding("mac")).toEqual([]);
    parent.release();
    const messageId = remoteResultMessageId("mac", "task:remote-1");
    const delivered = await until("the result message", () =>
      runsOfMessage(parent.threadId, messageId).find((r) => r.status === "completed"),
    );
    expect(delivered.kind).toBe("notification");
    const items = lab.host.store.select("item", "thread_id = ? AND id = ?", [parent.threadId, messageId]);
    expect(items).toHaveLength(1);
    expect(items[0]!.text).toContain("switchyard-thread://v2/env_mac/thread-on-b");
    expect(items[0]!.text).toContain("@@reply THANKS");
    expect(await remote().get("mac", "task:remote-1")).toMatchObject({ delivery: "delivered", status: "completed" });
  });

  it("keeps a result for a stopped parent until its next run ends", async () => {
    const parent = await lab.liveAgent({ title: "stopped parent" });
    const run = lab.host.store.select("run", "thread_id = ?", [parent.threadId])[0]!;
    await remote().record({
      linkName: "mac",
      remoteTaskId: "task:remote-2",
      environmentId: "env_mac",
      parentThreadId: parent.threadId,
      parentRunId: run.id,
      childThreadId: "t2",
      childThreadLink: "switchyard-thread://v2/env_mac/t2",
      title: "second",
    });
    await lab.host.engine.apply(async (ctx) => await stopThread(ctx, parent.threadId, "stopped_by_user"));
    await until(
      "the parent stopped",
      () =>
        lab.host.store.get("run", run.id)!.status === "interrupted" ||
        lab.host.store.get("run", run.id)!.status === "cancelled",
    );
    expect(await remote().receive("mac", { taskId: "task:remote-2", status: "completed", summary: "LATER" })).toBe(
      true,
    );
    const messageId = remoteResultMessageId("mac", "task:remote-2");
    expect(runsOfMessage(parent.threadId, messageId)).toEqual([]);
    // The user talks to the parent again: once that run ends, the result is delivered.
    await lab.host.threads.send({
      threadId: parent.threadId,
      text: "@@reply back",
      mode: "queue",
      createdBy: "user",
      creationSource: "cli",
    });
    await until("the deferred delivery", () => runsOfMessage(parent.threadId, messageId).length === 1);
    expect((await remote().get("mac", "task:remote-2"))!.delivery).toBe("delivered");
  });
});
