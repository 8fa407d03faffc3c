import { request } from "node:http";
import { Lifecycle, injectable } from "tsyringe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ThreadQueryService } from "../../src/services/thread-query-service.js";
import { McpLab } from "../support/mcp-lab.js";
import { callTool, connectMcp, mustCall } from "../support/mcp-client.js";
import { sqliteStore } from "../support/sqlite-store.js";

/** A raw HTTP POST to the endpoint, for what MCP clients never send. */
function post(
  url: string,
  headers: Record<string, string>,
  body = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("MCP authentication and authorization", () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start({ server: { credentialIdleMs: 600 } });
  });
  afterAll(async () => lab.stop());

  it("answers a request without a token, with a malformed header or an unknown token with 401 and WWW-Authenticate: Bearer", async () => {
    for (const headers of [
      {},
      { authorization: "Basic abc" },
      { authorization: "Bearer sy_unknown_token_abcdefghijklmnop" },
    ] as Record<string, string>[]) {
      const response = await post(lab.server.mcpUrl, headers);
      expect(response.status, JSON.stringify(headers)).toBe(401);
      expect(String(response.headers["www-authenticate"])).toMatch(/^Bearer /);
      expect(response.body).toContain("invalid_token");
    }
    await expect(connectMcp(lab.server.mcpUrl, null)).rejects.toThrow();
  });

  it("refuses a Host or Origin that is not this loopback server (DNS rebinding)", async () => {
    const token = lab.registry.issueClientToken({ ttlMs: 60_000, capabilities: ["orchestration:read"] }).token;
    const host = await post(lab.server.mcpUrl, { authorization: `Bearer ${token}`, host: "evil.example:80" });
    expect(host.status).toBe(403);
    const origin = await post(lab.server.mcpUrl, { authorization: `Bearer ${token}`, origin: "http://evil.example" });
    expect(origin.status).toBe(403);
    const ok = await post(lab.server.mcpUrl, {
      authorization: `Bearer ${token}`,
      origin: `http://127.0.0.1:${lab.server.port}`,
    });
    expect(ok.status).not.toBe(403);
  });

  it("refuses an expired client token", async () => {
    const { token } = lab.registry.issueClientToken({ ttlMs: 1, capabilities: ["orchestration:operate"] });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const response = await post(lab.server.mcpUrl, { authorization: `Bearer ${token}` });
    expect(response.status).toBe(401);
    expect(response.body).toContain("expired");
  });

  it("expires an idle provider-session credential and revokes it when the session closes", async () => {
    const agent = await lab.liveAgent();
    const token = await lab.tokenFor(agent.threadId);
    expect((await post(lab.server.mcpUrl, { authorization: `Bearer ${token}` })).status).toBe(200);
    // While its turn runs the agent is at work, however quietly: the credential stays valid.
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect((await post(lab.server.mcpUrl, { authorization: `Bearer ${token}` })).status).toBe(200);
    agent.release();
    await lab.host.threads.waitForRun({ threadId: agent.threadId, timeoutMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 800));
    const idle = await post(lab.server.mcpUrl, { authorization: `Bearer ${token}` });
    expect(idle.status).toBe(401);
    expect(idle.body).toContain("idle");

    const second = await lab.liveAgent();
    const secondToken = await lab.tokenFor(second.threadId);
    expect((await post(lab.server.mcpUrl, { authorization: `Bearer ${secondToken}` })).status).toBe(200);
    await lab.host.sessions.close(second.threadId, "test");
    const revoked = await post(lab.server.mcpUrl, { authorization: `Bearer ${secondToken}` });
    expect(revoked.status).toBe(401);
    expect(revoked.body).toContain("revoked");
  });

  it("stores only a hash of each token", async () => {
    const { token } = lab.registry.issueClientToken({ ttlMs: 60_000, capabilities: ["orchestration:read"] });
    const rows = sqliteStore(lab.host.store).db.prepare("SELECT * FROM mcp_credentials").all();
    expect(JSON.stringify(rows)).not.toContain(token);
    const events = sqliteStore(lab.host.store).db.prepare("SELECT data FROM events").all();
    expect(JSON.stringify(events)).not.toContain("sy_");
  });

  it("denies a read-only credential anything that changes state", async () => {
    const reader = await lab.client(["orchestration:read"]);
    const thread = (
      await lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId: "alpha",
        createdBy: "user",
        creationSource: "cli",
      })
    ).thread;
    for (const [name, args] of [
      ["t3_thread_send", { threadId: thread.id, message: "hi" }],
      ["t3_thread_interrupt", { threadId: thread.id }],
      ["create_threads", { threads: [{}], projectId: lab.projectId }],
      ["task_cancel", { taskId: "task:x" }],
      ["t3_thread_update", { threadId: thread.id, action: "rename", title: "x" }],
      [
        "schedule_task",
        {
          projectId: lab.projectId,
          prompt: "x",
          schedule: { type: "webhook" },
          target: { providerInstanceId: "alpha" },
        },
      ],
      ["delete_scheduled_task", { scheduledTaskId: "sched_x" }],
      ["set_thread_settled", { threadId: thread.id, settled: true }],
      ["apply_changes", { threadId: thread.id }],
      ["discard_changes", { threadId: thread.id }],
    ] as const) {
      expect(await callTool(reader, name, args), name).toMatchObject({ ok: false, code: "capability_denied" });
    }
    expect(await callTool(reader, "t3_thread_read", { threadId: thread.id })).toMatchObject({ ok: true });
    expect(await callTool(reader, "list_scheduled_tasks", {})).toMatchObject({ ok: true });
    expect(lab.host.store.count("scheduledTask", "1 = 1")).toBe(0);
  });

  it("refuses to act on a thread with broader modes than the caller's", async () => {
    const narrow = await lab.liveAgent({ runtimeMode: "approval-required" });
    const broad = (
      await lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId: "alpha",
        runtimeMode: "full-access",
        createdBy: "user",
        creationSource: "cli",
      })
    ).thread;
    expect(await callTool(narrow.client, "t3_thread_send", { threadId: broad.id, message: "x" })).toMatchObject({
      ok: false,
      code: "runtime_mode_escalation_denied",
    });
    expect(await callTool(narrow.client, "t3_thread_interrupt", { threadId: broad.id })).toMatchObject({
      ok: false,
      code: "runtime_mode_escalation_denied",
    });
    const planner = await lab.liveAgent({ runtimeMode: "full-access", interactionMode: "plan" });
    expect(await callTool(planner.client, "t3_thread_send", { threadId: broad.id, message: "x" })).toMatchObject({
      ok: false,
      code: "interaction_mode_escalation_denied",
    });
    expect(await callTool(planner.client, "t3_pending_request", { threadId: broad.id, action: "list" })).toMatchObject({
      ok: false,
      code: "thread_not_found",
    });
    narrow.release();
    planner.release();
  });

  it("rejects malformed arguments with invalid_request naming the field", async () => {
    const client = await lab.client();
    expect(await callTool(client, "t3_thread_read", { threadId: 42 })).toMatchObject({
      ok: false,
      code: "invalid_request",
      message: expect.stringContaining("threadId"),
    });
    expect(await callTool(client, "t3_thread_read", { threadId: "x", unknownField: true })).toMatchObject({
      ok: false,
      code: "invalid_request",
    });
    expect(await callTool(client, "no_such_tool", {})).toMatchObject({ ok: false, code: "invalid_request" });
  });

  it("reports an unexpected failure as orchestration_error and keeps serving", async () => {
    @injectable()
    class BrokenQueries extends ThreadQueryService {
      override list(): never {
        throw new Error("the disk is on fire");
      }
    }
    const broken = await McpLab.start({
      overrides: (container) =>
        container.register(ThreadQueryService, { useClass: BrokenQueries }, { lifecycle: Lifecycle.ContainerScoped }),
    });
    try {
      const client = await broken.client();
      expect(await callTool(client, "t3_thread_list", { projectId: broken.projectId })).toMatchObject({
        ok: false,
        code: "orchestration_error",
        message: expect.stringContaining("the disk is on fire"),
      });
      expect(await mustCall(client, "orchestrator_capabilities", {})).toMatchObject({ callerKind: "client" });
    } finally {
      await broken.stop();
    }
  });

  it("lists every tool with input and output schemas and annotations", async () => {
    const client = await lab.client(["orchestration:read"]);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        "orchestrator_capabilities",
        "delegate_task",
        "task_status",
        "task_cancel",
        "create_threads",
        "t3_thread_launch",
        "t3_thread_list",
        "t3_thread_read",
        "t3_thread_update",
        "link_pull_request",
        "unlink_pull_request",
        "t3_thread_send",
        "t3_thread_wait",
        "t3_thread_interrupt",
        "set_thread_settled",
        "t3_pending_request",
        "schedule_task",
        "list_scheduled_tasks",
        "delete_scheduled_task",
        "read_changes",
        "apply_changes",
        "discard_changes",
      ].sort(),
    );
    for (const tool of tools) {
      expect(tool.inputSchema.type, tool.name).toBe("object");
      expect(tool.outputSchema?.type, tool.name).toBe("object");
      expect(typeof tool.annotations?.readOnlyHint, tool.name).toBe("boolean");
    }
    expect(tools.find((t) => t.name === "task_cancel")?.annotations).toMatchObject({
      destructiveHint: true,
      readOnlyHint: false,
    });
    expect(tools.find((t) => t.name === "t3_thread_read")?.annotations).toMatchObject({ readOnlyHint: true });
  });
});
