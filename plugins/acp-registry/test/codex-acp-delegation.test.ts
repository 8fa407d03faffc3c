import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ScriptedModelServer,
  createCodexHome,
  startTestHost,
  type CodexHome,
  type TestHost,
} from "@switchyard/testkit";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import { realAgents, startRegistryFixture, type RegistryFixture } from "./support/registry-fixture.js";

// codex-acp 2.x as an ACP Registry agent in a real Switchyard host (plugin host, engine, SQLite,
// the MCP endpoint over HTTP), driven by the scripted model: its model calls delegate_task on
// the endpoint the session injected, and the child's answer comes back as the tool's output.

const pluginDir = fileURLToPath(new URL("..", import.meta.url));

describe("codex-acp 2.x delegates through Switchyard (registry agent, scripted model)", () => {
  let server: ScriptedModelServer;
  let registry: RegistryFixture;
  let home: CodexHome;
  let lab: TestHost;

  beforeAll(async () => {
    const agents = realAgents();
    registry = await startRegistryFixture(agents.entries);
    server = await ScriptedModelServer.start();
    home = await createCodexHome({ modelServerUrl: server.url });
    lab = await startTestHost({
      plugins: [pluginDir, SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [
        {
          id: "codex",
          driver: "acp-registry",
          environment: home.env,
          options: {
            agentId: "codex-acp",
            registryUrl: registry.url,
            commandOverride: agents.codexAcp.command,
            modes: {
              runtime: {
                "approval-required": "read-only",
                "auto-accept-edits": "workspace-write",
                "full-access": "agent-full-access",
              },
            },
          },
        },
        { id: "scripted", driver: "scripted", options: {} },
      ],
    });
  }, 120_000);

  afterAll(async () => {
    await lab?.stop();
    await server?.close();
    await registry?.close();
    await home?.cleanup();
  }, 60_000);

  it("a codex-acp thread delegates to another provider and waits; the child's answer reaches its next model request", async () => {
    const task = {
      task: "@@reply Hello from the scripted child",
      target: { providerInstanceId: "scripted" },
      mode: "wait",
      clientRequestId: "codex-acp-to-scripted",
    };
    const threadId = await lab.createThread(
      "codex",
      `delegate it @@tool delegate_task ${JSON.stringify(task)} @@then @@reply codex-acp relays: {{output.summary}}`,
      {
        runtimeMode: "full-access",
      },
    );
    const run = await lab.waitForRun(threadId, { timeoutMs: 120_000 });
    expect(run.status, JSON.stringify(run.error)).toBe("completed");
    expect(run.summary).toContain("codex-acp relays: Hello from the scripted child");
    const tasks = lab.host.store.select("delegatedTask", "parent_thread_id = ?", [threadId]);
    expect(tasks).toHaveLength(1);
    expect(tasks[0]).toMatchObject({
      providerInstanceId: "scripted",
      status: "completed",
      summary: "Hello from the scripted child",
    });
    expect(lab.host.store.get("thread", tasks[0]!.childThreadId)).toMatchObject({
      lineage: { relationship: "subagent", parentThreadId: threadId },
    });
    // The call went out as an MCP tool call of the injected `switchyard` server.
    const call = lab.host.store
      .select("item", "thread_id = ?", [threadId], "ORDER BY position")
      .find((item) => item.kind === "tool_call" && item.data["toolKind"] === "mcp");
    expect(call?.data["name"]).toBe("mcp__switchyard__delegate_task");
    // codex-acp's follow-up model request carried the child's result as the tool output.
    expect(
      server.requests.some((request) => request.toolResult?.output.includes("Hello from the scripted child")),
    ).toBe(true);
  }, 180_000);
});
