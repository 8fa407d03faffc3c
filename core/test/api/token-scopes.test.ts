import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type {
  CredentialCapability,
  ModeCeiling,
  ProjectScope,
} from "../../src/services/credentials/mcp-session-registry.js";
import { API_ROUTES } from "../../src/transports/http/api/index.js";
import { McpLab } from "../support/mcp-lab.js";
import { ApiClient, ok, type FailureBody } from "../support/api-client.js";
import { callTool, connectMcp, mustCall } from "../support/mcp-client.js";

/**
 * Scoped tokens: every endpoint holds a token's verbs, its projects and its mode ceiling, and
 * MCP client callers are held to the same ones.
 */
describe("scoped tokens", async () => {
  let lab: McpLab;
  let otherFolder: string;
  let otherProjectId: string;
  /** Threads and a task in the token's project, and in another one. */
  const fixture = {} as {
    mine: string;
    broad: string;
    broadQuestion: string;
    broadTask: string;
    theirs: string;
    theirQuestion: string;
    theirTask: string;
    theirSchedule: string;
    broadSchedule: string;
    releases: (() => void)[];
  };

  const token = (
    options: { capabilities?: CredentialCapability[]; projects?: ProjectScope; ceiling?: ModeCeiling } = {},
  ) =>
    lab.registry.issueClientToken({
      ttlMs: 3_600_000,
      capabilities: options.capabilities ?? ["orchestration:operate", "orchestration:approve"],
      ...(options.projects !== undefined ? { projects: options.projects } : {}),
      ...(options.ceiling !== undefined ? { ceiling: options.ceiling } : {}),
    }).token;
  const api = (value: string) => new ApiClient(lab.server.apiUrl, value);
  const pending = async (threadId: string) => {
    const request = await lab.host.waiter.waitFor(
      () => lab.host.store.select("runtimeRequest", "thread_id = ? AND status = 'pending'", [threadId])[0] ?? null,
      { timeoutMs: 10_000 },
    );
    if (request === null) throw new Error(`${threadId} never asked`);
    return request.id;
  };
  const asking = async (projectId: string, runtimeMode: "full-access" | "auto-accept-edits") =>
    (
      await lab.host.threads.createThread({
        projectId,
        providerInstanceId: "alpha",
        runtimeMode,
        prompt: "@@ask Which port? @@reply configured",
        createdBy: "user",
        creationSource: "cli",
      })
    ).thread.id;

  beforeAll(async () => {
    lab = await McpLab.start();
    otherFolder = mkdtempSync(join(tmpdir(), "switchyard-other-project-"));
    otherProjectId = (await lab.host.projects.add(otherFolder, "other")).id;
    fixture.releases = [];
    fixture.mine = (
      await lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId: "alpha",
        runtimeMode: "auto-accept-edits",
        createdBy: "user",
        creationSource: "cli",
      })
    ).thread.id;
    fixture.broad = (
      await lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId: "alpha",
        runtimeMode: "full-access",
        createdBy: "user",
        creationSource: "cli",
      })
    ).thread.id;
    fixture.theirs = (
      await lab.host.threads.createThread({
        projectId: otherProjectId,
        providerInstanceId: "alpha",
        runtimeMode: "auto-accept-edits",
        createdBy: "user",
        creationSource: "cli",
      })
    ).thread.id;
    fixture.broadQuestion = await asking(lab.projectId, "full-access");
    fixture.theirQuestion = await asking(otherProjectId, "auto-accept-edits");
    for (const [projectId, key] of [
      [lab.projectId, "broadTask"],
      [otherProjectId, "theirTask"],
    ] as const) {
      const planner = await lab.liveAgent({ projectId, runtimeMode: "full-access" });
      fixture.releases.push(planner.release);
      const task = await mustCall<{ taskId: string }>(planner.client, "delegate_task", {
        task: `@@gate scope-${key} @@reply done`,
        mode: "async",
      });
      fixture[key] = task.taskId;
      fixture.releases.push(() => lab.release(`scope-${key}`));
    }
    await pending(fixture.broadQuestion);
    await pending(fixture.theirQuestion);
    const schedule = await ok(
      api(token()).post("/scheduled-tasks", {
        projectId: otherProjectId,
        prompt: "@@reply scheduled",
        target: { providerInstanceId: "alpha" },
        schedule: { type: "webhook" },
      }),
      201,
    );
    fixture.theirSchedule = schedule.scheduledTaskId;
    const broadSchedule = await ok(
      api(token()).post("/scheduled-tasks", {
        projectId: lab.projectId,
        prompt: "@@reply broad",
        target: { providerInstanceId: "alpha" },
        runtimeMode: "full-access",
        schedule: { type: "webhook" },
      }),
      201,
    );
    fixture.broadSchedule = broadSchedule.scheduledTaskId;
  });
  afterAll(async () => {
    for (const release of fixture.releases) release();
    await lab.stop();
    rmSync(otherFolder, { recursive: true, force: true });
  });

  it("every operation refuses a token without the verb it needs, before reading its input", async () => {
    const byVerb = {
      read: api(token({ capabilities: ["orchestration:read"] })),
      approve: api(token({ capabilities: ["orchestration:approve"] })),
    };
    const seen: string[] = [];
    for (const route of API_ROUTES) {
      if (route.requires === null || route.requires === "orchestration:read") continue;
      const path = route.path.replace(/\{\w+\}/g, "not-even-looked-up");
      for (const [verb, client] of Object.entries(byVerb)) {
        const answer =
          route.method === "GET" ? await client.get(path) : await client.post(path, { not: "valid input" });
        expect(
          [answer.status, (answer.body as FailureBody).error.code, (answer.body as FailureBody).error.details.required],
          `${verb} ${route.operationId}`,
        ).toEqual([403, "capability_denied", route.requires]);
      }
      seen.push(route.operationId);
    }
    expect(seen.sort()).toEqual([
      "addProject",
      "applyChanges",
      "cancelTask",
      "createScheduledTask",
      "createThreads",
      "deleteScheduledTask",
      "discardChanges",
      "forkThread",
      "interruptThread",
      "resumeThread",
      "sendMessage",
      "setThreadSettled",
      "snoozeThread",
      "stopThread",
      "unsnoozeThread",
      "updateScheduledTask",
      "updateThread",
    ]);
  });

  it("every operation that names another project's thread, task or project refuses a project-scoped token", async () => {
    const scoped = api(
      token({ projects: [lab.projectId], ceiling: { runtimeMode: "full-access", interactionMode: "default" } }),
    );
    const theirRequest = await pending(fixture.theirQuestion);
    const cases: [string, () => Promise<{ status: number; body: unknown }>, number, string][] = [
      ["listThreads", () => scoped.get("/threads", { projectId: otherProjectId }), 403, "capability_denied"],
      ["listProfiles", () => scoped.get("/profiles", { projectId: otherProjectId }), 403, "capability_denied"],
      [
        "searchThreads",
        () => scoped.get("/threads/search", { projectId: otherProjectId, q: "anything" }),
        403,
        "capability_denied",
      ],
      [
        "createThreads",
        () =>
          scoped.post("/threads", {
            projectId: otherProjectId,
            threads: [{ target: { providerInstanceId: "alpha" } }],
          }),
        403,
        "capability_denied",
      ],
      ["readThread", () => scoped.get(`/threads/${fixture.theirs}`), 404, "thread_not_found"],
      [
        "sendMessage",
        () => scoped.post(`/threads/${fixture.theirs}/messages`, { message: "@@reply hijacked" }),
        404,
        "thread_not_found",
      ],
      ["waitForRun", () => scoped.get(`/threads/${fixture.theirs}/wait`), 404, "thread_not_found"],
      ["interruptThread", () => scoped.post(`/threads/${fixture.theirs}/interrupt`, {}), 404, "thread_not_found"],
      ["stopThread", () => scoped.post(`/threads/${fixture.theirs}/stop`, {}), 404, "thread_not_found"],
      ["resumeThread", () => scoped.post(`/threads/${fixture.theirs}/resume`, {}), 404, "thread_not_found"],
      [
        "setThreadSettled",
        () => scoped.post(`/threads/${fixture.theirs}/settled`, { settled: true }),
        404,
        "thread_not_found",
      ],
      [
        "updateThread",
        () => scoped.post(`/threads/${fixture.theirs}/update`, { action: "rename", title: "hijacked" }),
        404,
        "thread_not_found",
      ],
      [
        "snoozeThread",
        () => scoped.post(`/threads/${fixture.theirs}/snooze`, { until: "2999-01-01T00:00:00Z" }),
        404,
        "thread_not_found",
      ],
      ["unsnoozeThread", () => scoped.post(`/threads/${fixture.theirs}/unsnooze`, {}), 404, "thread_not_found"],
      ["forkThread", () => scoped.post(`/threads/${fixture.theirs}/fork`, {}), 404, "thread_not_found"],
      ["readThreadItem", () => scoped.get(`/threads/${fixture.theirs}/items/any-item`), 404, "thread_not_found"],
      ["listRemoteTasks", () => scoped.get(`/threads/${fixture.theirs}/remote-tasks`), 404, "thread_not_found"],
      ["readChanges", () => scoped.get(`/threads/${fixture.theirs}/changes`), 404, "thread_not_found"],
      ["applyChanges", () => scoped.post(`/threads/${fixture.theirs}/changes/apply`, {}), 404, "thread_not_found"],
      ["discardChanges", () => scoped.post(`/threads/${fixture.theirs}/changes/discard`, {}), 404, "thread_not_found"],
      ["listWorkspaces", () => scoped.get("/workspaces", { projectId: otherProjectId }), 403, "capability_denied"],
      ["getTask", () => scoped.get(`/tasks/${fixture.theirTask}`), 404, "task_not_found"],
      ["cancelTask", () => scoped.post(`/tasks/${fixture.theirTask}/cancel`, {}), 404, "task_not_found"],
      [
        "listPendingRequests",
        () => scoped.get(`/threads/${fixture.theirQuestion}/pending-requests`),
        404,
        "thread_not_found",
      ],
      [
        "readPendingRequest",
        () => scoped.get(`/threads/${fixture.theirQuestion}/pending-requests/${theirRequest}`),
        404,
        "thread_not_found",
      ],
      [
        "respondToPendingRequest",
        () =>
          scoped.post(`/threads/${fixture.theirQuestion}/pending-requests/${theirRequest}/respond`, {
            answers: { q1: "x" },
          }),
        404,
        "thread_not_found",
      ],
      ["getUsage (project)", () => scoped.get("/usage", { projectId: otherProjectId }), 403, "capability_denied"],
      ["getUsage (thread)", () => scoped.get("/usage", { threadId: fixture.theirs }), 404, "thread_not_found"],
      ["streamEvents (project)", () => scoped.get("/events", { projectId: otherProjectId }), 403, "capability_denied"],
      ["streamEvents (thread)", () => scoped.get("/events", { threadId: fixture.theirs }), 404, "thread_not_found"],
      ["streamEvents (task)", () => scoped.get("/events", { taskId: fixture.theirTask }), 404, "task_not_found"],
      [
        "listScheduledTasks",
        () => scoped.get("/scheduled-tasks", { projectId: otherProjectId }),
        403,
        "capability_denied",
      ],
      [
        "createScheduledTask",
        () =>
          scoped.post("/scheduled-tasks", {
            projectId: otherProjectId,
            prompt: "@@reply hijacked",
            schedule: { type: "webhook" },
          }),
        403,
        "capability_denied",
      ],
      ["readScheduledTask", () => scoped.get(`/scheduled-tasks/${fixture.theirSchedule}`), 404, "task_not_found"],
      [
        "updateScheduledTask",
        () => scoped.post(`/scheduled-tasks/${fixture.theirSchedule}`, { enabled: false }),
        404,
        "task_not_found",
      ],
      [
        "deleteScheduledTask",
        () => scoped.post(`/scheduled-tasks/${fixture.theirSchedule}/delete`, {}),
        404,
        "task_not_found",
      ],
      // A token limited to some projects adds none (it would widen what work can reach).
      ["addProject", () => scoped.post("/projects", { path: lab.t.workspace }), 403, "capability_denied"],
    ];
    const outcomes = [];
    for (const [name, call, status, code] of cases) {
      const answer = await call();
      outcomes.push([name, answer.status, (answer.body as FailureBody).error?.code]);
      expect([name, answer.status, (answer.body as FailureBody).error?.code]).toEqual([name, status, code]);
    }
    // Every operation that can name a thread, task or project is in the table.
    const named = new Set(cases.map(([name]) => name.split(" ")[0]));
    for (const route of API_ROUTES)
      if (route.path.includes("{") || route.query?.shape.projectId || route.body?.shape.projectId)
        expect(named, route.operationId).toContain(route.operationId);
    // Nothing reached the other project.
    expect(lab.host.store.select("run", "thread_id = ?", [fixture.theirs])).toHaveLength(0);
    expect(lab.host.store.get("thread", fixture.theirs)!.stopped).toBe(false);
    expect(lab.host.store.get("thread", fixture.theirs)!.settledAt ?? null).toBeNull();
    expect(lab.host.store.get("thread", fixture.theirs)!.title).not.toBe("hijacked");
    expect(lab.host.store.get("thread", fixture.theirs)!.snoozedUntil).toBeNull();
    expect(
      lab.host.store
        .select("thread", "1 = 1")
        .filter((thread) => thread.lineage.parentThreadId === fixture.theirs && thread.lineage.relationship === "fork"),
    ).toHaveLength(0);
    expect(lab.host.store.get("runtimeRequest", theirRequest)!.response).toBeNull();
    expect(lab.host.store.get("delegatedTask", fixture.theirTask)!.cancelRequestedAt).toBeNull();
    expect(lab.host.store.get("scheduledTask", fixture.theirSchedule)).toMatchObject({ enabled: true });
    // Unnamed, a scoped token's list holds only its projects' schedules.
    await ok(
      scoped.post("/scheduled-tasks", {
        projectId: lab.projectId,
        prompt: "@@reply mine",
        target: { providerInstanceId: "alpha" },
        schedule: { type: "webhook" },
      }),
      201,
    );
    expect(
      new Set((await ok(scoped.get("/scheduled-tasks"))).tasks.map((task: { projectId: string }) => task.projectId)),
    ).toEqual(new Set([lab.projectId]));

    // The same token works in its own project, and sees only its projects.
    expect((await scoped.get(`/threads/${fixture.mine}`)).status).toBe(200);
    expect((await scoped.get("/threads", { projectId: lab.projectId })).status).toBe(200);
    expect((await ok(scoped.get("/projects"))).projects.map((p: { projectId: string }) => p.projectId)).toEqual([
      lab.projectId,
    ]);
    expect((await scoped.get("/providers")).status).toBe(200);
  });

  it("every operation that starts or widens work refuses a thread broader than the token's ceiling; reads and stops are not held", async () => {
    const narrow = api(token({ ceiling: { runtimeMode: "auto-accept-edits", interactionMode: "default" } }));
    const request = await pending(fixture.broadQuestion);
    const cases: [string, () => Promise<{ status: number; body: unknown }>][] = [
      ["sendMessage", () => narrow.post(`/threads/${fixture.broad}/messages`, { message: "@@reply x" })],
      ["resumeThread", () => narrow.post(`/threads/${fixture.broad}/resume`, {})],
      ["setThreadSettled", () => narrow.post(`/threads/${fixture.broad}/settled`, { settled: true })],
      ["updateThread", () => narrow.post(`/threads/${fixture.broad}/update`, { action: "rename", title: "narrowed" })],
      ["snoozeThread", () => narrow.post(`/threads/${fixture.broad}/snooze`, { until: "2999-01-01T00:00:00Z" })],
      ["forkThread", () => narrow.post(`/threads/${fixture.broad}/fork`, {})],
      [
        "respondToPendingRequest",
        () =>
          narrow.post(`/threads/${fixture.broadQuestion}/pending-requests/${request}/respond`, {
            answers: { q1: "x" },
          }),
      ],
      [
        "createThreads",
        () =>
          narrow.post("/threads", {
            projectId: lab.projectId,
            threads: [{ target: { providerInstanceId: "alpha" }, runtimeMode: "full-access" }],
          }),
      ],
      [
        "createScheduledTask",
        () =>
          narrow.post("/scheduled-tasks", {
            projectId: lab.projectId,
            target: { providerInstanceId: "alpha" },
            runtimeMode: "full-access",
            prompt: "@@reply x",
            schedule: { type: "webhook" },
          }),
      ],
      ["updateScheduledTask", () => narrow.post(`/scheduled-tasks/${fixture.broadSchedule}`, { enabled: false })],
      ["deleteScheduledTask", () => narrow.post(`/scheduled-tasks/${fixture.broadSchedule}/delete`, {})],
    ];
    for (const [name, call] of cases) {
      const answer = await call();
      expect([name, answer.status, (answer.body as FailureBody).error?.code]).toEqual([
        name,
        403,
        "runtime_mode_escalation_denied",
      ]);
    }
    expect(lab.host.store.select("run", "thread_id = ?", [fixture.broad])).toHaveLength(0);
    expect(lab.host.store.get("thread", fixture.broad)!.stopped).toBe(false);
    expect(lab.host.store.get("thread", fixture.broad)!.settledAt ?? null).toBeNull();
    expect(lab.host.store.get("thread", fixture.broad)!.title).not.toBe("narrowed");
    expect(lab.host.store.get("thread", fixture.broad)!.snoozedUntil).toBeNull();
    expect(
      lab.host.store
        .select("thread", "1 = 1")
        .filter((thread) => thread.lineage.parentThreadId === fixture.broad && thread.lineage.relationship === "fork"),
    ).toHaveLength(0);
    expect(lab.host.store.get("runtimeRequest", request)!.response).toBeNull();
    expect(lab.host.store.get("scheduledTask", fixture.broadSchedule)).toMatchObject({ enabled: true });
    // Reads of the broad thread are allowed.
    expect((await narrow.get(`/threads/${fixture.broad}`)).status).toBe(200);
    expect((await narrow.get(`/threads/${fixture.broadQuestion}/pending-requests`)).status).toBe(200);
    // Within the ceiling, the same operations work.
    expect((await narrow.post(`/threads/${fixture.mine}/interrupt`, {})).status).toBe(200);

    const planOnly = api(token({ ceiling: { runtimeMode: "full-access", interactionMode: "plan" } }));
    const refused = await planOnly.post("/threads", {
      projectId: lab.projectId,
      threads: [{ target: { providerInstanceId: "alpha" }, interactionMode: "default" }],
    });
    expect([refused.status, (refused.body as FailureBody).error.code]).toEqual([
      403,
      "interaction_mode_escalation_denied",
    ]);
    const planned = await ok(
      planOnly.post("/threads", { projectId: lab.projectId, threads: [{ target: { providerInstanceId: "alpha" } }] }),
      201,
    );
    expect(planned.threads[0].thread).toMatchObject({ runtimeMode: "full-access", interactionMode: "plan" });
  });

  it("threads a token creates without naming modes get its ceiling, over the API and over MCP", async () => {
    const ceiling = { runtimeMode: "auto-accept-edits", interactionMode: "default" } as const;
    const value = token({ ceiling });
    const overApi = await ok(
      api(value).post("/threads", { projectId: lab.projectId, threads: [{ target: { providerInstanceId: "alpha" } }] }),
      201,
    );
    expect(overApi.threads[0].thread).toMatchObject(ceiling);
    const client = await connectMcp(lab.server.mcpUrl, value);
    try {
      const overMcp = await mustCall<{ threads: { thread: { runtimeMode: string; interactionMode: string } }[] }>(
        client,
        "create_threads",
        { projectId: lab.projectId, threads: [{ target: { providerInstanceId: "alpha" } }] },
      );
      expect(overMcp.threads[0]!.thread).toMatchObject(ceiling);
      expect(
        await callTool(client, "create_threads", {
          projectId: lab.projectId,
          threads: [{ target: { providerInstanceId: "alpha" }, runtimeMode: "full-access" }],
        }),
      ).toMatchObject({ ok: false, code: "runtime_mode_escalation_denied" });
      expect(await callTool(client, "t3_thread_send", { threadId: fixture.broad, message: "@@reply x" })).toMatchObject(
        { ok: false, code: "runtime_mode_escalation_denied" },
      );
      const capabilities = await mustCall<{ callerKind: string; parentModes: unknown }>(
        client,
        "orchestrator_capabilities",
        {},
      );
      expect(capabilities.callerKind).toBe("client");
    } finally {
      await client.close();
    }
  });

  it("holds MCP client callers to the token's projects too", async () => {
    const client = await connectMcp(
      lab.server.mcpUrl,
      token({ projects: [lab.projectId], ceiling: { runtimeMode: "full-access", interactionMode: "default" } }),
    );
    try {
      const capabilities = await mustCall<{ projects: { projectId: string }[] }>(
        client,
        "orchestrator_capabilities",
        {},
      );
      expect(capabilities.projects.map((p) => p.projectId)).toEqual([lab.projectId]);
      expect(await callTool(client, "t3_thread_read", { threadId: fixture.theirs })).toMatchObject({
        ok: false,
        code: "thread_not_found",
      });
      expect(
        await callTool(client, "t3_thread_send", { threadId: fixture.theirs, message: "@@reply x" }),
      ).toMatchObject({ ok: false, code: "thread_not_found" });
      expect(await callTool(client, "t3_thread_list", { projectId: otherProjectId })).toMatchObject({
        ok: false,
        code: "capability_denied",
      });
      expect(
        await callTool(client, "create_threads", {
          projectId: otherProjectId,
          threads: [{ target: { providerInstanceId: "alpha" } }],
        }),
      ).toMatchObject({ ok: false, code: "capability_denied" });
      expect(await callTool(client, "task_status", { taskId: fixture.theirTask })).toMatchObject({
        ok: false,
        code: "task_not_found",
      });
      expect(
        await callTool(client, "t3_pending_request", { threadId: fixture.theirQuestion, action: "list" }),
      ).toMatchObject({ ok: false, code: "thread_not_found" });
      expect(
        await callTool(client, "t3_thread_launch", {
          message: "x",
          scratch: true,
          target: { providerInstanceId: "alpha" },
        }),
      ).toMatchObject({ ok: false, code: "capability_denied" });
      expect(
        await callTool(client, "schedule_task", { scheduledTaskId: fixture.theirSchedule, enabled: false }),
      ).toMatchObject({ ok: false, code: "task_not_found" });
      expect(await callTool(client, "delete_scheduled_task", { scheduledTaskId: fixture.theirSchedule })).toMatchObject(
        { ok: false, code: "task_not_found" },
      );
      expect(await callTool(client, "list_scheduled_tasks", { projectId: otherProjectId })).toMatchObject({
        ok: false,
        code: "capability_denied",
      });
      const listed = await mustCall<{ tasks: { projectId: string }[] }>(client, "list_scheduled_tasks", {});
      expect(new Set(listed.tasks.map((task) => task.projectId))).toEqual(new Set([lab.projectId]));
      expect(await callTool(client, "t3_thread_read", { threadId: fixture.mine })).toMatchObject({ ok: true });
    } finally {
      await client.close();
    }
    expect(lab.host.store.select("run", "thread_id = ?", [fixture.theirs])).toHaveLength(0);
  });

  // Last: it stops the fixture's broad task.
  it("stopping is never refused by a ceiling: an approval-required token interrupts and stops full-access threads and cancels their tasks, over the API and MCP", async () => {
    const narrowCeiling = { runtimeMode: "approval-required", interactionMode: "default" } as const;
    const running = async (gate: string) => {
      const { thread } = await lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId: "alpha",
        runtimeMode: "full-access",
        prompt: `@@gate ${gate} @@reply late`,
        createdBy: "user",
        creationSource: "cli",
      });
      await lab.waitForLiveTurn(thread.id);
      return thread.id;
    };
    const ended = async (threadId: string) => {
      const run = await lab.host.waiter.waitFor(
        () =>
          lab.host.store.select(
            "run",
            "thread_id = ? AND status IN ('interrupted', 'cancelled', 'completed', 'failed')",
            [threadId],
          )[0] ?? null,
        { timeoutMs: 10_000 },
      );
      return run?.status;
    };
    const interrupted = await running("stop-ceiling-interrupt");
    const stopped = await running("stop-ceiling-stop");
    const overMcp = await running("stop-ceiling-mcp");
    await lab.host.threads.send({
      threadId: stopped,
      text: "@@reply queued behind",
      mode: "queue",
      createdBy: "user",
      creationSource: "cli",
    });

    // Without operate, or for another project, stopping is refused and nothing stops.
    const reader = api(
      token({
        capabilities: ["orchestration:read"],
        ceiling: { runtimeMode: "full-access", interactionMode: "default" },
      }),
    );
    const elsewhere = api(
      token({ projects: [otherProjectId], ceiling: { runtimeMode: "full-access", interactionMode: "default" } }),
    );
    for (const [who, client, code] of [
      ["reader", reader, "capability_denied"],
      ["elsewhere", elsewhere, "thread_not_found"],
    ] as const) {
      for (const action of ["interrupt", "stop"]) {
        const answer = await client.post(`/threads/${interrupted}/${action}`, {});
        expect([who, action, answer.status, (answer.body as FailureBody).error.code]).toEqual([
          who,
          action,
          code === "capability_denied" ? 403 : 404,
          code,
        ]);
      }
      const cancel = await client.post(`/tasks/${fixture.broadTask}/cancel`, {});
      expect([who, (cancel.body as FailureBody).error.code]).toEqual([
        who,
        code === "capability_denied" ? code : "task_not_found",
      ]);
    }
    const readerMcp = await connectMcp(lab.server.mcpUrl, token({ capabilities: ["orchestration:read"] }));
    try {
      expect(await callTool(readerMcp, "t3_thread_interrupt", { threadId: overMcp })).toMatchObject({
        ok: false,
        code: "capability_denied",
      });
      expect(await callTool(readerMcp, "task_cancel", { taskId: fixture.broadTask })).toMatchObject({
        ok: false,
        code: "capability_denied",
      });
    } finally {
      await readerMcp.close();
    }
    expect(lab.host.store.get("thread", interrupted)!.stopped).toBe(false);
    expect(lab.host.store.get("delegatedTask", fixture.broadTask)!.cancelRequestedAt).toBeNull();

    // With operate and the narrowest ceiling, each stops.
    const narrow = api(token({ ceiling: narrowCeiling }));
    expect(await ok(narrow.post(`/threads/${interrupted}/interrupt`, {}))).toMatchObject({
      threadId: interrupted,
      status: "interrupt_requested",
    });
    expect(await ended(interrupted)).toBe("interrupted");
    const stop = await ok(narrow.post(`/threads/${stopped}/stop`, {}));
    expect(stop.interruptedRunId).not.toBeNull();
    expect(stop.heldRunIds).toHaveLength(1);
    expect(await ended(stopped)).toBe("interrupted");
    const client = await connectMcp(lab.server.mcpUrl, token({ ceiling: narrowCeiling }));
    try {
      expect(await callTool(client, "t3_thread_interrupt", { threadId: overMcp })).toMatchObject({ ok: true });
      expect(await ended(overMcp)).toBe("interrupted");
      expect(await callTool(client, "task_cancel", { taskId: fixture.broadTask })).toMatchObject({ ok: true });
      expect(lab.host.store.get("delegatedTask", fixture.broadTask)!.cancelRequestedAt).not.toBeNull();
      // Starting or widening work is still held: a send to the broad thread is refused.
      expect(await callTool(client, "t3_thread_send", { threadId: overMcp, message: "@@reply x" })).toMatchObject({
        ok: false,
        code: "runtime_mode_escalation_denied",
      });
    } finally {
      await client.close();
    }
  });
});
