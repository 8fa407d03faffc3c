import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createClaudeHome,
  createCodexHome,
  createOpenCodeHome,
  ScriptedModelServer,
  type ClaudeHome,
  type CodexHome,
  type OpenCodeHome,
} from "@switchyard/testkit";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import type { DelegateTaskResult } from "../../src/services/delegation/task-view.js";
import type { NativeSubagentView } from "../../src/services/native-subagents.js";
import { mustCall } from "../support/mcp-client.js";
import { McpLab } from "../support/mcp-lab.js";
import { scriptedInstance } from "../support/test-host.js";
import {
  approveUntilTaskEnds,
  cancelTask,
  delegateSpawnAgentPair,
  nativeChildrenOf,
} from "../support/native-subagent-tasks.js";
import { until } from "../support/until.js";

// Issue 40's "done when", through the host: a scripted hub delegates to a real harness (Claude
// Code on the Agent SDK, OpenCode's server), the scripted model makes that harness spawn its own
// sub-agents (Claude's Agent tool, OpenCode's task tool): one finishes, one is held at the model
// server. The native children show under the delegated task in `task_status` and
// `t3_thread_read` (model, status, usage); `task_cancel` on the task then ends the held one, which
// no read may show as running afterwards.
const CLAUDE_PLUGIN = fileURLToPath(new URL("../../../plugins/claude", import.meta.url));
const OPENCODE_PLUGIN = fileURLToPath(new URL("../../../plugins/opencode", import.meta.url));
const CODEX_PLUGIN = fileURLToPath(new URL("../../../plugins/codex", import.meta.url));

