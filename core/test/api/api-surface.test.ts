import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createLogger } from "../../src/logging/logger.js";
import { defineRoute } from "../../src/transports/http/api/index.js";
import { defaultProviders, McpLab } from "../support/mcp-lab.js";
import { scriptedInstance } from "../support/test-host.js";
import { ApiClient, failure, ok, type FailureBody } from "../support/api-client.js";
import { FULL_ACCESS_CEILING, startApiLab } from "../support/api-lab.js";
import { connectMcp, mustCall } from "../support/mcp-client.js";

/**
 * Every endpoint of /api/v1 driven with a plain HTTP client over the real server: the happy
 * path, the typed failures, and the transport rules (tokens, Host/Origin, bodies, URLs).
 */
describe("HTTP API", () => {
  let lab: McpLab;
  let admin: ApiClient;
  let adminToken: string;

  beforeAll(async () => {
    ({
      lab,
      client: admin,
      token: adminToken,
    } = await startApiLab(
      { capabilities: ["orchestration:operate", "orchestration:approve"], ceiling: FULL_ACCESS_CEILING },
      { server: { maxRequestBodyBytes: 64 * 1024 } },
    ));
  });
  afterAll(async () => lab.stop());

  const pendingRequest = async (threadId: string) => {
    const request = await lab.host.waiter.waitFor(
      () => lab.host.store.select("runtimeRequest", "thread_id = ? AND status = 'pending'", [threadId])[0] ?? null,
      { timeoutMs: 10_000 },
    );
    if (request === null) throw new Error(`thread ${threadId} never asked`);
    return request;
  };

  describe("authentication and transport rules", () => {
    it("serves the OpenAPI document without a token and refuses everything else without a valid one", async () => {
      const anonymous = admin.with(null);
      const document = await ok(anonymous.get("/openapi.json"));
      expect(document).toMatchObject({ openapi: "3.1.0", info: { title: "Switchyard API" } });

      const missing = await anonymous.get("/projects");
      expect(missing.status).toBe(401);
      expect(String(missing.headers["www-authenticate"])).toMatch(/^Bearer /);
      expect((missing.body as FailureBody).error).toMatchObject({
        code: "invalid_token",
        message: expect.stringContaining("Authorization"),
      });
      expect(await failure(admin.with("sy_not_a_real_token_at_all_0123456789").get("/projects"))).toMatchObject({
        status: 401,
        code: "invalid_token",
        message: "Unknown token.",
      });
      expect(await failure(admin.with(null).get("/projects", {}, { authorization: "Basic abc" }))).toMatchObject({
        status: 401,
        code: "invalid_token",
      });

      const revoked = lab.registry.issueClientToken({ ttlMs: 60_000, capabilities: ["orchestration:read"] });
      expect((await admin.with(revoked.token).get("/projects")).status).toBe(200);
      lab.registry.revoke(revoked.id);
      expect(await failure(admin.with(revoked.token).get("/projects"))).toMatchObject({
        status: 401,
        code: "invalid_token",
        message: expect.stringContaining("revoked"),
      });

      // Without a token nobody learns which paths exist; with one, a path or method that does not exist is named.
      expect((await anonymous.get("/nothing-here")).status).toBe(401);
      expect(await failure(admin.get("/nothing-here"))).toMatchObject({ status: 404, code: "route_not_found" });
      const wrongMethod = await admin.send("DELETE", "/threads", undefined);
      expect(wrongMethod.status).toBe(405);
      expect(wrongMethod.headers.allow).toBe("GET, POST");
      expect((wrongMethod.body as FailureBody).error.code).toBe("method_not_allowed");
    });

    it("refuses a token in the URL, whatever the parameter is called", async () => {
      expect(await failure(admin.get("/projects", { access_token: adminToken }))).toMatchObject({
        status: 400,
        code: "invalid_request",
        message: expect.stringContaining("Authorization: Bearer"),
      });
      expect(await failure(admin.get("/projects", { token: "x" }))).toMatchObject({
        status: 400,
        code: "invalid_request",
        details: { parameter: "token" },
      });
      expect(await failure(admin.get(`/threads/${adminToken}`))).toMatchObject({
        status: 400,
        code: "invalid_request",
      });
      // An id that holds `sy_` (a derived id is base64url) is no token: its thread stays reachable.
      expect(await failure(admin.get("/threads/thread:api:Qxsy_Ab3-dEf_9hIjKlMn"))).toMatchObject({
        status: 404,
      });
    });

    it("holds the same Host and Origin rules as /mcp, answering in the API's failure shape", async () => {
      expect(await failure(admin.get("/projects", {}, { host: "evil.example" }))).toMatchObject({
        status: 403,
        code: "host_not_allowed",
      });
      expect(await failure(admin.get("/projects", {}, { origin: "http://evil.example" }))).toMatchObject({
        status: 403,
        code: "host_not_allowed",
      });
      expect((await admin.get("/projects", {}, { origin: `http://localhost:${lab.server.port}` })).status).toBe(200);
    });

    it("answers a read token capability_denied on every operation that changes something", async () => {
      const reader = admin.with(
        lab.registry.issueClientToken({ ttlMs: 60_000, capabilities: ["orchestration:read"] }).token,
      );
      const thread = (
        await lab.host.threads.createThread({
          projectId: lab.projectId,
          providerInstanceId: "alpha",
          createdBy: "user",
          creationSource: "cli",
        })
      ).thread;
      for (const [path, body] of [
        ["/threads", { projectId: lab.projectId, threads: [{ target: { providerInstanceId: "alpha" } }] }],
        [`/threads/${thread.id}/messages`, { message: "hi" }],
        [`/threads/${thread.id}/interrupt`, {}],
        [`/threads/${thread.id}/stop`, {}],
        [`/threads/${thread.id}/resume`, {}],
        ["/tasks/task:x/cancel", {}],
      ] as const) {
        expect(await failure(reader.post(path, body)), path).toMatchObject({
          status: 403,
          code: "capability_denied",
          details: { required: "orchestration:operate" },
        });
      }
      expect((await reader.get(`/threads/${thread.id}`)).status).toBe(200);
    });
  });

  describe("routes other features add", () => {
    it("registers a route on the running server: authenticated, validated, scoped and in the document", async () => {
      const route = defineRoute({
        method: "GET",
        path: "/threads/{threadId}/echo",
        operationId: "echoThread",
        summary: "Echo a thread id (test route)",
        tag: "test",
        requires: "orchestration:read",
        params: z.object({ threadId: z.string().min(1) }).strict(),
        query: z.object({ loud: z.boolean().optional() }).strict(),
        input: z.object({ threadId: z.string().min(1), loud: z.boolean().optional() }).strict(),
        output: z.object({ threadId: z.string(), loud: z.boolean(), caller: z.string() }),
        outputName: "Echo",
        handle: (input, { caller }) => ({ threadId: input.threadId, loud: input.loud ?? false, caller: caller.kind }),
      });
      const before = lab.server.api.openApiDocument() as { paths: Record<string, unknown> };
      lab.server.api.register(route);
      expect(() => lab.server.api.register(route)).toThrow(/registered twice/);
      expect(await ok(admin.get("/threads/t-1/echo", { loud: true }))).toEqual({
        threadId: "t-1",
        loud: true,
        caller: "client",
      });
      expect(await failure(admin.get("/threads/t-1/echo", { loud: "very" }))).toMatchObject({
        status: 400,
        details: { field: "query.loud" },
      });
      expect((await admin.with(null).get("/threads/t-1/echo")).status).toBe(401);
      const after = await ok(admin.get("/openapi.json"));
      expect(before.paths["/api/v1/threads/{threadId}/echo"]).toBeUndefined();
      expect(after.paths["/api/v1/threads/{threadId}/echo"].get.operationId).toBe("echoThread");
      expect(after.components.schemas.Echo).toBeDefined();
      // Its threadId is checked against a scoped token's projects like every other route's.
      const elsewhere = await lab.host.projects.add(lab.t.home, "elsewhere");
      const scoped = admin.with(
        lab.registry.issueClientToken({ ttlMs: 60_000, capabilities: ["orchestration:read"], projects: [elsewhere.id] })
          .token,
      );
      const thread = (
        await lab.host.threads.createThread({
          projectId: lab.projectId,
          providerInstanceId: "alpha",
          createdBy: "user",
          creationSource: "cli",
        })
      ).thread;
      expect(await failure(scoped.get(`/threads/${thread.id}/echo`))).toMatchObject({
        status: 404,
        code: "thread_not_found",
      });
    });
  });

  describe("bad input", () => {
    it("validates query, path and body with the shared schemas, naming the field", async () => {
      expect(await failure(admin.get("/threads", { projectId: lab.projectId, limit: "many" }))).toMatchObject({
        status: 400,
        code: "invalid_request",
        details: { field: "query.limit" },
      });
      expect(await failure(admin.get("/threads", { projectId: lab.projectId, limit: 101 }))).toMatchObject({
        status: 400,
        details: { field: "query.limit" },
      });
      expect(await failure(admin.get("/threads", { projectId: lab.projectId, bogus: "1" }))).toMatchObject({
        status: 400,
        code: "invalid_request",
        message: expect.stringContaining("bogus"),
      });
      expect(await failure(admin.get("/threads", { projectId: lab.projectId, limit: ["1", "2"] }))).toMatchObject({
        status: 400,
        message: expect.stringContaining("given 2 times"),
      });
      expect(await failure(admin.get("/threads"))).toMatchObject({
        status: 400,
        code: "invalid_request",
        message: expect.stringContaining("projectId is required"),
      });
      expect(await failure(admin.get("/threads", { projectId: "project_nope" }))).toMatchObject({
        status: 400,
        code: "invalid_request",
        details: { projectId: "project_nope" },
      });

      const thread = (
        await lab.host.threads.createThread({
          projectId: lab.projectId,
          providerInstanceId: "alpha",
          createdBy: "user",
          creationSource: "cli",
        })
      ).thread;
      expect(await failure(admin.post(`/threads/${thread.id}/messages`, {}))).toMatchObject({
        status: 400,
        code: "invalid_request",
        details: { field: "body.message" },
      });
      expect(
        await failure(admin.post(`/threads/${thread.id}/messages`, { message: "x", mode: "shout" })),
      ).toMatchObject({ status: 400, details: { field: "body.mode" } });
      // The thread comes from the path; a body naming another one is refused, not obeyed.
      expect(
        await failure(admin.post(`/threads/${thread.id}/messages`, { message: "x", threadId: "thread_other" })),
      ).toMatchObject({ status: 400, message: expect.stringContaining("threadId") });
      expect(await failure(admin.get(`/threads/${thread.id}`, { view: "everything" }))).toMatchObject({
        status: 400,
        details: { field: "query.view" },
      });
    });

    it("refuses bodies that are not JSON, too large, mislabelled or carry a __proto__ key", async () => {
      const thread = (
        await lab.host.threads.createThread({
          projectId: lab.projectId,
          providerInstanceId: "alpha",
          createdBy: "user",
          creationSource: "cli",
        })
      ).thread;
      const path = `/threads/${thread.id}/messages`;
      expect(
        await failure(admin.send("POST", path, "{not json", { "content-type": "application/json" })),
      ).toMatchObject({ status: 400, code: "invalid_request", details: { problem: "not_json" } });
      expect(
        await failure(admin.send("POST", path, '{"message":"x"}', { "content-type": "text/plain" })),
      ).toMatchObject({ status: 415, code: "invalid_request" });
      expect(await failure(admin.post(path, { message: "x".repeat(70 * 1024) }))).toMatchObject({
        status: 413,
        code: "invalid_request",
        details: { problem: "too_large" },
      });
      expect(
        await failure(
          admin.send("POST", path, '{"message":"x","__proto__":{"polluted":true}}', {
            "content-type": "application/json",
          }),
        ),
      ).toMatchObject({
        status: 400,
        code: "invalid_request",
        details: { field: "body.__proto__" },
      });
      expect(
        await failure(admin.send("GET", `/threads?projectId=${lab.projectId}&__proto__=x`, undefined)),
      ).toMatchObject({ status: 400, code: "invalid_request", details: { field: "query.__proto__" } });
      // Nothing of the refused requests reached the thread.
      expect(lab.host.store.select("run", "thread_id = ?", [thread.id])).toHaveLength(0);
    });

    it("takes Idempotency-Key only where there is a retry key, and only one retry key", async () => {
      const thread = (
        await lab.host.threads.createThread({
          projectId: lab.projectId,
          providerInstanceId: "alpha",
          createdBy: "user",
          creationSource: "cli",
        })
      ).thread;
      expect(
        await failure(admin.post(`/threads/${thread.id}/interrupt`, {}, { "idempotency-key": "k" })),
      ).toMatchObject({ status: 400, details: { field: "header.Idempotency-Key" } });
      expect(
        await failure(
          admin.post(
            `/threads/${thread.id}/messages`,
            { message: "x", clientRequestId: "a" },
            { "idempotency-key": "b" },
          ),
        ),
      ).toMatchObject({
        status: 400,
        message: expect.stringContaining("differ"),
      });
      expect(
        await failure(
          admin.post(`/threads/${thread.id}/messages`, { message: "x" }, { "idempotency-key": "k".repeat(201) }),
        ),
      ).toMatchObject({ status: 400, details: { field: "header.Idempotency-Key" } });
    });
  });

  describe("projects, providers and usage", () => {
    it("lists projects with their folders, the provider snapshot, and usage per thread tree, project and every project (unknown where not reported)", async () => {
      await ok(
        admin.post("/threads", {
          projectId: lab.projectId,
          threads: [{ title: "counted", target: { providerInstanceId: "beta" } }],
        }),
        201,
      );
      const { projects } = await ok(admin.get("/projects"));
      // How many threads it holds, children included: what the listing counts, so a client can ask for every page at once.
      const listed = await ok(admin.get("/threads", { projectId: lab.projectId, includeSubagents: true, limit: 1 }));
      expect(listed.total).toBeGreaterThan(0);
      expect(projects).toContainEqual({
        projectId: lab.projectId,
        name: "main",
        rootPath: expect.any(String),
        scratch: false,
        threadCount: listed.total,
      });

      const { providers } = await ok(admin.get("/providers"));
      const byId = Object.fromEntries(
        (providers as { providerInstanceId: string }[]).map((p) => [p.providerInstanceId, p]),
      );
      expect(byId.alpha).toMatchObject({ canRunChildTasks: true, steering: "native" });
      expect(byId.beta).toMatchObject({
        canRunChildTasks: true,
        steering: "interrupt_restart",
        runtimeModes: ["approval-required", "auto-accept-edits"],
      });
      expect(byId.gamma).toMatchObject({ canRunChildTasks: false, constraints: ["disabled in the config"] });
      const searched = await ok(admin.get("/providers", { search: "beta-12" }));
      expect(
        (searched.providers as { providerInstanceId: string; models: { id: string }[] }[])
          .find((p) => p.providerInstanceId === "beta")!
          .models.map((m) => m.id),
      ).toContain("beta-12");

      // Usage as the scripted provider reported it: 120 + 30 tokens on one turn, nothing on another.
      const counted = (
        await lab.host.threads.createThread({
          projectId: lab.projectId,
          providerInstanceId: "alpha",
          prompt: "@@usage in=120 out=30 @@reply counted",
          createdBy: "user",
          creationSource: "cli",
        })
      ).thread.id;
      await lab.host.threads.waitForRun({ threadId: counted, timeoutMs: 10_000 });
      const silent = (
        await lab.host.threads.createThread({
          projectId: lab.projectId,
          providerInstanceId: "alpha",
          prompt: "@@reply silent",
          createdBy: "user",
          creationSource: "cli",
        })
      ).thread.id;
      await lab.host.threads.waitForRun({ threadId: silent, timeoutMs: 10_000 });
      expect(await ok(admin.get("/usage", { threadId: counted }))).toMatchObject({
        scope: "thread",
        threadId: counted,
        own: { status: "reported", tokens: { input: 120, output: 30, total: 150 } },
        subtree: { tokens: { total: 150 } },
        budgets: [],
      });
      expect(await ok(admin.get("/usage", { threadId: silent }))).toMatchObject({
        scope: "thread",
        own: { status: "unknown", tokens: null, cost: { usd: null, basis: "unpriced" } },
      });
      const project = await ok(admin.get("/usage", { projectId: lab.projectId }));
      expect(project).toMatchObject({
        scope: "project",
        projectId: lab.projectId,
        total: { status: "partial", turns: { unknown: expect.any(Number) } },
      });
      expect(
        (project.rootThreads as { threadId: string; own: { tokens: { total: number } | null } }[]).find(
          (thread) => thread.threadId === counted,
        )?.own.tokens?.total,
      ).toBe(150);
      const all = await ok(admin.get("/usage"));
      expect(all).toMatchObject({
        scope: "all",
        projects: expect.arrayContaining([expect.objectContaining({ projectId: lab.projectId })]),
      });
      expect(all.total.tokens.total).toBeGreaterThanOrEqual(150);
      expect(await failure(admin.get("/usage", { threadId: "thread_nope" }))).toMatchObject({
        status: 404,
        code: "thread_not_found",
      });
    });
  });

  describe("threads", () => {
    it("creates threads, and Idempotency-Key is the same retry key as clientRequestId over MCP", async () => {
      const body = {
        projectId: lab.projectId,
        threads: [
          { prompt: "@@reply first answer", title: "worker one", target: { providerInstanceId: "alpha" } },
          { title: "idle worker", target: { providerInstanceId: "beta" } },
        ],
      };
      const created = await ok(admin.post("/threads", body, { "idempotency-key": "router-batch-1" }), 201);
      expect(created.replayed).toBe(false);
      expect(created.threads).toHaveLength(2);
      expect(created.threads[0]).toMatchObject({
        index: 0,
        runId: expect.any(String),
        thread: { title: "worker one", providerInstanceId: "alpha", creationSource: "api", projectId: lab.projectId },
      });
      expect(created.threads[1]).toMatchObject({
        index: 1,
        runId: null,
        thread: { providerInstanceId: "beta", status: "idle" },
      });
      // The token's ceiling is full-access: threads without modes get it, stepped down to what the provider offers.
      expect(created.threads[0].thread.runtimeMode).toBe("full-access");
      expect(created.threads[1].thread.runtimeMode).toBe("auto-accept-edits");
      expect(created.threads[1].notes.join(" ")).toContain("stepped down");

      const again = await ok(admin.post("/threads", body, { "idempotency-key": "router-batch-1" }), 201);
      expect(again.replayed).toBe(true);
      expect(again.threads.map((t: { thread: { threadId: string } }) => t.thread.threadId)).toEqual(
        created.threads.map((t: { thread: { threadId: string } }) => t.thread.threadId),
      );

      const mcp = await connectMcp(lab.server.mcpUrl, adminToken);
      try {
        const overMcp = await mustCall<{ replayed: boolean; threads: { thread: { threadId: string } }[] }>(
          mcp,
          "create_threads",
          { ...body, clientRequestId: "router-batch-1" },
        );
        expect(overMcp.replayed).toBe(true);
        expect(overMcp.threads.map((t) => t.thread.threadId)).toEqual(
          created.threads.map((t: { thread: { threadId: string } }) => t.thread.threadId),
        );
      } finally {
        await mcp.close();
      }
      expect(
        await failure(
          admin.post("/threads", { ...body, threads: [body.threads[0]] }, { "idempotency-key": "router-batch-1" }),
        ),
      ).toMatchObject({ status: 400, code: "invalid_request", message: expect.stringContaining("already used") });
      expect(lab.host.store.select("thread", "title = ?", ["worker one"])).toHaveLength(1);
    });

    it("answers typed failures for providers and models", async () => {
      const create = (target: Record<string, string> | undefined) =>
        failure(admin.post("/threads", { projectId: lab.projectId, threads: [{ ...(target ? { target } : {}) }] }));
      expect(await create({ providerInstanceId: "gamma" })).toMatchObject({
        status: 409,
        code: "provider_unavailable",
        details: { providerInstanceId: "gamma" },
      });
      expect(await create({ providerInstanceId: "nope" })).toMatchObject({ status: 409, code: "provider_unavailable" });
      expect(await create({ providerInstanceId: "alpha", model: "alpha-huge" })).toMatchObject({
        status: 422,
        code: "model_unavailable",
        details: { model: "alpha-huge" },
      });
      expect(await create(undefined)).toMatchObject({
        status: 400,
        code: "invalid_request",
        message: expect.stringContaining("must name a target provider"),
      });
    });

    it("lists and reads threads with t3_thread_read's paging and bounds", async () => {
      const created = await ok(
        admin.post("/threads", {
          projectId: lab.projectId,
          threads: [{ prompt: "@@reply paged answer", title: "paged", target: { providerInstanceId: "alpha" } }],
        }),
        201,
      );
      const threadId = created.threads[0].thread.threadId as string;
      const waited = await ok(admin.get(`/threads/${threadId}/wait`));
      expect(waited).toMatchObject({
        threadId,
        status: "completed",
        summary: "paged answer",
        waitTimedOut: false,
        threadLink: expect.stringContaining(threadId),
      });

      const whole = await ok(admin.get(`/threads/${threadId}`));
      expect(whole.items.map((item: { role: string; text: string }) => [item.role, item.text])).toEqual([
        ["user", "@@reply paged answer"],
        ["assistant", "paged answer"],
      ]);
      expect(whole.characterBudget).toBe(30_000);
      // A token reads from the oldest item; nextPosition continues, beforePosition goes back.
      const first = await ok(admin.get(`/threads/${threadId}`, { limit: 1 }));
      expect(first).toMatchObject({ hasMore: true, items: [{ role: "user" }] });
      const second = await ok(admin.get(`/threads/${threadId}`, { limit: 1, afterPosition: first.nextPosition }));
      expect(second).toMatchObject({ hasMore: false, items: [{ role: "assistant" }] });
      const back = await ok(admin.get(`/threads/${threadId}`, { limit: 1, beforePosition: second.items[0].position }));
      expect(back.items[0].role).toBe("user");
      const activity = await ok(admin.get(`/threads/${threadId}`, { view: "activity", maxChars: 2_000 }));
      expect(activity.characterBudget).toBe(2_000);
      expect(JSON.stringify(activity).length).toBeLessThanOrEqual(2_000);
      expect(await failure(admin.get(`/threads/${threadId}`, { afterPosition: 0, beforePosition: 1 }))).toMatchObject({
        status: 400,
        code: "invalid_request",
      });

      const completed = await ok(
        admin.get("/threads", { projectId: lab.projectId, runStatus: ["completed"], title: "paged" }),
      );
      expect(completed.threads.map((t: { threadId: string }) => t.threadId)).toEqual([threadId]);
      const both = await ok(admin.get("/threads", { projectId: lab.projectId, runStatus: "completed,idle", limit: 1 }));
      expect(both).toMatchObject({ limit: 1, offset: 0, hasMore: true, nextOffset: 1 });
      expect(await ok(admin.get("/threads", { projectId: lab.projectId, snoozed: true }))).toMatchObject({
        threads: [],
        total: 0,
      });

      expect(await failure(admin.get("/threads/thread_nope"))).toMatchObject({
        status: 404,
        code: "thread_not_found",
        details: { threadId: "thread_nope" },
      });
      expect(await failure(admin.get(`/threads/${threadId}/wait`, { runId: "run_nope" }))).toMatchObject({
        status: 404,
        code: "run_not_found",
      });
    });

    it("sends in every mode, waits, interrupts, stops and resumes", async () => {
      const created = await ok(
        admin.post("/threads", {
          projectId: lab.projectId,
          threads: [{ prompt: "@@gate api-first @@reply first", target: { providerInstanceId: "alpha" } }],
        }),
        201,
      );
      const threadId = created.threads[0].thread.threadId as string;
      const firstRun = created.threads[0].runId as string;
      await lab.waitForLiveTurn(threadId);

      // A wait that cannot end yet reports the run and cancels nothing.
      expect(await ok(admin.get(`/threads/${threadId}/wait`, { timeoutMs: 0 }))).toMatchObject({
        runId: firstRun,
        status: "running",
        waitTimedOut: true,
      });
      const queued = await ok(
        admin.post(
          `/threads/${threadId}/messages`,
          { message: "@@reply from the queue", mode: "queue" },
          { "idempotency-key": "queue-1" },
        ),
      );
      expect(queued).toMatchObject({
        delivery: "queued",
        asked: "queue",
        action: "queue",
        degraded: false,
        replayed: false,
      });
      expect(
        await ok(
          admin.post(
            `/threads/${threadId}/messages`,
            { message: "@@reply from the queue", mode: "queue" },
            { "idempotency-key": "queue-1" },
          ),
        ),
      ).toMatchObject({ runId: queued.runId, replayed: true });
      const steered = await ok(admin.post(`/threads/${threadId}/messages`, { message: "also this", mode: "steer" }));
      expect(steered).toMatchObject({ delivery: "steered", runId: firstRun });

      const stopped = await ok(admin.post(`/threads/${threadId}/stop`, { reason: "router changed its mind" }));
      expect(stopped).toMatchObject({
        interruptedRunId: firstRun,
        heldRunIds: [queued.runId],
        replayed: false,
        thread: { threadId },
      });
      expect(await ok(admin.get(`/threads/${threadId}/wait`, { runId: firstRun }))).toMatchObject({
        status: "interrupted",
      });
      // Stopped: the queued run is held and does not start.
      expect(lab.host.store.get("run", queued.runId)).toMatchObject({ status: "queued", held: true });

      const resumed = await ok(admin.post(`/threads/${threadId}/resume`, undefined, { "idempotency-key": "resume-1" }));
      expect(resumed).toMatchObject({ resumedRunIds: [queued.runId], replayed: false });
      expect(await ok(admin.post(`/threads/${threadId}/resume`, {}, { "idempotency-key": "resume-1" }))).toMatchObject({
        resumedRunIds: [queued.runId],
        replayed: true,
      });
      expect(await ok(admin.get(`/threads/${threadId}/wait`))).toMatchObject({
        runId: queued.runId,
        status: "completed",
        summary: "from the queue",
      });

      expect(await ok(admin.post(`/threads/${threadId}/interrupt`))).toMatchObject({
        status: "no_active_run",
        runId: null,
      });
      expect(await ok(admin.post(`/threads/${threadId}/interrupt`, { runId: firstRun }))).toMatchObject({
        status: "already_terminal",
        runStatus: "interrupted",
      });
      expect(await failure(admin.post(`/threads/${threadId}/messages`, { message: "x", mode: "steer" }))).toMatchObject(
        { status: 409, code: "thread_not_sendable" },
      );

      const restartable = await ok(
        admin.post(`/threads/${threadId}/messages`, { message: "@@gate api-second @@reply second" }),
      );
      expect(restartable.delivery).toBe("started");
      await lab.waitForLiveTurn(threadId);
      const restarted = await ok(
        admin.post(`/threads/${threadId}/messages`, { message: "@@reply restarted answer", mode: "restart" }),
      );
      expect(restarted).toMatchObject({ delivery: "restarted", asked: "restart" });
      expect(await ok(admin.get(`/threads/${threadId}/wait`))).toMatchObject({
        status: "completed",
        summary: "restarted answer",
      });

      const third = await ok(
        admin.post(`/threads/${threadId}/messages`, { message: "@@gate api-third @@reply third" }),
      );
      await lab.waitForLiveTurn(threadId);
      expect(await ok(admin.post(`/threads/${threadId}/interrupt`, {}))).toMatchObject({
        status: "interrupt_requested",
        runId: third.runId,
      });
      expect(await ok(admin.get(`/threads/${threadId}/wait`))).toMatchObject({
        runId: third.runId,
        status: "interrupted",
      });
      lab.release("api-first");
      lab.release("api-second");
      lab.release("api-third");
    });
  });

  describe("delegated tasks and pending questions", () => {
    it("reads and cancels a task an agent delegated", async () => {
      const planner = await lab.liveAgent({ title: "planner" });
      const task = await mustCall<{ taskId: string; childThreadId: string }>(planner.client, "delegate_task", {
        task: "@@gate api-task @@reply child done",
        mode: "async",
      });
      const status = await ok(admin.get(`/tasks/${task.taskId}`));
      expect(status).toMatchObject({ taskId: task.taskId, childThreadId: task.childThreadId, workState: "working" });
      const cancelled = await ok(admin.post(`/tasks/${task.taskId}/cancel`, { reason: "router cancelled" }));
      expect(cancelled).toMatchObject({ taskId: task.taskId, cancelled: true, reason: "router cancelled" });
      const settled = await ok(admin.get(`/threads/${task.childThreadId}/wait`));
      expect(settled.status).toMatch(/^(interrupted|cancelled)$/);
      expect(await failure(admin.get("/tasks/task_nope"))).toMatchObject({ status: 404, code: "task_not_found" });
      expect(await failure(admin.post("/tasks/task_nope/cancel"))).toMatchObject({
        status: 404,
        code: "task_not_found",
      });
      planner.release();
      lab.release("api-task");
    });

    it("lists, reads and answers a thread's question", async () => {
      const created = await ok(
        admin.post("/threads", {
          projectId: lab.projectId,
          threads: [{ prompt: "@@ask Which port? @@reply configured", target: { providerInstanceId: "alpha" } }],
        }),
        201,
      );
      const threadId = created.threads[0].thread.threadId as string;
      const asked = await pendingRequest(threadId);
      const { requests } = await ok(admin.get(`/threads/${threadId}/pending-requests`));
      expect(requests).toEqual([
        expect.objectContaining({
          requestId: asked.id,
          kind: "user_input",
          status: "pending",
          questions: [{ id: "q1", question: "Which port?" }],
          approval: null,
        }),
      ]);
      expect(await ok(admin.get(`/threads/${threadId}/pending-requests/${asked.id}`))).toMatchObject({
        requestId: asked.id,
        kind: "user_input",
      });
      expect(
        await failure(admin.post(`/threads/${threadId}/pending-requests/${asked.id}/respond`, { answers: {} })),
      ).toMatchObject({ status: 400, message: expect.stringContaining("q1") });
      expect(
        await failure(admin.post(`/threads/${threadId}/pending-requests/${asked.id}/respond`, { decision: "accept" })),
      ).toMatchObject({ status: 400, message: expect.stringContaining("answers") });
      expect(
        await ok(admin.post(`/threads/${threadId}/pending-requests/${asked.id}/respond`, { answers: { q1: "8080" } })),
      ).toMatchObject({ requestId: asked.id });
      expect(await ok(admin.get(`/threads/${threadId}/wait`))).toMatchObject({
        status: "completed",
        summary: "configured",
      });
      expect(
        await failure(
          admin.post(`/threads/${threadId}/pending-requests/${asked.id}/respond`, { answers: { q1: "8080" } }),
        ),
      ).toMatchObject({ status: 400, message: expect.stringContaining("already") });
      expect(await failure(admin.get(`/threads/${threadId}/pending-requests/request_nope`))).toMatchObject({
        status: 400,
        code: "invalid_request",
      });
      expect(await failure(admin.get("/threads/thread_nope/pending-requests"))).toMatchObject({
        status: 404,
        code: "thread_not_found",
      });
    });
  });
});

