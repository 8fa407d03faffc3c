import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createClaudeHome,
  createCodexHome,
  createPiHome,
  ScriptedModelServer,
  type ClaudeHome,
  type CodexHome,
  type PiHome,
  type RecordedRequest,
} from "@switchyard/testkit";
import {
  createSilentLogger,
  McpSessionRegistry,
  startServer,
  SwitchyardHost,
  TOKENS,
  type RunningServer,
} from "../../src/index.js";
import type { DelegateTaskResult } from "../../src/services/delegation/task-view.js";
import type { TreeUsage } from "../../src/services/usage/usage-service.js";
import { ApiClient, ok } from "../support/api-client.js";
import { JumpClock } from "../support/jump-clock.js";
import { connectMcp, mustCall } from "../support/mcp-client.js";
import { sqliteStore } from "../support/sqlite-store.js";

// Usage and budgets through real harnesses: a Codex root (app-server; codex-exec for its own
// test), Pi children and Claude grandchildren (the Agent SDK's bundled claude), each in an
// isolated home, all driven by one
// scripted model server that reports known token counts (`@@usage`), delegating through the
// real MCP endpoint. The figures each harness reports go through its plugin's usage mapping,
// into the host's turn records, roll-ups and budgets.
const CODEX_PLUGIN = fileURLToPath(new URL("../../../plugins/codex", import.meta.url));
const PI_PLUGIN = fileURLToPath(new URL("../../../plugins/pi", import.meta.url));
const CLAUDE_PLUGIN = fileURLToPath(new URL("../../../plugins/claude", import.meta.url));

/** Alive and not a zombie (this machine's init reaps orphans slowly). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** A request's tokens in the spec's terms: input, cache reads and writes, output (reasoning is inside output). */
function requestTotal(request: RecordedRequest): number {
  const usage = request.usage!;
  return usage.inputTokens + usage.cachedInputTokens + usage.cacheWriteInputTokens + usage.outputTokens;
}

