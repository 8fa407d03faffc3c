import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpLab, defaultProviders } from "../support/mcp-lab.js";
import { callTool, mustCall } from "../support/mcp-client.js";
import type { DelegateTaskResult } from "../../src/services/delegation/task-view.js";
import type { BudgetView } from "../../src/services/usage/usage-service.js";

type Shell = { threadId: string };
type Created = { threads: { index: number; runId: string | null; notes: string[]; thread: Shell }[] };
type Launched = { thread: Shell; runId: string; notes: string[] };
type Capabilities = { budgets: { covering: BudgetView[] } };

const PROFILES = [
  { name: "tight", description: "A small token budget", budget: { tokens: 500 } },
  {
    name: "costly",
    description: "A small dollar budget on a priced model",
    target: { providerInstanceId: "alpha", model: "alpha-large" },
    budget: { costUsd: 1 },
  },
  { name: "timed", description: "A short wall clock", budget: { wallClockMs: 1000 } },
  { name: "plain", description: "No budget at all" },
];

/**
 * A profile's budget on a top-level thread (create_threads, t3_thread_launch): kept on the
 * thread's record and applied as the root thread's budget, the tighter of it and the config's
 * `budgets.rootThread`; through the real MCP endpoint, engine and SQLite with scripted
 * providers reporting known usage.
 */
