import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpLab, defaultProviders } from "../support/mcp-lab.js";
import { mustCall } from "../support/mcp-client.js";
import type { DelegateTaskResult } from "../../src/services/delegation/task-view.js";
import type { TreeUsage, UsageTotals } from "../../src/services/usage/usage-service.js";

/**
 * Usage through the real MCP endpoint, engine and SQLite with scripted providers that report
 * known token counts (`@@usage`): stored per turn with its run, `unknown` (never 0) where a
 * turn reported none, priced as reported / estimated / unpriced, and rolled up per thread and
 * per task over the whole tree, live as each turn ends.
 */
describe("usage: per turn, per run, per thread and per delegation tree", () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start({
      providers: defaultProviders,
      // alpha-large is priced by the config (USD per million tokens); alpha-small is not priced anywhere.
      pricing: {
        asOf: "2026-01-15",
        useDefaults: false,
        models: { "alpha-large": { input: 2, output: 10, cacheRead: 0.5 } },
      },
    });
  });
  afterAll(async () => lab.stop());

  async function until<T>(what: string, probe: () => T | null | undefined | false): Promise<T> {
    const value = await lab.host.waiter.waitFor(() => probe() || null, { timeoutMs: 15_000 });
    if (value === null) throw new Error(`timed out waiting for ${what}`);
    return value as T;
  }

  type ReadResult = { usage: TreeUsage; runs: { runId: string; usage?: UsageTotals }[] };

  it("a turn without a usage report reads unknown with no figures; one with a report is stored with its run", async () => {
    const silent = (
      await lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId: "alpha",
        prompt: "@@reply no usage here",
        createdBy: "user",
        creationSource: "cli",
      })
    ).thread.id;
    await lab.host.threads.waitForRun({ threadId: silent, timeoutMs: 10_000 });
    const client = await lab.client(["orchestration:read"]);
    const read = await mustCall<ReadResult>(client, "t3_thread_read", { threadId: silent });
    expect(read.usage.own).toMatchObject({
      status: "unknown",
      turns: { ended: 1, reported: 0, unknown: 1, inFlight: 0 },
      tokens: null,
      cost: { usd: null, basis: "unpriced", unpricedTurns: 1 },
    });
    expect(read.runs[0]!.usage).toMatchObject({ status: "unknown", tokens: null });
    expect(lab.host.store.count("turnUsage", "thread_id = ?", [silent])).toBe(0);

    const counted = (
      await lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId: "alpha",
        model: "alpha-small",
        prompt: "@@usage in=120 out=30 cached=50 cache-write=7 reasoning=12 @@reply counted",
        createdBy: "user",
        creationSource: "cli",
      })
    ).thread.id;
    const run = await lab.host.threads.waitForRun({ threadId: counted, timeoutMs: 10_000 });
    const stored = lab.host.store.select("turnUsage", "thread_id = ?", [counted]);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({
      id: run.run!.currentAttemptId,
      runId: run.run!.id,
      providerInstanceId: "alpha",
      model: "alpha-small",
      inputTokens: 120,
      outputTokens: 30,
      cacheReadInputTokens: 50,
      cacheCreationInputTokens: 7,
      reasoningOutputTokens: 12,
      totalTokens: 207,
      // alpha-small has no price and reported none: unpriced, not $0.
      costUsd: null,
      costBasis: "unpriced",
    });
    const again = await mustCall<ReadResult>(client, "t3_thread_read", { threadId: counted });
    expect(again.usage.own).toMatchObject({
      status: "reported",
      turns: { ended: 1, reported: 1, unknown: 0 },
      tokens: { input: 120, output: 30, cacheRead: 50, cacheWrite: 7, reasoning: 12, total: 207 },
      cost: { usd: null, basis: "unpriced", unpricedTurns: 1 },
    });
    expect(again.runs[0]!.usage).toMatchObject({ status: "reported", tokens: { total: 207 } });
  });

  it("prices a turn as reported, estimated from the price table (with its date), or unpriced, and sums them honestly", async () => {
    const reported = (
      await lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId: "alpha",
        model: "alpha-large",
        prompt: "@@usage in=1000 out=100 cost=0.25 @@reply paid",
        createdBy: "user",
        creationSource: "cli",
      })
    ).thread.id;
    await lab.host.threads.waitForRun({ threadId: reported, timeoutMs: 10_000 });
    expect(lab.host.store.select("turnUsage", "thread_id = ?", [reported])[0]).toMatchObject({
      costUsd: 0.25,
      costBasis: "reported",
      pricing: null,
    });

    const estimated = (
      await lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId: "alpha",
        model: "alpha-large",
        prompt: "@@usage in=1000000 out=100000 cached=200000 @@reply priced",
        createdBy: "user",
        creationSource: "cli",
      })
    ).thread.id;
    await lab.host.threads.waitForRun({ threadId: estimated, timeoutMs: 10_000 });
    // 1M input at $2 + 200k cached at $0.5 + 100k output at $10 = $2 + $0.1 + $1 = $3.1
    const record = lab.host.store.select("turnUsage", "thread_id = ?", [estimated])[0]!;
    expect(record).toMatchObject({
      costBasis: "estimated",
      pricing: { entries: [{ model: "alpha-large", source: "config", asOf: "2026-01-15" }] },
    });
    expect(record.costUsd).toBeCloseTo(3.1, 10);

    // A thread with one priced and one unknown turn: the sum covers what is known and says so.
    const mixed = (
      await lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId: "alpha",
        model: "alpha-large",
        prompt: "@@usage in=500000 out=0 @@reply half",
        createdBy: "user",
        creationSource: "cli",
      })
    ).thread.id;
    await lab.host.threads.waitForRun({ threadId: mixed, timeoutMs: 10_000 });
    const second = await lab.host.threads.send({
      threadId: mixed,
      text: "@@reply no report",
      mode: "auto",
      createdBy: "user",
      creationSource: "cli",
    });
    await lab.host.threads.waitForRun({ threadId: mixed, runId: second.runId, timeoutMs: 10_000 });
    const usage = (await lab.host.usage.thread(mixed)).own;
    expect(usage).toMatchObject({
      status: "partial",
      turns: { ended: 2, reported: 1, unknown: 1 },
      tokens: { total: 500_000 },
      cost: { basis: "partial", unpricedTurns: 1 },
    });
    expect(usage.cost.usd).toBeCloseTo(1, 10);
  });

  it("rolls a three-level tree up per task and per thread, across providers, live as each turn ends", async () => {
    const root = await lab.liveAgent({ instance: "alpha" });
    const client = root.client;
    // (Titles without directives: the result wake quotes the title, and the scripted provider obeys directives.)
    const grandchildTask = {
      task: "@@usage in=300 out=30 @@gate grandchild-done @@reply grandchild done",
      title: "grandchild",
      target: { providerInstanceId: "alpha" },
      mode: "async",
      clientRequestId: "grandchild",
    };
    const childScript = `@@usage in=200 out=20 @@tool delegate_task ${JSON.stringify(grandchildTask)} @@reply child delegated`;
    const child = await mustCall<DelegateTaskResult>(client, "delegate_task", {
      task: childScript,
      title: "child",
      target: { providerInstanceId: "beta" },
      mode: "async",
      clientRequestId: "child",
    });
    await until("the child's first turn to end", () => lab.host.store.get("run", child.childRunId!)?.endedAt ?? null);
    // The child's turn ended (it reported), the grandchild is still running: live totals count
    // the child's turn and show the grandchild's as in flight.
    expect(
      (await mustCall<DelegateTaskResult>(client, "task_status", { taskId: child.taskId })).usage!.own,
    ).toMatchObject({ status: "reported", tokens: { total: 220 } });
    const grandchildId = lab.host.store.select("delegatedTask", "parent_thread_id = ?", [child.childThreadId])[0]!.id;
    await until(
      "the grandchild's turn to be live",
      () =>
        lab.host.store.count("attempt", "thread_id = ? AND status = 'running'", [
          lab.host.store.get("delegatedTask", grandchildId)!.childThreadId,
        ]) > 0,
    );
    const live = await mustCall<DelegateTaskResult>(client, "task_status", { taskId: child.taskId });
    expect(live.workState).toBe("waiting_for_children");
    expect(live.usage!.subtree).toMatchObject({
      status: "reported",
      turns: { ended: 1, reported: 1, inFlight: 1 },
      tokens: { total: 220 },
    });

    lab.release("grandchild-done");
    const done = await until("the child's task to publish", () => {
      const task = lab.host.store.get("delegatedTask", child.taskId)!;
      return task.finalizedAt !== null ? task : null;
    });
    expect(done.status).toBe("completed");
    const final = await mustCall<DelegateTaskResult>(client, "task_status", { taskId: child.taskId });
    // The child's thread: its first turn (220) and the follow-up turn that took the grandchild's
    // result (no report: unknown). Below it, the grandchild's 330.
    expect(final.usage!.own).toMatchObject({
      status: "partial",
      turns: { ended: 2, reported: 1, unknown: 1 },
      tokens: { total: 220 },
    });
    expect(final.usage!.subtree).toMatchObject({
      status: "partial",
      turns: { ended: 3, reported: 2, unknown: 1, inFlight: 0 },
      tokens: { input: 500, output: 50, total: 550 },
    });

    // The roll-up is the sum of the runs of every thread of the tree.
    const threads = [
      root.threadId,
      child.childThreadId,
      lab.host.store.get("delegatedTask", grandchildId)!.childThreadId,
    ];
    const runs = threads.flatMap((threadId) => lab.host.store.select("run", "thread_id = ?", [threadId]));
    let sumOfRuns = 0;
    for (const run of runs) sumOfRuns += (await lab.host.usage.run(run.id)).tokens?.total ?? 0;
    expect((await lab.host.usage.thread(root.threadId)).subtree.tokens!.total).toBe(sumOfRuns);
    expect(sumOfRuns).toBe(550);
    // The root's own turn is still running: it adds its usage when it ends.
    const rootRead = await mustCall<ReadResult>(client, "t3_thread_read", { threadId: root.threadId });
    expect(rootRead.usage.own).toMatchObject({ status: "none", turns: { ended: 0, inFlight: 1 } });
    expect(rootRead.usage.subtree).toMatchObject({ tokens: { total: 550 } });
    root.release();

    // What the HTTP API calls: a thread's usage with its budgets, a project's totals.
    const summary = await lab.host.usage.summary({ threadId: root.threadId });
    expect(summary).toMatchObject({
      scope: "thread",
      threadId: root.threadId,
      subtree: { tokens: { total: 550 } },
      budgets: [],
    });
    const project = await lab.host.usage.summary({ projectId: lab.projectId });
    expect(project.scope).toBe("project");
    if (project.scope === "project") {
      expect(project.rootThreads.find((thread) => thread.threadId === root.threadId)?.subtree.tokens?.total).toBe(550);
      expect(project.rootThreads.every((thread) => thread.threadId !== child.childThreadId)).toBe(true);
      expect(project.total.tokens!.total).toBeGreaterThanOrEqual(550);
    }
  });
});