describe("native sub-agents of real harnesses under a delegated task: shown, then stopped with the tree", () => {
  let server: ScriptedModelServer;
  let claudeHome: ClaudeHome;
  let openCodeHome: OpenCodeHome;
  let codexHome: CodexHome;
  let lab: McpLab;

  beforeAll(async () => {
    server = await ScriptedModelServer.start();
    claudeHome = await createClaudeHome({ modelServerUrl: server.url, model: "claude-fake" });
    openCodeHome = await createOpenCodeHome({ modelServerUrl: server.url });
    codexHome = await createCodexHome({ modelServerUrl: server.url });
    lab = await McpLab.start({
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR, CLAUDE_PLUGIN, OPENCODE_PLUGIN, CODEX_PLUGIN],
      providers: ({ home, gateDir }) => [
        scriptedInstance("hub", { gateDir, stateDir: `${home}/scripted-state` }),
        { id: "claude", driver: "claude", homePath: claudeHome.home, environment: claudeHome.env },
        {
          id: "opencode",
          driver: "opencode",
          options: { configFile: openCodeHome.configPath },
          environment: openCodeHome.env,
        },
        { id: "codex", driver: "codex", homePath: codexHome.home, environment: codexHome.env },
      ],
    });
  }, 120_000);

  afterAll(async () => {
    await lab?.stop();
    await claudeHome?.cleanup();
    await openCodeHome?.cleanup();
    await codexHome?.cleanup();
    await server?.close();
  }, 60_000);

  const cases = [
    { instance: "claude", tool: "Agent", agentType: "general-purpose", model: "claude-fake" },
    { instance: "opencode", tool: "task", agentType: "general", model: "fake-model" },
  ];

  // Codex's multi-agent children run beside its turn (spawn_agent returns at once), report no
  // usage of their own (`subagents.reportsUsage: false`: counted in the parent turn only) and
  // carry their own thread ids. The parent turn is held so the held child is still its own.
  it("codex: its spawn_agent children show under the task with status and no usage of their own, and task_cancel ends the running one", async () => {
    const root = await lab.liveAgent({ instance: "hub" });
    const { task, quick, slow, holds } = await delegateSpawnAgentPair(root.client, server, {
      instance: "codex",
      holdPrefix: "codex",
    });
    await until(
      "the first child to finish",
      () =>
        lab.host.store
          .select("item", "thread_id = ? AND kind = 'subagent'", [task.childThreadId])
          .filter((item) => item.status === "completed").length === 1,
      { attempts: 600, intervalMs: 100 },
    );
    const during = await nativeChildrenOf(root.client, task.taskId);
    expect(during.map((child) => [child.task, child.status])).toEqual([
      [quick, "completed"],
      [slow, "running"],
    ]);
    expect(during[0]).toMatchObject({
      origin: "provider_native",
      runId: task.childRunId,
      providerInstanceId: "codex",
      summary: expect.stringContaining("sub answer 7"),
      usage: null,
    });
    expect(during[0]!.nativeThreadId).toBe(during[0]!.nativeId);

    await cancelTask(lab, root.client, task.taskId);
    expect((await nativeChildrenOf(root.client, task.taskId)).map((child) => child.status)).toEqual([
      "completed",
      "failed",
    ]);
    for (const hold of holds) server.release(hold);
    root.release();
  }, 300_000);

  for (const { instance, tool, agentType } of cases) {
    it(`${instance}: an approval its ${tool} tool's child asks reaches the attention inbox naming that child`, async () => {
      const root = await lab.liveAgent({ instance: "hub" });
      const approver = await lab.client(["orchestration:read", "orchestration:operate", "orchestration:approve"]);
      const spawn = {
        description: "shell helper",
        prompt: `helper task @@shell echo from-the-${instance}-child @@then @@reply child saw {{output}}`,
        subagent_type: agentType,
      };
      const task = await mustCall<DelegateTaskResult>(root.client, "delegate_task", {
        task: `spawn @@tool ${tool} ${JSON.stringify(spawn)} @@then @@reply main is done`,
        title: `${instance} child asks`,
        mode: "async",
        target: { providerInstanceId: instance },
        runtimeMode: "approval-required",
      });
      const seen = await approveUntilTaskEnds(lab, approver, task);
      const shell = seen.find((request) => request.approval?.title.includes(`from-the-${instance}-child`));
      expect(shell, JSON.stringify(seen)).toBeDefined();
      const children = await nativeChildrenOf(root.client, task.taskId);
      expect(children).toHaveLength(1);
      expect(shell!.nativeSubagent).toEqual({
        nativeId: children[0]!.nativeId,
        itemId: children[0]!.itemId,
        title: "shell helper",
      });
      // The thread's own requests (any the spawning call asked) name no child.
      for (const request of seen.filter((entry) => entry !== shell)) expect(request.nativeSubagent).toBeUndefined();
      // The stored request keeps it (what the event stream's request.opened shows).
      expect(lab.host.store.get("runtimeRequest", shell!.requestId)!.nativeSubagent).toEqual(shell!.nativeSubagent);
      expect(children[0]).toMatchObject({ status: "completed", summary: expect.stringContaining("child saw") });
      root.release();
    }, 300_000);
  }

  for (const { instance, tool, agentType, model } of cases) {
    it(`${instance}: its ${tool} tool's children show under the task with model, status and usage, and task_cancel ends the running one`, async () => {
      const root = await lab.liveAgent({ instance: "hub" });
      const held = `${instance}-native-held`;
      const quick = { description: "count things", prompt: "sub task @@reply sub answer 7", subagent_type: agentType };
      const slow = {
        description: "long survey",
        prompt: `long sub task @@hold ${held} @@reply never reached`,
        subagent_type: agentType,
      };
      const task = await mustCall<DelegateTaskResult>(root.client, "delegate_task", {
        task: `spawn @@tool ${tool} ${JSON.stringify(quick)} @@then @@tool ${tool} ${JSON.stringify(slow)} @@then @@reply main is done`,
        title: `${instance} with native children`,
        mode: "async",
        target: { providerInstanceId: instance },
        runtimeMode: "full-access",
      });
      // The second child is running: its model request is held.
      await server.waitForHold(held, 180_000);
      await until(
        "both native children to be recorded",
        () => lab.host.store.count("item", "thread_id = ? AND kind = 'subagent'", [task.childThreadId]) === 2,
        { attempts: 300, intervalMs: 100 },
      );
      const during = await nativeChildrenOf(root.client, task.taskId);
      expect(during.map((child) => [child.title, child.status])).toEqual([
        ["count things", "completed"],
        ["long survey", "running"],
      ]);
      expect(during[0]).toMatchObject({
        origin: "provider_native",
        runId: task.childRunId,
        providerInstanceId: instance,
        model: expect.stringContaining(model),
        agentType,
        summary: expect.stringContaining("sub answer 7"),
        usage: { tokens: { input: expect.any(Number), output: expect.any(Number) }, countedIn: "parent_turn" },
      });
      expect(during[0]!.usage!.tokens.total).toBeGreaterThan(0);
      expect(during[1]).toMatchObject({ runId: task.childRunId, task: slow.prompt, agentType });
      const read = await mustCall<{ nativeSubagents?: NativeSubagentView[] }>(root.client, "t3_thread_read", {
        threadId: task.childThreadId,
      });
      expect(read.nativeSubagents?.map((child) => child.itemId)).toEqual(during.map((child) => child.itemId));

      // Stopping the tree ends the running native child with its parent's turn.
      await cancelTask(lab, root.client, task.taskId);
      const after = await nativeChildrenOf(root.client, task.taskId);
      expect(after.map((child) => [child.title, child.status])).toEqual([
        ["count things", "completed"],
        ["long survey", "failed"],
      ]);
      const reread = await mustCall<{ nativeSubagents?: NativeSubagentView[] }>(root.client, "t3_thread_read", {
        threadId: task.childThreadId,
      });
      expect(reread.nativeSubagents?.map((child) => child.status)).toEqual(["completed", "failed"]);
      server.release(held);
      root.release();
    }, 300_000);
  }
});
