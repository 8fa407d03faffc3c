import createClient from "openapi-fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultProviders, McpLab } from "../support/mcp-lab.js";
import { scriptedInstance } from "../support/test-host.js";
import type { paths } from "../../../web/src/api/generated/switchyard-api.js";

/**
 * A client generated from the OpenAPI document (openapi-typescript types, the web UI's copy, kept
 * current by web/test/api/generated-types.test.ts, with openapi-fetch) runs the router scenario's request/response
 * half: the router finds providers, creates a planner thread and three children on different
 * providers, waits for each child, sends the results to the planner, waits for it and reads
 * its timeline. Types are checked by `tsc -p tsconfig.tests.json`, so an API change that breaks
 * a generated client breaks the typecheck. (The pushed-events half of the scenario, with its
 * SSE client, is in the events tests.)
 */
describe("a client generated from the OpenAPI document", () => {
  let lab: McpLab;
  let api: ReturnType<typeof createClient<paths>>;

  beforeAll(async () => {
    lab = await McpLab.start({
      providers: (dirs) => [
        ...defaultProviders(dirs),
        scriptedInstance("omega", {
          gateDir: dirs.gateDir,
          stateDir: `${dirs.home}/scripted-state`,
          models: ["omega-1"],
        }),
      ],
    });
    const { token } = lab.registry.issueClientToken({
      ttlMs: 3_600_000,
      capabilities: ["orchestration:operate"],
      projects: [lab.projectId],
      ceiling: { runtimeMode: "auto-accept-edits", interactionMode: "default" },
    });
    api = createClient<paths>({
      baseUrl: `http://127.0.0.1:${lab.server.port}`,
      headers: { Authorization: `Bearer ${token}` },
    });
  });
  afterAll(async () => lab.stop());

  it("runs the router scenario: providers, a planner and three children, send, wait, read", async () => {
    const providers = await api.GET("/api/v1/providers");
    expect(providers.response.status).toBe(200);
    const runnable = providers
      .data!.providers.filter((provider) => provider.canRunChildTasks)
      .map((provider) => provider.providerInstanceId);
    expect(runnable).toEqual(["alpha", "beta", "omega"]);

    const planner = await api.POST("/api/v1/threads", {
      params: { header: { "Idempotency-Key": "router:planner" } },
      body: { projectId: lab.projectId, threads: [{ title: "planner", target: { providerInstanceId: "alpha" } }] },
    });
    expect(planner.response.status).toBe(201);
    const plannerId = planner.data!.threads[0]!.thread.threadId;

    const children = await api.POST("/api/v1/threads", {
      params: { header: { "Idempotency-Key": "router:children" } },
      body: {
        projectId: lab.projectId,
        threads: runnable.map((providerInstanceId) => ({
          title: `child on ${providerInstanceId}`,
          prompt: `@@reply ${providerInstanceId} found the bug`,
          target: { providerInstanceId },
        })),
      },
    });
    expect(children.response.status).toBe(201);
    const childThreads = children.data!.threads.map((entry) => entry.thread);
    expect(
      childThreads.map((thread) => [thread.providerInstanceId, thread.runtimeMode, thread.creationSource]),
    ).toEqual([
      ["alpha", "auto-accept-edits", "api"],
      ["beta", "auto-accept-edits", "api"],
      ["omega", "auto-accept-edits", "api"],
    ]);

    const results: string[] = [];
    for (const child of childThreads) {
      const waited = await api.GET("/api/v1/threads/{threadId}/wait", {
        params: { path: { threadId: child.threadId } },
      });
      expect(waited.data).toMatchObject({ status: "completed", waitTimedOut: false });
      results.push(waited.data!.summary!);
    }
    expect(results).toEqual(["alpha found the bug", "beta found the bug", "omega found the bug"]);

    const sent = await api.POST("/api/v1/threads/{threadId}/messages", {
      params: { path: { threadId: plannerId }, header: { "Idempotency-Key": "router:report-1" } },
      body: { message: `Children reported: ${results.join("; ")} @@reply plan: fix it once` },
    });
    expect(sent.data).toMatchObject({ delivery: "started", asked: "auto", degraded: false, replayed: false });
    const done = await api.GET("/api/v1/threads/{threadId}/wait", {
      params: { path: { threadId: plannerId }, query: { runId: sent.data!.runId } },
    });
    expect(done.data).toMatchObject({ status: "completed", summary: "plan: fix it once" });

    const read = await api.GET("/api/v1/threads/{threadId}", {
      params: { path: { threadId: plannerId }, query: { view: "messages", limit: 10 } },
    });
    expect(read.data!.items.map((item) => [item.role, item.text])).toEqual([
      ["user", `Children reported: ${results.join("; ")} @@reply plan: fix it once`],
      ["assistant", "plan: fix it once"],
    ]);
    const listed = await api.GET("/api/v1/threads", {
      params: { query: { projectId: lab.projectId, runStatus: ["completed"] } },
    });
    expect(listed.data!.threads.map((thread) => thread.title).sort()).toEqual([
      "child on alpha",
      "child on beta",
      "child on omega",
      "planner",
    ]);

    // A retry of the send with the same key is the same message, not a second turn.
    const retried = await api.POST("/api/v1/threads/{threadId}/messages", {
      params: { path: { threadId: plannerId }, header: { "Idempotency-Key": "router:report-1" } },
      body: { message: `Children reported: ${results.join("; ")} @@reply plan: fix it once` },
    });
    expect(retried.data).toMatchObject({ runId: sent.data!.runId, replayed: true });

    // Failures come back typed, as the document describes them.
    const missing = await api.GET("/api/v1/threads/{threadId}", { params: { path: { threadId: "thread_nope" } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toMatchObject({ error: { code: "thread_not_found", details: { threadId: "thread_nope" } } });
    const tooBroad = await api.POST("/api/v1/threads", {
      body: {
        projectId: lab.projectId,
        threads: [{ target: { providerInstanceId: "alpha" }, runtimeMode: "full-access" }],
      },
    });
    expect(tooBroad.response.status).toBe(403);
    expect(tooBroad.error?.error.code).toBe("runtime_mode_escalation_denied");
  });
});
