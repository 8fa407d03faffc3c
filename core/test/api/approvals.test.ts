import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RuntimeRequestRecord } from "../../src/store/records.js";
import type { McpLab } from "../support/mcp-lab.js";
import { ok, type ApiClient, type FailureBody } from "../support/api-client.js";
import { apiClientFor, startApiLab } from "../support/api-lab.js";
import { callTool, connectMcp } from "../support/mcp-client.js";
import { sqliteStore } from "../support/sqlite-store.js";

/**
 * The approval round trip: an approval-required child asks; only a token with the approve verb
 * answers it, through the API (and, by the same rule, through MCP); a read token, an operate
 * token and an agent's credential each fail, and the request stays pending until it is answered.
 */
describe("approvals through the API", () => {
  let lab: McpLab;
  let router: ApiClient;
  let reader: ApiClient;
  let approver: ApiClient;
  let approverToken: string;
  let operatorToken: string;

  beforeAll(async () => {
    const ceiling = { runtimeMode: "approval-required", interactionMode: "default" } as const;
    ({
      lab,
      client: router,
      token: operatorToken,
    } = await startApiLab({ capabilities: ["orchestration:operate"], ceiling }));
    approver = apiClientFor(lab, { capabilities: ["orchestration:approve"], ceiling });
    approverToken = approver.token!;
    reader = apiClientFor(lab, { capabilities: ["orchestration:read"], ceiling });
  });
  afterAll(async () => lab.stop());

  const askingChild = async (command: string) => {
    // No modes named: the child gets the token's ceiling, approval-required.
    const created = await ok(
      router.post("/threads", {
        projectId: lab.projectId,
        threads: [
          { prompt: `clean the build @@approve ${command}`, title: "cleaner", target: { providerInstanceId: "alpha" } },
        ],
      }),
      201,
    );
    const child = created.threads[0].thread as { threadId: string; runtimeMode: string };
    expect(child.runtimeMode).toBe("approval-required");
    const request = await lab.host.waiter.waitFor(
      () =>
        lab.host.store
          .select("runtimeRequest", "thread_id = ? AND status = 'pending'", [child.threadId])
          .find((r) => r.kind === "approval") ?? null,
      { timeoutMs: 10_000 },
    );
    if (request === null) throw new Error("the child never asked for approval");
    return { threadId: child.threadId, request };
  };

  const respondPath = (threadId: string, requestId: string) =>
    `/threads/${threadId}/pending-requests/${requestId}/respond`;

  it("an approve token answers the child's approval and the child proceeds; read, operate and agent credentials each fail", async () => {
    const { threadId, request } = await askingChild("rm -rf build");

    // Every caller sees the approval; only its kind and what it asks for.
    const listed = await ok(reader.get(`/threads/${threadId}/pending-requests`));
    expect(listed.requests).toEqual([
      expect.objectContaining({
        requestId: request.id,
        kind: "approval",
        status: "pending",
        approval: expect.objectContaining({ approvalKind: "command", title: "rm -rf build" }),
      }),
    ]);

    const refusals: Record<string, unknown> = {};
    for (const [name, client] of [
      ["read token", reader],
      ["operate token", router],
    ] as const) {
      const answer = await client.post(respondPath(threadId, request.id), { decision: "accept" });
      refusals[name] = [
        answer.status,
        (answer.body as FailureBody).error.code,
        (answer.body as FailureBody).error.details.required,
      ];
      // Dismissing declines the approval: the same capability.
      const dismissed = await client.post(respondPath(threadId, request.id), { dismiss: true });
      expect([dismissed.status, (dismissed.body as FailureBody).error.code], `${name} dismiss`).toEqual([
        403,
        "capability_denied",
      ]);
    }
    const agent = await lab.liveAgent({ title: "some agent" });
    const agentToken = await lab.tokenFor(agent.threadId);
    const asAgent = await router.with(agentToken).post(respondPath(threadId, request.id), { decision: "accept" });
    refusals["agent credential"] = [
      asAgent.status,
      (asAgent.body as FailureBody).error.code,
      (asAgent.body as FailureBody).error.details.required,
    ];
    expect(refusals).toEqual({
      "read token": [403, "capability_denied", "orchestration:approve"],
      "operate token": [403, "capability_denied", "orchestration:approve"],
      "agent credential": [403, "capability_denied", "orchestration:approve"],
    });
    // The same rule over MCP, for the agent and for the operate token.
    expect(
      await callTool(agent.client, "t3_pending_request", {
        threadId,
        action: "respond",
        requestId: request.id,
        decision: "accept",
      }),
    ).toMatchObject({
      ok: false,
      code: "capability_denied",
      details: { required: "orchestration:approve" },
    });
    const operatorMcp = await connectMcp(lab.server.mcpUrl, operatorToken);
    expect(
      await callTool(operatorMcp, "t3_pending_request", {
        threadId,
        action: "respond",
        requestId: request.id,
        decision: "accept",
      }),
    ).toMatchObject({ ok: false, code: "capability_denied" });
    await operatorMcp.close();
    agent.release();

    // Nothing any of them sent reached the request.
    expect(lab.host.store.get("runtimeRequest", request.id)).toMatchObject({ status: "pending", response: null });
    expect(lab.host.store.get("run", lab.host.store.select("run", "thread_id = ?", [threadId])[0]!.id)!.status).toBe(
      "waiting",
    );

    const answered = await ok(approver.post(respondPath(threadId, request.id), { decision: "accept" }));
    expect(answered).toMatchObject({ requestId: request.id, kind: "approval" });
    expect(await ok(approver.get(`/threads/${threadId}/wait`))).toMatchObject({
      status: "completed",
      summary: "clean the build: approved: rm -rf build",
    });
    expect(lab.host.store.get("runtimeRequest", request.id)).toMatchObject({
      status: "answered",
      response: { kind: "approval", decision: "accept" },
    });
    // Answered once: a second answer is refused, and the approve token still cannot send messages.
    expect((await approver.post(respondPath(threadId, request.id), { decision: "decline" })).status).toBe(400);
    expect(
      ((await approver.post(`/threads/${threadId}/messages`, { message: "more" })).body as FailureBody).error,
    ).toMatchObject({ code: "capability_denied", details: { required: "orchestration:operate" } });
  });

  it("an approve token declines through MCP t3_pending_request too, by the same rule", async () => {
    const { threadId, request } = await askingChild("git push --force");
    const mcp = await connectMcp(lab.server.mcpUrl, approverToken);
    try {
      expect(
        await callTool(mcp, "t3_pending_request", {
          threadId,
          action: "respond",
          requestId: request.id,
          answers: { q1: "x" },
        }),
      ).toMatchObject({ ok: false, code: "capability_denied", details: { required: "orchestration:operate" } });
      const listed = await callTool<{ requests: { requestId: string; kind: string }[] }>(mcp, "t3_pending_request", {
        threadId,
        action: "list",
      });
      expect(listed).toMatchObject({ ok: true, value: { requests: [{ requestId: request.id, kind: "approval" }] } });
      expect(
        await callTool(mcp, "t3_pending_request", {
          threadId,
          action: "respond",
          requestId: request.id,
          decision: "decline",
        }),
      ).toMatchObject({ ok: true });
    } finally {
      await mcp.close();
    }
    expect(await ok(approver.get(`/threads/${threadId}/wait`))).toMatchObject({
      status: "completed",
      summary: "clean the build: declined: git push --force",
    });
  });

  it("never gives a provider session's credential the approve capability, even if its row says so", async () => {
    const agent = await lab.liveAgent({ title: "forger" });
    const token = await lab.tokenFor(agent.threadId);
    const resolved = await lab.registry.resolve(token);
    if (!("scope" in resolved)) throw new Error("the agent's token did not resolve");
    expect([...resolved.scope.capabilities].sort()).toEqual(["orchestration:operate", "orchestration:read"]);
    // A row edited by hand (or by a bug) to hold approve still resolves without it.
    sqliteStore(lab.host.store)
      .db.prepare(
        "UPDATE mcp_credentials SET data = json_set(data, '$.capabilities', json('[\"orchestration:read\",\"orchestration:operate\",\"orchestration:approve\"]')) WHERE kind = 'provider_session' AND thread_id = ?",
      )
      .run(agent.threadId);
    const forged = await lab.registry.resolve(token);
    if (!("scope" in forged)) throw new Error("the agent's token did not resolve");
    expect(forged.scope.capabilities.has("orchestration:approve")).toBe(false);
    const { threadId, request } = await askingChild("rm -rf dist");
    expect(
      await callTool(agent.client, "t3_pending_request", {
        threadId,
        action: "respond",
        requestId: request.id,
        decision: "accept",
      }),
    ).toMatchObject({ ok: false, code: "capability_denied" });
    expect((lab.host.store.get("runtimeRequest", request.id) as RuntimeRequestRecord).response).toBeNull();
    agent.release();
    await ok(approver.post(respondPath(threadId, request.id), { decision: "cancel" }));
  });
});
