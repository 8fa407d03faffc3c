import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpLab, defaultProviders } from "../support/mcp-lab.js";
import { callTool, mustCall } from "../support/mcp-client.js";
import type { DelegateTaskResult } from "../../src/services/delegation/task-view.js";
import type { BudgetView } from "../../src/services/usage/usage-service.js";

/**
 * Budgets on delegation trees through the real MCP endpoint, engine and SQLite with scripted
 * providers reporting known usage: a child's budget must fit in what is left of its parent's;
 * a reached token, cost or wall-clock budget stops the tree (no new children, running turns
 * interrupted, partial results with the reason), and a stopped tree's sessions are closed.
 */
describe("tree budgets: tokens, cost and wall-clock per task", () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start({
      providers: defaultProviders,
      pricing: { asOf: "2026-01-15", useDefaults: false, models: { "alpha-large": { input: 1000, output: 1000 } } },
    });
  });
  afterAll(async () => lab.stop());

  async function until<T>(what: string, probe: () => T | null | undefined | false, timeoutMs = 15_000): Promise<T> {
    const value = await lab.host.waiter.waitFor(() => probe() || null, { timeoutMs });
    if (value === null) throw new Error(`timed out waiting for ${what}`);
    return value as T;
  }

  const finalized = (taskId: string) =>
    until(`task ${taskId} to publish`, () =>
      lab.host.store.get("delegatedTask", taskId)?.finalizedAt ? lab.host.store.get("delegatedTask", taskId) : null,
    );
  const childTaskOf = (threadId: string) => lab.host.store.select("delegatedTask", "parent_thread_id = ?", [threadId]);

  it("refuses a child budget wider than what is left of its parent's, naming the budget in details; lists the budgets in force", async () => {
    const root = await lab.liveAgent({ instance: "alpha" });
    const task = await mustCall<DelegateTaskResult>(root.client, "delegate_task", {
      task: "@@usage in=300 out=100 @@gate budget-parent-live @@reply parent done",
      title: "budgeted parent",
      budget: { tokens: 1000, costUsd: 5 },
      clientRequestId: "budgeted-parent",
    });
    expect(task.budget).toMatchObject({
      scope: "delegated_task",
      limits: { tokens: 1000, costUsd: 5, wallClockMs: null },
      remaining: { tokens: 1000 },
      origin: "delegate_task",
      exceeded: null,
    });
    await lab.waitForLiveTurn(task.childThreadId);
    const agent = await lab.agent(task.childThreadId);
    const capabilities = await mustCall<{
      budgets: { covering: BudgetView[]; rootThread: unknown; perTaskBudget: boolean };
    }>(agent, "orchestrator_capabilities", {});
    expect(capabilities.budgets).toMatchObject({
      perTaskBudget: true,
      rootThread: { tokens: null, costUsd: null, wallClockMs: null },
    });
    expect(capabilities.budgets.covering).toEqual([
      expect.objectContaining({
        budgetId: `budget:task:${task.taskId}`,
        limits: { tokens: 1000, costUsd: 5, wallClockMs: null },
      }),
    ]);

    const tooWide = await callTool(agent, "delegate_task", { task: "@@reply never", budget: { tokens: 2000 } });
    expect(tooWide).toMatchObject({
      ok: false,
      code: "invalid_request",
      details: { budget: "tokens", scope: "delegated_task", requested: 2000, remaining: 1000, limit: 1000 },
    });
    expect(tooWide.ok ? "" : tooWide.message).toContain("at most 1000");
    const fits = await mustCall<DelegateTaskResult>(agent, "delegate_task", {
      task: "@@reply small child",
      budget: { tokens: 400, wallClockMs: 60_000 },
      mode: "wait",
    });
    expect(fits.budget).toMatchObject({ limits: { tokens: 400, costUsd: null, wallClockMs: 60_000 } });
    lab.release("budget-parent-live");
    root.release();
  });

  it("a token budget stops the tree when a turn inside it reaches the limit: running turns interrupted, partial results, the reason, no new children, sessions closed", async () => {
    const root = await lab.liveAgent({ instance: "alpha" });
    // The child delegates a grandchild that reports 1500 tokens, then waits on a gate that never
    // opens: the grandchild's turn end reaches the child's 1000-token budget.
    const grandchild = { task: "@@usage in=1200 out=300 @@reply grandchild spent it", title: "spender", mode: "async" };
    const child = await mustCall<DelegateTaskResult>(root.client, "delegate_task", {
      task: `@@usage in=10 out=5 @@tool delegate_task ${JSON.stringify(grandchild)} @@gate token-budget-never @@reply child never gets here`,
      title: "token-budgeted",
      budget: { tokens: 1000 },
      mode: "wait",
      clientRequestId: "token-budget",
    });
    expect(child).toMatchObject({ status: "interrupted", workState: "result_available" });
    expect(child.budgetStop).toMatchObject({
      budgetId: `budget:task:${child.taskId}`,
      scope: "delegated_task",
      limit: "tokens",
      used: 1500,
      allowed: 1000,
      taskId: child.taskId,
    });
    expect(child.summary).toContain("interrupted");
    const childRun = lab.host.store.get("run", child.childRunId!)!;
    expect(childRun).toMatchObject({ status: "interrupted", terminalReason: "budget_exceeded:tokens" });
    // The interrupted turn still reported what it used: the tree's total is the sum.
    expect(child.usage!.subtree).toMatchObject({ status: "reported", tokens: { total: 1515 } });
    expect(child.budget).toMatchObject({
      exceeded: { limit: "tokens", used: 1500, allowed: 1000 },
      remaining: { tokens: 0 },
    });
    const [spender] = childTaskOf(child.childThreadId);
    expect(spender).toMatchObject({ status: "completed", summary: "grandchild spent it" });

    // No new children in that tree: a later turn of the grandchild thread (an explicit send) may
    // run, but its delegate_task is refused.
    const send = await lab.host.threads.send({
      threadId: spender!.childThreadId,
      text: `@@tool delegate_task {"task":"@@reply great-grandchild"}`,
      mode: "auto",
      createdBy: "user",
      creationSource: "cli",
    });
    const later = await lab.host.threads.waitForRun({
      threadId: spender!.childThreadId,
      runId: send.runId,
      timeoutMs: 10_000,
    });
    expect(later.run!.summary).toContain("invalid_request");
    expect(later.run!.summary).toContain("budget");
    expect(childTaskOf(spender!.childThreadId)).toHaveLength(0);

    // The stopped threads' provider sessions are closed: no harness stays behind.
    const session = await until(
      "the stopped child's session to close",
      () => lab.host.store.select("providerSession", "thread_id = ? AND status = 'closed'", [child.childThreadId])[0],
    );
    expect(session.closeReason).toBe("stopped");
    expect(lab.host.sessions.get(child.childThreadId)).toBeNull();
    root.release();
  });

  it("a cost budget counts estimated cost from the price table (and the wake says why the result is partial)", async () => {
    const root = await lab.liveAgent({ instance: "alpha" });
    // alpha-large costs $1000 per million tokens here: 800 + 400 tokens = $1.20, over $1.
    const grandchild = {
      task: "@@usage in=800 out=400 @@reply costly",
      title: "costly",
      mode: "async",
      target: { providerInstanceId: "alpha", model: "alpha-large" },
    };
    const child = await mustCall<DelegateTaskResult>(root.client, "delegate_task", {
      task: `@@tool delegate_task ${JSON.stringify(grandchild)} @@gate cost-budget-never @@reply never`,
      title: "cost-budgeted",
      budget: { costUsd: 1 },
      mode: "async",
      clientRequestId: "cost-budget",
    });
    root.release();
    const task = await finalized(child.taskId);
    expect(task).toMatchObject({ status: "interrupted", cancelReason: "budget_exceeded:costUsd" });
    const view = await lab.host.usage.task(child.taskId);
    expect(view.subtree.cost).toMatchObject({ basis: "partial", unpricedTurns: 1 });
    expect(view.subtree.cost.estimatedUsd).toBeCloseTo(1.2, 10);
    const status = await mustCall<DelegateTaskResult>(root.client, "task_status", { taskId: child.taskId });
    expect(status.budgetStop).toMatchObject({ limit: "costUsd", allowed: 1 });
    expect(status.budgetStop!.used).toBeCloseTo(1.2, 10);
    // The parent was idle, so the result woke it, saying the result is partial and why.
    const wake = await until("the result wake", () =>
      lab.host.store
        .select("run", "thread_id = ?", [root.threadId])
        .find((run) => run.deliversResultOf === child.taskId),
    );
    expect(wake.text).toContain("stopped: budget_exceeded:costUsd; the result is partial");
  });

  it("a wall-clock budget stops the tree on its timer", async () => {
    const root = await lab.liveAgent({ instance: "alpha" });
    const child = await mustCall<DelegateTaskResult>(root.client, "delegate_task", {
      task: "@@usage in=5 out=5 @@gate wall-clock-never @@reply never",
      title: "slow",
      budget: { wallClockMs: 1000 },
      mode: "wait",
      clientRequestId: "wall-clock-budget",
    });
    expect(child).toMatchObject({
      status: "interrupted",
      budgetStop: { limit: "wallClockMs", allowed: 1000, scope: "delegated_task" },
    });
    expect(child.budgetStop!.used).toBeGreaterThanOrEqual(1000);
    expect(lab.host.store.get("run", child.childRunId!)!.terminalReason).toBe("budget_exceeded:wallClockMs");
    root.release();
  });
});

