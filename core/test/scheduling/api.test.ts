import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKENS } from "../../src/host/tokens.js";
import { ApiClient, ok, type FailureBody } from "../support/api-client.js";
import { httpRequest } from "../support/http-request.js";
import { JumpClock } from "../support/jump-clock.js";
import { McpLab } from "../support/mcp-lab.js";

type Trigger = { triggerId: string; outcome: string; reason: string | null; runId: string | null };
type Task = {
  scheduledTaskId: string;
  projectId: string;
  enabled: boolean;
  nextRunAt: string | null;
  runCount: number;
  runtimeMode: string;
  creationSource: string;
  webhookPath: string | null;
  recentTriggers: Trigger[];
};

/** The HTTP API lists, pauses, resumes and deletes schedules, with the same rules as the MCP tools. */
describe("scheduled tasks over the HTTP API (sub-second floor)", () => {
  let lab: McpLab;
  let api: ApiClient;
  const clock = new JumpClock();
  beforeAll(async () => {
    lab = await McpLab.start({
      scheduling: { minIntervalMs: 100 },
      overrides: (c) => c.register(TOKENS.Clock, { useValue: clock }),
    });
    const token = lab.registry.issueClientToken({
      ttlMs: 30 * 86_400_000,
      capabilities: ["orchestration:operate"],
      ceiling: { runtimeMode: "auto-accept-edits", interactionMode: "default" },
    }).token;
    api = new ApiClient(lab.server.apiUrl, token);
  });
  afterAll(async () => lab.stop());

  const triggers = (id: string) => lab.host.store.count("scheduledTrigger", "task_id = ?", [id]);
  const waitForTriggers = async (id: string, n: number) => {
    const reached = await lab.host.waiter.waitFor(() => (triggers(id) >= n ? true : null), { timeoutMs: 20_000 });
    expect(reached, `${n} triggers of ${id}`).toBe(true);
  };

  it("creates an interval task, lists and reads it with its runs, pauses, resumes and deletes it", async () => {
    const body = {
      projectId: lab.projectId,
      target: { providerInstanceId: "alpha" },
      prompt: "@@reply tick",
      schedule: { type: "interval", everyMs: 200 },
    };
    const created = await ok<Task & { created: boolean }>(
      api.post("/scheduled-tasks", body, { "idempotency-key": "api-sched-1" }),
      201,
    );
    // Modes omitted are the token's ceiling; the task records that the API made it.
    expect(created).toMatchObject({
      created: true,
      enabled: true,
      runtimeMode: "auto-accept-edits",
      creationSource: "api",
    });
    const retried = await ok<Task & { replayed: boolean }>(
      api.post("/scheduled-tasks", body, { "idempotency-key": "api-sched-1" }),
      201,
    );
    expect(retried).toMatchObject({ scheduledTaskId: created.scheduledTaskId, replayed: true });
    expect(lab.host.store.count("scheduledTask", "project_id = ?", [lab.projectId])).toBe(1);
    const id = created.scheduledTaskId;

    await waitForTriggers(id, 1);
    const read = await ok<Task>(api.get(`/scheduled-tasks/${id}`));
    const started = read.recentTriggers.find((trigger) => trigger.outcome === "started");
    expect(started?.runId).toBeTruthy();
    // The run links to its schedule.
    expect(lab.host.store.get("run", started!.runId!)).toMatchObject({
      scheduledTaskId: id,
      scheduledTriggerId: started!.triggerId,
    });
    const listed = await ok<{ tasks: Task[]; total: number }>(
      api.get("/scheduled-tasks", { projectId: lab.projectId }),
    );
    expect(listed.tasks.map((task) => task.scheduledTaskId)).toEqual([id]);

    const paused = await ok<Task>(api.post(`/scheduled-tasks/${id}`, { enabled: false }));
    expect(paused).toMatchObject({ enabled: false, nextRunAt: null });
    await lab.host.scheduler.settled();
    const whilePaused = triggers(id);
    clock.advance(10 * 60_000);
    await lab.host.scheduler.settled();
    expect(triggers(id)).toBe(whilePaused);

    expect(await ok<Task>(api.post(`/scheduled-tasks/${id}`, { enabled: true }))).toMatchObject({ enabled: true });
    await waitForTriggers(id, whilePaused + 1);

    const deleted = await ok(api.post(`/scheduled-tasks/${id}/delete`, {}));
    expect(deleted).toMatchObject({ scheduledTaskId: id, deleted: true, replayed: false });
    // The same caller's retry answers the same.
    expect(await ok(api.post(`/scheduled-tasks/${id}/delete`, {}))).toMatchObject({
      scheduledTaskId: id,
      deleted: true,
      replayed: true,
    });
    const gone = await api.get(`/scheduled-tasks/${id}`);
    expect([gone.status, (gone.body as FailureBody).error.code]).toEqual([404, "task_not_found"]);
    expect((await ok<{ tasks: Task[] }>(api.get("/scheduled-tasks", { projectId: lab.projectId }))).tasks).toEqual([]);
    await lab.host.scheduler.settled();
    const atDeletion = triggers(id);
    clock.advance(10 * 60_000);
    await lab.host.scheduler.settled();
    expect(triggers(id)).toBe(atDeletion);
  });

  it("refuses bad input and broader modes than the token's with typed failures, saving nothing", async () => {
    const base = { projectId: lab.projectId, target: { providerInstanceId: "alpha" }, prompt: "@@reply x" };
    const cases: [Record<string, unknown>, number, string, string][] = [
      [{ schedule: { type: "fixed_time", cron: "61 * * * *" } }, 400, "invalid_request", "is not a cron expression"],
      [{ schedule: { type: "interval", everyMs: 10 } }, 400, "invalid_request", "scheduling.minIntervalMs"],
      [
        { schedule: { type: "webhook" }, runtimeMode: "full-access" },
        403,
        "runtime_mode_escalation_denied",
        "full-access",
      ],
      [{ schedule: { type: "webhook" }, scheduledTaskId: "sched_x" }, 400, "invalid_request", "scheduledTaskId"],
      [
        { schedule: { type: "webhook" }, bindToCurrentThread: true },
        400,
        "invalid_request",
        "bindToCurrentThread: true needs a caller thread",
      ],
    ];
    for (const [fields, status, code, message] of cases) {
      const answer = await api.post("/scheduled-tasks", { ...base, ...fields });
      const failure = answer.body as FailureBody;
      expect([answer.status, failure.error?.code], JSON.stringify(fields)).toEqual([status, code]);
      expect(failure.error.message).toContain(message);
    }
    const missing = await api.post("/scheduled-tasks/sched_missing", { enabled: false });
    expect([missing.status, (missing.body as FailureBody).error.code]).toEqual([404, "task_not_found"]);
    // The path names the task; the body cannot move it to another project.
    const kept = await ok<Task>(api.post("/scheduled-tasks", { ...base, schedule: { type: "webhook" } }), 201);
    const moved = await api.post(`/scheduled-tasks/${kept.scheduledTaskId}`, { projectId: "project_other" });
    expect(moved.status).toBe(400);
    expect(lab.host.store.count("scheduledTask", "project_id = ?", [lab.projectId])).toBe(1);
    // Its webhook answers until it is deleted, then 404.
    const hook = () =>
      httpRequest(`${lab.server.url}${kept.webhookPath!}`, {
        body: "{}",
        headers: { "content-type": "application/json" },
      });
    expect((await hook()).status).toBe(202);
    await ok(api.post(`/scheduled-tasks/${kept.scheduledTaskId}/delete`, {}));
    expect((await hook()).status).toBe(404);
  });
});