describe("a profile's budget on a top-level thread", () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start({
      providers: defaultProviders,
      profiles: PROFILES,
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

  it("create_threads: a token budget covers the new root's tree, stops it when reached, and refuses new children after", async () => {
    const parent = await lab.liveAgent({ instance: "alpha" });
    const created = await mustCall<Created>(parent.client, "create_threads", {
      threads: [{ prompt: "@@gate profile-root-tokens @@reply root done", profile: "tight" }],
    });
    const rootId = created.threads[0]!.thread.threadId;
    expect(created.threads[0]!.notes.join(" ")).not.toContain("budget");
    expect(lab.host.store.get("thread", rootId)!.profileBudget).toEqual({
      tokens: 500,
      costUsd: null,
      wallClockMs: null,
    });
    // Its budget record is written with the thread: the wall-clock timer finds root clocks by it.
    expect(lab.host.store.get("budget", `budget:root:${rootId}`)).toMatchObject({
      scope: "root_thread",
      limits: { tokens: 500, costUsd: null, wallClockMs: null },
      origin: "profile",
      exceeded: null,
    });
    await lab.waitForLiveTurn(rootId);
    const root = await lab.agent(rootId);
    const caps = await mustCall<Capabilities>(root, "orchestrator_capabilities", {});
    expect(caps.budgets.covering).toEqual([
      expect.objectContaining({
        scope: "root_thread",
        budgetId: `budget:root:${rootId}`,
        limits: { tokens: 500, costUsd: null, wallClockMs: null },
        origin: "profile",
      }),
    ]);

    const slow = await mustCall<DelegateTaskResult>(root, "delegate_task", {
      task: "@@gate profile-root-never @@reply never",
      title: "slow sibling",
    });
    await mustCall<DelegateTaskResult>(root, "delegate_task", {
      task: "@@usage in=400 out=200 @@reply spent",
      title: "spender",
    });
    expect(await finalized(slow.taskId)).toMatchObject({
      status: "interrupted",
      cancelReason: "budget_exceeded:tokens",
    });
    const rootRun = await lab.host.threads.waitForRun({ threadId: rootId, timeoutMs: 10_000 });
    expect(rootRun.run).toMatchObject({ status: "interrupted", terminalReason: "budget_exceeded:tokens" });
    const status = await mustCall<DelegateTaskResult>(root, "task_status", { taskId: slow.taskId });
    expect(status.budgetStop).toMatchObject({ scope: "root_thread", limit: "tokens", used: 600, allowed: 500 });
    expect(lab.host.store.get("budget", `budget:root:${rootId}`)).toMatchObject({ origin: "profile" });

    const again = await lab.liveAgentOn(rootId);
    const refused = await callTool(again.client, "delegate_task", { task: "@@reply no" });
    expect(refused).toMatchObject({
      ok: false,
      code: "invalid_request",
      details: { budget: "tokens", scope: "root_thread", limit: 500, remaining: 0 },
    });
    expect(refused.ok ? "" : refused.message).toContain("its profile's budget");
    again.release();
    parent.release();
  });

  it("t3_thread_launch: a cost budget counts the root's own turns and refuses delegation once reached", async () => {
    const parent = await lab.liveAgent({ instance: "alpha" });
    // alpha-large costs $1000 per million tokens here: 800 + 400 tokens = $1.20, over $1.
    const launched = await mustCall<Launched>(parent.client, "t3_thread_launch", {
      message: "@@usage in=800 out=400 @@reply spent it",
      profile: "costly",
    });
    const rootId = launched.thread.threadId;
    expect(launched.notes.join(" ")).not.toContain("budget");
    const first = await lab.host.threads.waitForRun({ threadId: rootId, runId: launched.runId, timeoutMs: 10_000 });
    expect(first.run).toMatchObject({ status: "completed" });
    const stopped = await until(
      "the root budget to be reached",
      () => lab.host.store.get("budget", `budget:root:${rootId}`)?.exceeded ?? null,
    );
    expect(stopped).toMatchObject({ limit: "costUsd", allowed: 1 });

    const again = await lab.liveAgentOn(rootId);
    const refused = await callTool(again.client, "delegate_task", { task: "@@reply no" });
    expect(refused).toMatchObject({
      ok: false,
      code: "invalid_request",
      details: { budget: "costUsd", scope: "root_thread", limit: 1, remaining: 0 },
    });
    again.release();
    parent.release();
  });

  it("a wall-clock budget is enforced on its timer while the root's tree has delegated work", async () => {
    const parent = await lab.liveAgent({ instance: "alpha" });
    const created = await mustCall<Created>(parent.client, "create_threads", {
      threads: [{ prompt: "@@gate profile-root-wall @@reply root done", profile: "timed" }],
    });
    const rootId = created.threads[0]!.thread.threadId;
    await lab.waitForLiveTurn(rootId);
    const root = await lab.agent(rootId);
    const slow = await mustCall<DelegateTaskResult>(root, "delegate_task", {
      task: "@@gate profile-root-wall-never @@reply never",
      title: "slow",
    });
    expect(await finalized(slow.taskId)).toMatchObject({
      status: "interrupted",
      cancelReason: "budget_exceeded:wallClockMs",
    });
    const status = await mustCall<DelegateTaskResult>(root, "task_status", { taskId: slow.taskId });
    expect(status.budgetStop).toMatchObject({ scope: "root_thread", limit: "wallClockMs", allowed: 1000 });
    parent.release();
  });

  it("a profile without a budget changes nothing: no root budget without the config's", async () => {
    const parent = await lab.liveAgent({ instance: "alpha" });
    const created = await mustCall<Created>(parent.client, "create_threads", {
      threads: [{ prompt: "@@gate profile-root-plain @@reply root done", profile: "plain" }],
    });
    const rootId = created.threads[0]!.thread.threadId;
    expect(lab.host.store.get("thread", rootId)).toMatchObject({ profile: { name: "plain" } });
    expect(lab.host.store.get("thread", rootId)!.profileBudget).toBeUndefined();
    expect(lab.host.store.get("budget", `budget:root:${rootId}`)).toBeNull();
    await lab.waitForLiveTurn(rootId);
    const caps = await mustCall<Capabilities>(await lab.agent(rootId), "orchestrator_capabilities", {});
    expect(caps.budgets.covering).toEqual([]);
    lab.release("profile-root-plain");
    parent.release();
  });
});

describe("a profile's budget beside the config's budgets.rootThread", () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start({
      providers: defaultProviders,
      profiles: PROFILES,
      budgets: { rootThread: { tokens: 300 } },
    });
  });
  afterAll(async () => lab.stop());

  const coveringOf = async (rootId: string) => {
    await lab.waitForLiveTurn(rootId);
    return (await mustCall<Capabilities>(await lab.agent(rootId), "orchestrator_capabilities", {})).budgets.covering;
  };

  it("the tighter limit wins, limit by limit; a profile without a budget leaves the config's", async () => {
    const parent = await lab.liveAgent({ instance: "alpha" });
    const created = await mustCall<Created>(parent.client, "create_threads", {
      threads: [
        { prompt: "@@gate profile-config-tight @@reply done", profile: "tight" },
        { prompt: "@@gate profile-config-timed @@reply done", profile: "timed" },
        { prompt: "@@gate profile-config-plain @@reply done", profile: "plain" },
      ],
    });
    const [tight, timed, plain] = created.threads.map((entry) => entry.thread.threadId) as [string, string, string];
    // The config's 300 tokens are tighter than the profile's 500.
    expect(await coveringOf(tight)).toEqual([
      expect.objectContaining({
        scope: "root_thread",
        limits: { tokens: 300, costUsd: null, wallClockMs: null },
        origin: "profile_and_config",
      }),
    ]);
    // Each sets a limit the other leaves open: both apply.
    expect(await coveringOf(timed)).toEqual([
      expect.objectContaining({
        limits: { tokens: 300, costUsd: null, wallClockMs: 1000 },
        origin: "profile_and_config",
      }),
    ]);
    expect(await coveringOf(plain)).toEqual([
      expect.objectContaining({ limits: { tokens: 300, costUsd: null, wallClockMs: null }, origin: "config" }),
    ]);
    for (const gate of ["profile-config-tight", "profile-config-timed", "profile-config-plain"]) lab.release(gate);
    parent.release();
  });
});