describe("HTTP API logs", () => {
  it("never logs a token, a URL's query or a body, whatever the request did", async () => {
    const lines: string[] = [];
    const lab = await McpLab.start({
      logger: createLogger({
        level: "debug",
        format: "json",
        destination: { write: (line: string) => void lines.push(line) },
      }),
    });
    try {
      const { token } = lab.registry.issueClientToken({
        ttlMs: 60_000,
        capabilities: ["orchestration:operate"],
        ceiling: { runtimeMode: "full-access", interactionMode: "default" },
      });
      const client = new ApiClient(lab.server.apiUrl, token);
      const marker = "query-marker-3f9a";
      await client.get("/threads", { projectId: lab.projectId, title: marker });
      await client.get("/threads", { projectId: lab.projectId, title: marker, limit: "many" });
      await client.get("/threads", { projectId: lab.projectId, access_token: token });
      await client.post("/threads", {
        projectId: lab.projectId,
        threads: [{ prompt: `@@reply body-marker-77c1`, target: { providerInstanceId: "alpha" } }],
      });
      await client.post("/threads", {
        projectId: lab.projectId,
        threads: [{ target: { providerInstanceId: "gamma" } }],
        clientRequestId: "body-marker-88d2",
      });
      await client.with(`${token}x`).get("/projects");
      await client.get(`/threads/${token}`);
      const text = lines.join("");
      expect(lines.some((line) => line.includes('"component":"api"'))).toBe(true);
      for (const secret of [token, token.slice(3), marker, "body-marker-77c1", "body-marker-88d2", "Bearer"])
        expect(text, secret).not.toContain(secret);
    } finally {
      await lab.stop();
    }
  });
});