describe("usage and budgets through real Codex (app-server and exec), Pi and Claude harnesses", async () => {
  let server: ScriptedModelServer;
  let codexHome: CodexHome;
  let piHome: PiHome;
  let claudeHome: ClaudeHome;
  let host: SwitchyardHost;
  let http: RunningServer;
  let client: Client;
  let api: ApiClient;
  let projectId: string;
  const clock = new JumpClock();
  const dirs: string[] = [];

  beforeAll(async () => {
    // Requests nobody scripted report a small, known figure, so a request the tree makes that
    // no test expected still shows in the sums.
    server = await ScriptedModelServer.start({ usage: { inputTokens: 1, outputTokens: 1 } });
    codexHome = await createCodexHome({ modelServerUrl: server.url });
    piHome = await createPiHome({ modelServerUrl: server.url });
    claudeHome = await createClaudeHome({ modelServerUrl: server.url, model: "claude-fake" });
    const home = mkdtempSync(join(tmpdir(), "switchyard-usage-real-"));
    const workspace = mkdtempSync(join(tmpdir(), "switchyard-usage-real-ws-"));
    dirs.push(home, workspace);
    host = await SwitchyardHost.create({
      home,
      builtinPluginsDir: null,
      logger: createSilentLogger(),
      config: {
        plugins: [CODEX_PLUGIN, PI_PLUGIN, CLAUDE_PLUGIN],
        providers: [
          { id: "codex", driver: "codex", homePath: codexHome.home, environment: codexHome.env },
          { id: "codex-exec", driver: "codex-exec", homePath: codexHome.home, environment: codexHome.env },
          { id: "pi", driver: "pi", homePath: piHome.home, environment: piHome.env },
          { id: "claude", driver: "claude", homePath: claudeHome.home, environment: claudeHome.env },
        ],
        // fake-model (Codex's and Pi's) costs $1000 per million tokens: a price-table model.
        pricing: {
          asOf: "2026-12-01",
          useDefaults: false,
          models: { "fake-model": { input: 1000, cacheRead: 100, output: 1000 } },
        },
      },
      overrides: (c) => c.register(TOKENS.Clock, { useValue: clock }),
    });
    http = await startServer(host, { port: 0 });
    projectId = (await host.projects.add(workspace, "workspace")).id;
    const token = host.container
      .resolve(McpSessionRegistry)
      .issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:read", "orchestration:operate"] }).token;
    client = await connectMcp(http.mcpUrl, token);
    api = new ApiClient(`${http.url}/api/v1`, token);
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await http?.close();
    await host?.stop();
    await claudeHome?.cleanup();
    await codexHome?.cleanup();
    await piHome?.cleanup();
    await server?.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const rootThread = async (prompt: string) =>
    (
      await host.threads.createThread({
        projectId,
        providerInstanceId: "codex",
        prompt,
        runtimeMode: "full-access",
        createdBy: "user",
        creationSource: "cli",
      })
    ).thread.id;
  const waitForRun = async (threadId: string) => {
    const result = await host.threads.waitForRun({ threadId, timeoutMs: 150_000 });
    if (result.run === null || result.timedOut)
      throw new Error(`thread ${threadId}'s run did not end (${result.run?.status})`);
    return result.run;
  };
  const tasksUnder = (threadId: string) => host.store.select("delegatedTask", "parent_thread_id = ?", [threadId]);

  /** Harness processes the host runs now (pid and label), oldest first, from its process table. */
  const harnessProcesses = () =>
    sqliteStore(host.store).statement("SELECT pid, label FROM harness_processes ORDER BY started_at, rowid").all() as {
      pid: number;
      label: string;
    }[];

  /** Waits (bounded) until none of these processes runs any more; returns those still running. */
  async function untilGone(pids: readonly number[]): Promise<number[]> {
    for (let i = 0; i < 300 && pids.some(running); i += 1) await new Promise((resolve) => setTimeout(resolve, 100));
    return pids.filter(running);
  }

  /** The requests a set of threads made: matched by the task prompt each of them got as its user text. */
  const requestsOf = (prompts: readonly string[]) =>
    server.requests.filter((request) => prompts.some((prompt) => (request.userText ?? "").startsWith(prompt)));

  /** The tokens the model server reported in the answers it finished (an aborted answer never reached its harness). */
  const reportedTotal = (requests: readonly RecordedRequest[]) =>
    requests.filter((request) => request.completed).reduce((sum, request) => sum + requestTotal(request), 0);

  /**
   * A tree below a Codex root, once its turns are live: the harness processes that started for
   * it (the root's Codex app-server, which starts first, excluded: the root is not stopped).
   */
  function processesBelowRoot(before: ReadonlySet<number>): { pid: number; label: string }[] {
    const started = harnessProcesses().filter((entry) => !before.has(entry.pid));
    expect(started[0]?.label).toBe("codex app-server");
    return started.slice(1);
  }

  /**
   * What a stop must leave: no harness process of the stopped tree running, and no model request
   * from it after. The gates its held requests wait on open (a harness still alive would get
   * its answer and go on), then a new root turn runs to its end through the same model server:
   * a request the stopped tree still made would have been recorded by then.
   */
  async function expectStopped(
    processes: readonly { pid: number }[],
    prompts: readonly string[],
    gates: readonly string[],
  ): Promise<void> {
    expect(await untilGone(processes.map((entry) => entry.pid))).toEqual([]);
    const requestsAtStop = requestsOf(prompts).length;
    for (const gate of gates) server.release(gate);
    const sync = await waitForRun(await rootThread("sync turn @@usage in=1 out=1 @@reply synced"));
    expect(sync.status).toBe("completed");
    expect(requestsOf(prompts).length).toBe(requestsAtStop);
  }

  /** The Codex root's request that carried the delegate_task result back. */
  const resultRequestOf = (rootPrompt: string) =>
    server.requests.find(
      (request) => (request.userText ?? "").startsWith(rootPrompt) && request.toolResult !== undefined,
    );

  it("a three-level tree's roll-up (Codex root, Pi child, Claude grandchild) equals the sum of the counts the model reported to its runs, on task_status, t3_thread_read and GET /usage", async () => {
    const firstSeq = server.requests.length;
    const grandchild = {
      task: "claude works @@usage in=300 cached=50 cache-write=25 out=30 @@shell echo claude-shell @@then @@usage in=700 cached=300 cache-write=5 out=15 @@reply claude did it",
      target: { providerInstanceId: "claude" },
      mode: "wait",
      clientRequestId: "rollup-grandchild",
    };
    const child = {
      task: `pi works @@usage in=400 cached=100 out=40 @@tool delegate_task ${JSON.stringify(grandchild)} @@then @@usage in=600 out=20 @@reply pi relays the grandchild`,
      target: { providerInstanceId: "pi" },
      mode: "wait",
      clientRequestId: "rollup-child",
    };
    const root = await rootThread(
      `codex works @@usage in=1000 cached=200 out=50 reasoning=10 @@tool delegate_task ${JSON.stringify(child)} @@then @@usage in=1300 cached=1000 out=30 @@reply codex relays the child`,
    );
    const run = await waitForRun(root);
    expect(run.status, JSON.stringify(run.error)).toBe("completed");
    const [childTask] = tasksUnder(root);
    expect(childTask).toMatchObject({
      providerInstanceId: "pi",
      status: "completed",
      summary: "pi relays the grandchild",
    });
    const [grandchildTask] = tasksUnder(childTask!.childThreadId);
    expect(grandchildTask).toMatchObject({
      providerInstanceId: "claude",
      status: "completed",
      summary: "claude did it",
    });

    // Six model requests, each answered in full with its scripted counts: Codex 2, Pi 2, Claude 2 (a shell call, then the reply).
    const requests = server.requests.slice(firstSeq);
    expect(requests.map((request) => [request.api, request.completed])).toEqual([
      ["openai-responses", true],
      ["openai-chat-completions", true],
      ["anthropic-messages", true],
      ["anthropic-messages", true],
      ["openai-chat-completions", true],
      ["openai-responses", true],
    ]);
    // Codex: (1000 + 200 + 50) + (1300 + 1000 + 30); Pi: (400 + 100 + 40) + (600 + 20);
    // Claude: (300 + 50 + 25 + 30) + (700 + 300 + 5 + 15).
    const codexTotal = 1250 + 2330;
    const piTotal = 540 + 620;
    const claudeTotal = 405 + 1020;
    expect(reportedTotal(requests)).toBe(codexTotal + piTotal + claudeTotal);

    // Each harness's report, mapped: cached input is not input, reasoning is inside output,
    // every model request of a turn counted once.
    expect((await host.usage.thread(root)).own).toMatchObject({
      status: "reported",
      turns: { ended: 1, reported: 1 },
      tokens: { input: 2300, cacheRead: 1200, cacheWrite: 0, output: 80, reasoning: 10, total: codexTotal },
    });
    expect((await host.usage.thread(childTask!.childThreadId)).own).toMatchObject({
      status: "reported",
      tokens: { input: 1000, cacheRead: 100, cacheWrite: 0, output: 60, total: piTotal },
    });
    expect((await host.usage.thread(grandchildTask!.childThreadId)).own).toMatchObject({
      status: "reported",
      tokens: { input: 1000, cacheRead: 350, cacheWrite: 30, output: 45, total: claudeTotal },
    });

    // The roll-up, as each surface shows it.
    const status = await mustCall<DelegateTaskResult>(client, "task_status", { taskId: childTask!.id });
    expect(status.usage!.own.tokens!.total).toBe(piTotal);
    expect(status.usage!.subtree).toMatchObject({
      status: "reported",
      turns: { ended: 2, reported: 2, unknown: 0, inFlight: 0 },
      tokens: { total: piTotal + claudeTotal },
    });
    const read = await mustCall<{ usage: TreeUsage }>(client, "t3_thread_read", { threadId: root });
    expect(read.usage.own.tokens!.total).toBe(codexTotal);
    expect(read.usage.subtree).toMatchObject({
      status: "reported",
      turns: { ended: 3, reported: 3, unknown: 0 },
      tokens: { input: 4300, cacheRead: 1650, cacheWrite: 30, output: 185, reasoning: 10 },
    });
    expect(read.usage.subtree.tokens!.total).toBe(reportedTotal(requests));
    const summary = await ok(api.get("/usage", { threadId: root }));
    expect(summary).toMatchObject({
      scope: "thread",
      threadId: root,
      own: { tokens: { total: codexTotal } },
      subtree: { tokens: { total: codexTotal + piTotal + claudeTotal } },
    });

    // Cost: Claude reports its own; Codex's and Pi's fake-model is priced by the table
    // ($1000 per million input and output tokens, $100 per million cached): Codex
    // (2300 + 80) x 1000 + 1200 x 100 = $2.50, Pi (1000 + 60) x 1000 + 100 x 100 = $1.07.
    expect(read.usage.own.cost).toMatchObject({ basis: "estimated", usd: 2.5 });
    expect(status.usage!.own.cost).toMatchObject({ basis: "estimated", usd: 1.07 });
    const claudeCost = (await host.usage.thread(grandchildTask!.childThreadId)).own.cost;
    expect(claudeCost.basis).toBe("reported");
    expect(read.usage.subtree.cost).toMatchObject({
      basis: "estimated",
      estimatedUsd: 3.57,
      reportedUsd: claudeCost.usd,
    });
  }, 200_000);

  it("a second turn in the same live session (Codex app-server, Pi, Claude) counts only its own requests", async () => {
    const twoTurns = async (instance: string) => {
      const threadId = (
        await host.threads.createThread({
          projectId,
          providerInstanceId: instance,
          prompt: `${instance} turn one @@usage in=100 cached=20 out=10 @@reply one`,
          runtimeMode: "full-access",
          createdBy: "user",
          creationSource: "cli",
        })
      ).thread.id;
      expect((await waitForRun(threadId)).status).toBe("completed");
      const session = host.store.select("providerSession", "thread_id = ?", [threadId])[0]!.id;
      const next = await host.threads.send({
        threadId,
        text: `${instance} turn two @@usage in=300 cached=60 out=30 @@reply two`,
        mode: "auto",
        createdBy: "user",
        creationSource: "cli",
      });
      expect((await host.threads.waitForRun({ threadId, runId: next.runId, timeoutMs: 150_000 })).run?.status).toBe(
        "completed",
      );
      expect(host.store.select("providerSession", "thread_id = ?", [threadId]).map((row) => row.id)).toEqual([session]);
      const records = host.store.select(
        "turnUsage",
        "thread_id = ?",
        [threadId],
        "ORDER BY json_extract(data, '$.createdAt')",
      );
      return records.map((record) => [record.inputTokens, record.cacheReadInputTokens, record.outputTokens]);
    };
    for (const instance of ["codex", "pi", "claude"]) {
      expect(await twoTurns(instance), instance).toEqual([
        [100, 20, 10],
        [300, 60, 30],
      ]);
    }
  }, 240_000);

  it("codex-exec (one codex exec per turn): each turn's usage is its own, not the resumed thread's running total, also after its session reopens", async () => {
    const exec = (text: string) =>
      host.threads.send({ threadId, text, mode: "auto", createdBy: "user", creationSource: "cli" });
    const threadId = (
      await host.threads.createThread({
        projectId,
        providerInstanceId: "codex-exec",
        prompt: "exec first @@usage in=100 cached=40 out=10 @@reply first",
        runtimeMode: "full-access",
        createdBy: "user",
        creationSource: "cli",
      })
    ).thread.id;
    expect((await waitForRun(threadId)).status).toBe("completed");
    const second = await exec("exec second @@usage in=200 out=20 @@reply second");
    expect((await host.threads.waitForRun({ threadId, runId: second.runId, timeoutMs: 150_000 })).run?.status).toBe(
      "completed",
    );
    // The session closes (as an idle or stopped one does): the next turn opens a new one on the Codex thread.
    await host.sessions.close(threadId, "idle");
    const sessionsBefore = host.store.count("providerSession", "thread_id = ?", [threadId]);
    const third = await exec("exec third @@usage in=300 cached=100 out=30 @@reply third");
    expect((await host.threads.waitForRun({ threadId, runId: third.runId, timeoutMs: 150_000 })).run?.status).toBe(
      "completed",
    );
    expect(host.store.count("providerSession", "thread_id = ?", [threadId])).toBe(sessionsBefore + 1);
    const records = host.store.select(
      "turnUsage",
      "thread_id = ?",
      [threadId],
      "ORDER BY json_extract(data, '$.createdAt')",
    );
    expect(
      records.map((record) => [
        record.inputTokens,
        record.cacheReadInputTokens,
        record.outputTokens,
        record.totalTokens,
      ]),
    ).toEqual([
      [100, 40, 10, 150],
      [200, 0, 20, 220],
      [300, 100, 30, 430],
    ]);
    expect((await host.usage.thread(threadId)).own.tokens!.total).toBe(reportedTotal(requestsOf(["exec "])));
  }, 200_000);

  it("a token budget stops a Pi child's tree at its limit: running turns interrupted, the Codex parent gets the partial result, no model request follows, no harness of it remains", async () => {
    const before = new Set(harnessProcesses().map((entry) => entry.pid));
    const [rootPrompt, childPrompt, holderPrompt, spenderPrompt] = [
      "codex budgets tokens",
      "pi spends",
      "claude holds",
      "claude spends",
    ];
    const holder = {
      task: `${holderPrompt} @@hold token-holder @@reply never`,
      title: "holder",
      target: { providerInstanceId: "claude" },
      mode: "async",
    };
    const spender = {
      task: `${spenderPrompt} @@hold token-spend @@usage in=3000 out=100 @@reply spent`,
      title: "spender",
      target: { providerInstanceId: "claude" },
      mode: "wait",
    };
    const child = {
      task: `${childPrompt} @@usage in=10 out=5 @@tool delegate_task ${JSON.stringify(holder)} @@then @@usage in=20 out=5 @@tool delegate_task ${JSON.stringify(spender)} @@then @@reply pi never gets here`,
      title: "token-budgeted",
      target: { providerInstanceId: "pi" },
      mode: "wait",
      budget: { tokens: 2000 },
      clientRequestId: "token-budget",
    };
    const root = await rootThread(
      `${rootPrompt} @@tool delegate_task ${JSON.stringify(child)} @@then @@reply codex has the partial result`,
    );
    // Every level live: the holder's request and the spender's wait on their gates, Pi waits on
    // the spender. Then the spender answers with 3100 tokens: its turn's end reaches the budget.
    await server.waitForHold("token-holder", 120_000);
    await server.waitForHold("token-spend", 120_000);
    const tree = processesBelowRoot(before);
    expect(tree.map((entry) => entry.label).sort()).toEqual(["claude", "claude", "pi rpc"]);
    server.release("token-spend");

    const run = await waitForRun(root);
    expect(run.status, JSON.stringify(run.error)).toBe("completed");
    const [childTask] = tasksUnder(root);
    const status = await mustCall<DelegateTaskResult>(client, "task_status", { taskId: childTask!.id });
    expect(status).toMatchObject({ status: "interrupted", workState: "result_available" });
    expect(status.budgetStop).toMatchObject({
      scope: "delegated_task",
      limit: "tokens",
      used: 3100,
      allowed: 2000,
      taskId: childTask!.id,
    });
    expect(host.store.get("run", status.childRunId!)).toMatchObject({
      status: "interrupted",
      terminalReason: "budget_exceeded:tokens",
    });
    const [holderTask, spenderTask] = tasksUnder(childTask!.childThreadId).sort((a, b) =>
      a.createdAt.localeCompare(b.createdAt),
    );
    expect(holderTask).toMatchObject({
      title: "holder",
      status: "interrupted",
      cancelReason: "budget_exceeded:tokens",
    });
    expect(spenderTask).toMatchObject({ title: "spender", status: "completed", summary: "spent" });
    // The spender finished before the stop: its result is whole, no budget stopped it.
    expect(
      (await mustCall<DelegateTaskResult>(client, "task_status", { taskId: spenderTask!.id })).budgetStop,
    ).toBeNull();
    // The Codex parent's next model request carried the partial result and why it is partial.
    const result = resultRequestOf(rootPrompt)!.toolResult!.output;
    expect(result).toContain('"status":"interrupted"');
    expect(result).toContain('"limit":"tokens"');

    // The interrupted turns still count what they used: Pi's two finished requests (priced by
    // the table: 40 tokens at $1000 per million), the holder's aborted one nothing.
    expect((await host.usage.task(childTask!.id)).own).toMatchObject({
      status: "reported",
      tokens: { input: 30, output: 10, total: 40 },
      cost: { basis: "estimated", usd: 0.04 },
    });
    const prompts = [childPrompt, holderPrompt, spenderPrompt];
    expect((await host.usage.task(childTask!.id)).subtree).toMatchObject({
      status: "reported",
      turns: { ended: 3, reported: 3, inFlight: 0 },
      tokens: { total: reportedTotal(requestsOf(prompts)) },
    });
    expect(reportedTotal(requestsOf(prompts))).toBe(3140);
    await expectStopped(tree, prompts, ["token-holder"]);
  }, 240_000);

  it("a cost budget stops a Pi child's tree when a Codex grandchild's price-table cost reaches it", async () => {
    const before = new Set(harnessProcesses().map((entry) => entry.pid));
    const [rootPrompt, childPrompt, spenderPrompt] = ["codex budgets dollars", "pi pays", "codex spends"];
    // fake-model at $1000 per million: 800 + 400 tokens = $1.20, over the $1 budget.
    const spender = {
      task: `${spenderPrompt} @@hold cost-spend @@usage in=800 out=400 @@reply costly`,
      title: "costly",
      target: { providerInstanceId: "codex" },
      mode: "async",
    };
    const child = {
      task: `${childPrompt} @@usage in=1 out=1 @@tool delegate_task ${JSON.stringify(spender)} @@then @@hold cost-child @@reply pi never gets here`,
      title: "cost-budgeted",
      target: { providerInstanceId: "pi" },
      mode: "wait",
      budget: { costUsd: 1 },
      clientRequestId: "cost-budget",
    };
    const root = await rootThread(
      `${rootPrompt} @@tool delegate_task ${JSON.stringify(child)} @@then @@reply codex has the partial result`,
    );
    await server.waitForHold("cost-spend", 120_000);
    await server.waitForHold("cost-child", 120_000);
    const tree = processesBelowRoot(before);
    expect(tree.map((entry) => entry.label).sort()).toEqual(["codex app-server", "pi rpc"]);
    server.release("cost-spend");

    const run = await waitForRun(root);
    expect(run.status, JSON.stringify(run.error)).toBe("completed");
    const [childTask] = tasksUnder(root);
    const status = await mustCall<DelegateTaskResult>(client, "task_status", { taskId: childTask!.id });
    expect(status).toMatchObject({
      status: "interrupted",
      workState: "result_available",
      budgetStop: { scope: "delegated_task", limit: "costUsd", allowed: 1 },
    });
    expect(status.budgetStop!.used).toBeCloseTo(1.2, 10);
    const [spenderTask] = tasksUnder(childTask!.childThreadId);
    const spenderCost = (await host.usage.task(spenderTask!.id)).own.cost;
    expect(spenderCost).toMatchObject({ basis: "estimated" });
    expect(spenderCost.usd).toBeCloseTo(1.2, 10);
    expect(host.store.select("turnUsage", "thread_id = ?", [spenderTask!.childThreadId])[0]).toMatchObject({
      pricing: { entries: [{ model: "fake-model", source: "config", asOf: "2026-12-01" }] },
    });
    expect(resultRequestOf(rootPrompt)!.toolResult!.output).toContain('"limit":"costUsd"');
    await expectStopped(tree, [childPrompt, spenderPrompt], ["cost-child"]);
  }, 240_000);

  // Last: it moves the host's clock.
  it("a wall-clock budget stops a Pi child's tree, with its Claude grandchild, when its time runs out", async () => {
    const before = new Set(harnessProcesses().map((entry) => entry.pid));
    const [rootPrompt, childPrompt, grandchildPrompt] = ["codex budgets time", "pi waits", "claude waits"];
    const grandchild = {
      task: `${grandchildPrompt} @@hold wall-grandchild @@reply never`,
      title: "slow grandchild",
      target: { providerInstanceId: "claude" },
      mode: "async",
    };
    const child = {
      // Pi first asks what budgets cover it, then delegates, then waits.
      task: `${childPrompt} @@tool orchestrator_capabilities {} @@then @@usage in=1 out=1 @@tool delegate_task ${JSON.stringify(grandchild)} @@then @@hold wall-child @@reply pi never gets here`,
      title: "wall-clock-budgeted",
      target: { providerInstanceId: "pi" },
      mode: "wait",
      budget: { wallClockMs: 120_000 },
      clientRequestId: "wall-clock-budget",
    };
    const root = await rootThread(
      `${rootPrompt} @@tool delegate_task ${JSON.stringify(child)} @@then @@reply codex has the partial result`,
    );
    await server.waitForHold("wall-grandchild", 120_000);
    await server.waitForHold("wall-child", 120_000);
    const tree = processesBelowRoot(before);
    expect(tree.map((entry) => entry.label).sort()).toEqual(["claude", "pi rpc"]);
    // orchestrator_capabilities told the Pi child the budgets in force over its work: its task's.
    const [childTask] = tasksUnder(root);
    const capabilities = requestsOf([childPrompt]).find((request) =>
      request.toolResult?.toolName.endsWith("orchestrator_capabilities"),
    );
    const budgets = (
      JSON.parse(capabilities!.toolResult!.output) as {
        budgets: {
          perTaskBudget: boolean;
          covering: { budgetId: string; limits: unknown; remaining: { wallClockMs: number } }[];
        };
      }
    ).budgets;
    expect(budgets.perTaskBudget).toBe(true);
    expect(budgets.covering).toEqual([
      expect.objectContaining({
        budgetId: `budget:task:${childTask!.id}`,
        limits: { tokens: null, costUsd: null, wallClockMs: 120_000 },
      }),
    ]);
    expect(budgets.covering[0]!.remaining.wallClockMs).toBeLessThanOrEqual(120_000);
    // Two minutes pass on the host's clock.
    clock.advance(120_000);

    const run = await waitForRun(root);
    expect(run.status, JSON.stringify(run.error)).toBe("completed");
    const status = await mustCall<DelegateTaskResult>(client, "task_status", { taskId: childTask!.id });
    expect(status).toMatchObject({
      status: "interrupted",
      workState: "result_available",
      budgetStop: { scope: "delegated_task", limit: "wallClockMs", allowed: 120_000 },
    });
    expect(status.budgetStop!.used).toBeGreaterThanOrEqual(120_000);
    expect(tasksUnder(childTask!.childThreadId)[0]).toMatchObject({
      status: "interrupted",
      cancelReason: "budget_exceeded:wallClockMs",
    });
    expect(resultRequestOf(rootPrompt)!.toolResult!.output).toContain('"limit":"wallClockMs"');
    await expectStopped(tree, [childPrompt, grandchildPrompt], ["wall-grandchild", "wall-child"]);
  }, 240_000);
});
