import { afterEach, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../src/transports/http/switchyard-server.js";
import { McpSessionRegistry } from "../src/services/credentials/mcp-session-registry.js";
import { scriptedInstance, startTestHost, type TestHost } from "./support/test-host.js";
import { callTool, connectMcp, mustCall } from "./support/mcp-client.js";
import { join } from "node:path";

describe("MCP smoke", () => {
  let t: TestHost;
  let server: RunningServer;
  afterEach(async () => {
    await server?.close();
    await t?.cleanup();
  });

  it("delegates from a scripted parent to another provider and returns the result to the waiting call", async () => {
    t = await startTestHost({
      providers: [
        scriptedInstance("alpha", { gateDir: "/tmp/none" }),
        scriptedInstance("beta", { models: ["beta-1"] }),
      ],
      start: false,
    });
    server = await startServer(t.host, { port: 0 });
    const project = await t.host.projects.add(t.workspace);
    const task = {
      task: "@@reply child-done",
      target: { providerInstanceId: "beta" },
      mode: "wait",
      clientRequestId: "r1",
    };
    const { thread } = await t.host.threads.createThread({
      projectId: project.id,
      providerInstanceId: "alpha",
      runtimeMode: "full-access",
      prompt: `please @@tool delegate_task ${JSON.stringify(task)}`,
      createdBy: "user",
      creationSource: "cli",
    });
    const waited = await t.host.threads.waitForRun({ threadId: thread.id, timeoutMs: 20_000 });
    expect(waited.run?.status).toBe("completed");
    const json = waited.run!.summary!.replace(/^.*tool delegate_task -> /s, "");
    const result = JSON.parse(json);
    expect(result.status).toBe("completed");
    expect(result.summary).toBe("child-done");
    expect(result.workState).toBe("result_available");

    const registry = t.host.container.resolve(McpSessionRegistry);
    const { token } = registry.issueClientToken({ ttlMs: 60_000, capabilities: ["orchestration:read"] });
    const client = await connectMcp(server.mcpUrl, token);
    const tools = await client.listTools();
    expect(tools.tools.map((tool) => tool.name)).toContain("delegate_task");
    // A tool that creates work without a clientRequestId is not idempotent; reads are.
    const idempotent = Object.fromEntries(tools.tools.map((tool) => [tool.name, tool.annotations?.idempotentHint]));
    for (const name of ["delegate_task", "t3_thread_send", "t3_thread_launch", "create_threads", "schedule_task"])
      expect({ name, idempotent: idempotent[name] }).toEqual({ name, idempotent: false });
    expect(idempotent["t3_thread_list"]).toBe(true);
    const list = await mustCall<{ threads: { threadId: string }[] }>(client, "t3_thread_list", {
      projectId: project.id,
      includeSubagents: true,
    });
    expect(list.threads).toHaveLength(2);
    const denied = await callTool(client, "delegate_task", { task: "x" });
    expect(denied.ok).toBe(false);
    if (!denied.ok) expect(denied.code).toBe("capability_denied");
    void join;
  });
});