describe("tree budgets: a root thread's budget from the config", () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start({
      providers: defaultProviders,
      budgets: { rootThread: { tokens: 500 }, delegatedTask: { wallClockMs: 600_000 } },
    });
  });
  afterAll(async () => lab.stop());

  it("applies the config's default task budget, stops the whole tree and the root's turn at the root's limit, and refuses new children after", async () => {
    const root = await lab.liveAgent({ instance: "alpha" });
    const caps = await mustCall<{ budgets: { rootThread: unknown; delegatedTask: unknown; covering: BudgetView[] } }>(
      root.client,
      "orchestrator_capabilities",
      {},
    );
    expect(caps.budgets).toMatchObject({
      rootThread: { tokens: 500, costUsd: null, wallClockMs: null },
      delegatedTask: { wallClockMs: 600_000 },
    });
    expect(caps.budgets.covering).toEqual([
      expect.objectContaining({
        scope: "root_thread",
        budgetId: `budget:root:${root.threadId}`,
        remaining: { tokens: 500, costUsd: null, wallClockMs: null },
      }),
    ]);

    const slow = await mustCall<DelegateTaskResult>(root.client, "delegate_task", {
      task: "@@gate root-budget-never @@reply never",
      title: "slow sibling",
      clientRequestId: "slow",
    });
    expect(slow.budget).toMatchObject({ limits: { wallClockMs: 600_000, tokens: null }, origin: "config" });
    const spender = await mustCall<DelegateTaskResult>(root.client, "delegate_task", {
      task: "@@usage in=400 out=200 @@reply spent",
      title: "spender",
      clientRequestId: "spender",
    });
    const stopped = await (async () => {
      const value = await lab.host.waiter.waitFor(
        () =>
          lab.host.store.get("delegatedTask", slow.taskId)?.finalizedAt
            ? lab.host.store.get("delegatedTask", slow.taskId)
            : null,
        { timeoutMs: 15_000 },
      );
      if (value === null) throw new Error("the sibling was not stopped");
      return value;
    })();
    expect(stopped).toMatchObject({ status: "interrupted", cancelReason: "budget_exceeded:tokens" });
    expect(lab.host.store.get("delegatedTask", spender.taskId)).toMatchObject({ status: "completed" });
    // The root's own turn was interrupted too.
    const rootRun = await lab.host.threads.waitForRun({ threadId: root.threadId, timeoutMs: 10_000 });
    expect(rootRun.run).toMatchObject({ status: "interrupted", terminalReason: "budget_exceeded:tokens" });
    const status = await mustCall<DelegateTaskResult>(root.client, "task_status", { taskId: slow.taskId });
    expect(status.budgetStop).toMatchObject({
      scope: "root_thread",
      limit: "tokens",
      used: 600,
      allowed: 500,
      taskId: null,
    });

    // A new turn of the root may run, but its tree gets no new child.
    const again = await lab.liveAgentOn(root.threadId);
    const refused = await callTool(again.client, "delegate_task", { task: "@@reply no" });
    expect(refused).toMatchObject({
      ok: false,
      code: "invalid_request",
      details: { budget: "tokens", scope: "root_thread", used: 600, limit: 500, remaining: 0 },
    });
    again.release();
  });
});