describe("HTTP API on a provider that cannot interrupt a running turn", () => {
  let lab: McpLab;
  let admin: ApiClient;
  beforeAll(async () => {
    lab = await McpLab.start({
      providers: (dirs) => [
        ...defaultProviders(dirs),
        scriptedInstance("rigid", {
          gateDir: dirs.gateDir,
          capabilities: {
            turns: { terminalStatusQuality: "strong" },
            tools: { mcp: { http: true } },
            runtimeModes: ["approval-required", "auto-accept-edits", "full-access"],
          },
        }),
      ],
    });
    admin = new ApiClient(
      lab.server.apiUrl,
      lab.registry.issueClientToken({ ttlMs: 60_000, capabilities: ["orchestration:operate"] }).token,
    );
  });
  afterAll(async () => lab.stop());

  it("answers thread_not_interruptible for stop and interrupt, and task_not_cancellable for its task, holding nothing", async () => {
    const created = await ok(
      admin.post("/threads", {
        projectId: lab.projectId,
        threads: [{ prompt: "@@gate rigid-hold @@reply rigid done", target: { providerInstanceId: "rigid" } }],
      }),
      201,
    );
    const threadId = created.threads[0].thread.threadId as string;
    await lab.waitForLiveTurn(threadId);
    const queued = await ok(admin.post(`/threads/${threadId}/messages`, { message: "@@reply later", mode: "queue" }));
    for (const action of ["stop", "interrupt"]) {
      const answer = await admin.post(`/threads/${threadId}/${action}`, {});
      expect([
        action,
        answer.status,
        (answer.body as FailureBody).error.code,
        (answer.body as FailureBody).error.details.capability,
      ]).toEqual([action, 409, "thread_not_interruptible", "turns.interrupt"]);
    }
    expect(lab.host.store.get("thread", threadId)!.stopped).toBe(false);
    expect(lab.host.store.get("run", queued.runId)).toMatchObject({ status: "queued", held: false });

    const planner = await lab.liveAgent();
    const task = await mustCall<{ taskId: string; childThreadId: string }>(planner.client, "delegate_task", {
      task: "@@gate rigid-task @@reply child done",
      target: { providerInstanceId: "rigid" },
    });
    await lab.waitForLiveTurn(task.childThreadId);
    const cancel = await admin.post(`/tasks/${task.taskId}/cancel`, {});
    expect([cancel.status, (cancel.body as FailureBody).error.code]).toEqual([409, "task_not_cancellable"]);
    lab.release("rigid-hold");
    lab.release("rigid-task");
    expect(await ok(admin.get(`/threads/${threadId}/wait`, { runId: queued.runId }))).toMatchObject({
      status: "completed",
      summary: "later",
    });
    planner.release();
  });
});
