import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCodexHome, resolveHarnessBinary, ScriptedModelServer, type CodexHome } from "@switchyard/testkit";
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

// Issue 40's "done when" for an ACP agent through the registry plugin: real codex-acp 2.x (its
// pinned Codex on the scripted model) under a task a scripted hub delegated. The scripted model
// makes Codex call spawn_agent twice; codex-acp reports the children as the subagent sessions
// draft's `subagent_update`s (the host advertises `clientCapabilities.subagents`). One child
// finishes, one is held at the model server while its parent's turn is held too: both show under
// the task in `task_status` and `t3_thread_read`, and `task_cancel` on the task ends the held one.
const ACP_REGISTRY_PLUGIN = fileURLToPath(new URL("../../../plugins/acp-registry", import.meta.url));

describe("native sub-agents of codex-acp (ACP registry agent) under a delegated task: shown, then stopped with the tree", () => {
  let server: ScriptedModelServer;
  let codexHome: CodexHome;
  let index: { url: string; close: () => Promise<void> };
  let lab: McpLab;

  beforeAll(async () => {
    server = await ScriptedModelServer.start();
    codexHome = await createCodexHome({ modelServerUrl: server.url });
    // A registry index on 127.0.0.1 lists codex-acp; `commandOverride` runs the installed one.
    const codexAcp = resolveHarnessBinary("codex-acp");
    index = await serveRegistryIndex([
      {
        id: "codex-acp",
        name: "Codex",
        version: codexAcp.version,
        description: "codex-acp (test index)",
        distribution: { npx: { package: `${codexAcp.packageName}@${codexAcp.version}` } },
      },
    ]);
    lab = await McpLab.start({
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR, ACP_REGISTRY_PLUGIN],
      providers: ({ home, gateDir }) => [
        scriptedInstance("hub", { gateDir, stateDir: `${home}/scripted-state` }),
        {
          id: "codex-acp",
          driver: "acp-registry",
          environment: codexHome.env,
          options: {
            agentId: "codex-acp",
            registryUrl: index.url,
            commandOverride: codexAcp.native ? codexAcp.command : codexAcp.args[0],
            modes: {
              runtime: {
                "approval-required": "read-only",
                "auto-accept-edits": "workspace-write",
                "full-access": "agent-full-access",
              },
            },
          },
        },
      ],
    });
  }, 120_000);

  afterAll(async () => {
    await lab?.stop();
    await index?.close();
    await codexHome?.cleanup();
    await server?.close();
  }, 60_000);

  it("its spawn_agent children show under the task with task, model, status and no usage of their own, and task_cancel ends the running one", async () => {
    const root = await lab.liveAgent({ instance: "hub" });
    const { task, quick, slow, holds } = await delegateSpawnAgentPair(root.client, server, {
      instance: "codex-acp",
      holdPrefix: "acp",
    });
    // Both recorded (the events reach the host on their own schedule), the first one finished.
    await until(
      "both children recorded, the first one finished",
      () => {
        const items = lab.host.store.select("item", "thread_id = ? AND kind = 'subagent'", [task.childThreadId]);
        return items.length === 2 && items.filter((item) => item.status === "completed").length === 1;
      },
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
      providerInstanceId: "codex-acp",
      model: "fake-model",
      summary: expect.stringContaining("sub answer 7"),
      usage: null,
      // Its own session's assistant text is its transcript (kept once it ended).
      transcript: { messages: 1, dropped: 0, latest: { role: "assistant", text: "sub answer 7" } },
    });
    expect(during[1]!.model).toBe("fake-model");
    // The child's ACP session id is no thread the host can read (`exposesChildThreadIds: false`).
    expect(during[0]!.nativeThreadId).toBeNull();
    const read = await mustCall<{ nativeSubagents?: NativeSubagentView[] }>(root.client, "t3_thread_read", {
      threadId: task.childThreadId,
    });
    expect(read.nativeSubagents?.map((child) => child.itemId)).toEqual(during.map((child) => child.itemId));

    await cancelTask(lab, root.client, task.taskId);
    const after = await nativeChildrenOf(root.client, task.taskId);
    expect(after.map((child) => [child.task, child.status])).toEqual([
      [quick, "completed"],
      [slow, "failed"],
    ]);
    for (const hold of holds) server.release(hold);
    root.release();
  }, 300_000);

  // codex-acp routes a child's approval through the root connection under the child's session
  // id; the parent waits for the child (wait_agent), so the request comes inside its turn.
  it("an approval its spawn_agent child asks reaches the attention inbox naming that child", async () => {
    const root = await lab.liveAgent({ instance: "hub" });
    const approver = await lab.client(["orchestration:read", "orchestration:operate", "orchestration:approve"]);
    // codex-acp asks only for a command the model wants to run outside the sandbox.
    const escalated = JSON.stringify({
      cmd: "touch from-the-acp-child.txt && echo from-the-acp-child",
      sandbox_permissions: "require_escalated",
      justification: "The test writes a file.",
    });
    const message = `helper task @@tool exec_command ${escalated} @@then @@reply child saw {{output}}`;
    const wait = JSON.stringify({ targets: ["{{output.agent_id}}"], timeout_ms: 120_000 });
    const task = await mustCall<DelegateTaskResult>(root.client, "delegate_task", {
      task: `spawn @@tool spawn_agent ${JSON.stringify({ message })} @@then @@tool wait_agent ${wait} @@then @@reply main is done`,
      title: "codex-acp child asks",
      mode: "async",
      target: { providerInstanceId: "codex-acp" },
      runtimeMode: "approval-required",
    });
    const seen = await approveUntilTaskEnds(lab, approver, task);
    const shell = seen.find((request) => request.approval?.title.includes("from-the-acp-child"));
    expect(shell, JSON.stringify(seen)).toBeDefined();
    const children = await nativeChildrenOf(root.client, task.taskId);
    expect(children).toHaveLength(1);
    expect(shell!.nativeSubagent).toEqual({
      nativeId: children[0]!.nativeId,
      itemId: children[0]!.itemId,
      // The scripted model filled the message's own `{{output}}` (empty) when it sent it.
      title: message.replace("{{output}}", ""),
    });
    for (const request of seen.filter((entry) => entry !== shell)) expect(request.nativeSubagent).toBeUndefined();
    expect(children[0]).toMatchObject({ status: "completed", summary: expect.stringContaining("child saw") });
    root.release();
  }, 300_000);
});

/** Serves an ACP Registry index at `http://127.0.0.1:<port>/registry.json`. */
async function serveRegistryIndex(agents: readonly unknown[]): Promise<{ url: string; close: () => Promise<void> }> {
  const body = JSON.stringify({ version: "1.0.0", agents, extensions: [] });
  const server: Server = createServer((request, response) => {
    if (request.url === "/registry.json") response.writeHead(200, { "content-type": "application/json" }).end(body);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/registry.json`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
