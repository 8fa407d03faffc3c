import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/config-loader.js";
import { TOKENS } from "../../src/host/tokens.js";
import { callTool, connectMcp, mustCall } from "../support/mcp-client.js";
import { McpLab } from "../support/mcp-lab.js";
import { JumpClock } from "../support/jump-clock.js";

type Task = {
  scheduledTaskId: string;
  enabled: boolean;
  nextRunAt: string | null;
  runCount: number;
  schedule: Record<string, unknown>;
};

describe("an interval task over the real MCP endpoint (sub-second floor)", () => {
  let lab: McpLab;
  let client: Client;
  const clock = new JumpClock();
  beforeAll(async () => {
    lab = await McpLab.start({
      scheduling: { minIntervalMs: 100, maxPromptChars: 1_000 },
      overrides: (c) => c.register(TOKENS.Clock, { useValue: clock }),
    });
    // A long-lived token: the test moves the clock forward.
    client = await connectMcp(
      lab.server.mcpUrl,
      lab.registry.issueClientToken({ ttlMs: 30 * 86_400_000, capabilities: ["orchestration:operate"] }).token,
    );
  });
  afterAll(async () => {
    await client.close();
    await lab.stop();
  });

  const triggers = (id: string) => lab.host.store.count("scheduledTrigger", "task_id = ?", [id]);
  const startedRuns = (id: string) => lab.host.store.select("run", "json_extract(data, '$.scheduledTaskId') = ?", [id]);
  const waitForTriggers = async (id: string, n: number) => {
    const reached = await lab.host.waiter.waitFor(() => (triggers(id) >= n ? true : null), { timeoutMs: 20_000 });
    expect(reached, `${n} triggers of ${id}`).toBe(true);
  };
  const task = async (id: string) =>
    (await mustCall<{ tasks: Task[] }>(client, "list_scheduled_tasks", { projectId: lab.projectId })).tasks.find(
      (t) => t.scheduledTaskId === id,
    );

  it("runs on its interval, pauses with enabled: false, resumes, and never runs again once deleted", async () => {
    const created = await mustCall<Task & { created: boolean }>(client, "schedule_task", {
      projectId: lab.projectId,
      target: { providerInstanceId: "alpha" },
      prompt: "@@reply tick",
      schedule: { type: "interval", everyMs: 200 },
    });
    expect(created).toMatchObject({ created: true, enabled: true, schedule: { type: "interval", everyMs: 200 } });
    expect(created.nextRunAt).not.toBeNull();
    await waitForTriggers(created.scheduledTaskId, 2);
    const runs = startedRuns(created.scheduledTaskId);
    expect(runs.length).toBeGreaterThanOrEqual(1);
    for (const run of runs) expect(run.creationSource).toBe("scheduler");

    const paused = await mustCall<Task>(client, "schedule_task", {
      scheduledTaskId: created.scheduledTaskId,
      enabled: false,
    });
    expect(paused).toMatchObject({ enabled: false, nextRunAt: null });
    await lab.host.scheduler.settled();
    const whilePaused = triggers(created.scheduledTaskId);
    // Ten minutes pass while it is paused: a running task would fire at once (catching up).
    clock.advance(10 * 60_000);
    await lab.host.scheduler.settled();
    expect(triggers(created.scheduledTaskId)).toBe(whilePaused);

    // Resumed, it counts from now: the paused ten minutes are not caught up, and it runs again.
    const resumed = await mustCall<Task>(client, "schedule_task", {
      scheduledTaskId: created.scheduledTaskId,
      enabled: true,
    });
    expect(resumed.enabled).toBe(true);
    await waitForTriggers(created.scheduledTaskId, whilePaused + 1);
    const afterResume = lab.host.store.select(
      "scheduledTrigger",
      "task_id = ?",
      [created.scheduledTaskId],
      "ORDER BY created_at DESC LIMIT 1",
    )[0]!;
    expect(afterResume.coalesced).toBe(0);

    await mustCall(client, "delete_scheduled_task", { scheduledTaskId: created.scheduledTaskId });
    await lab.host.scheduler.settled();
    const atDeletion = triggers(created.scheduledTaskId);
    clock.advance(10 * 60_000);
    await lab.host.scheduler.settled();
    expect(triggers(created.scheduledTaskId)).toBe(atDeletion);
    expect(await task(created.scheduledTaskId)).toBeUndefined();
    // Its runs ran to the end and stay linked to it.
    for (const run of startedRuns(created.scheduledTaskId)) {
      const done = await lab.host.threads.waitForRun({ threadId: run.threadId, runId: run.id, timeoutMs: 20_000 });
      expect(done.run!.status).toBe("completed");
    }
  });

  it("refuses bad input with typed failures naming the field, and saves nothing", async () => {
    const before = lab.host.store.count("scheduledTask", "1 = 1");
    const eventsBefore = lab.host.store.lastSequence();
    const base = { projectId: lab.projectId, target: { providerInstanceId: "alpha" }, prompt: "@@reply x" };
    const refusals: [Record<string, unknown>, string][] = [
      [
        { schedule: { type: "fixed_time", cron: "61 * * * *" } },
        "is not a cron expression: Invalid value for minute: 61",
      ],
      [{ schedule: { type: "fixed_time", cron: "0 9 * *" } }, "is not a cron expression"],
      [{ schedule: { type: "fixed_time", cron: "0 0 30 2 *" } }, "never fires"],
      [{ schedule: { type: "interval", everyMs: 50 } }, "outside 100 (the floor, scheduling.minIntervalMs)"],
      [{ schedule: { type: "fixed_time", cron: "0 9 * * *", at: "2099-01-01T09:00" } }, "exactly one of cron"],
      [{ schedule: { type: "fixed_time" } }, "exactly one of cron"],
      [{ schedule: { type: "fixed_time", at: "2001-01-01T09:00" } }, "is in the past"],
      [{ schedule: { type: "fixed_time", at: "2099-02-30T09:00" } }, "is not a date and time that exists"],
      [{ schedule: { type: "fixed_time", at: "next tuesday" } }, "is not an ISO 8601 date and time"],
      [{ schedule: { type: "webhook", signature: { secret: "short" } } }, "must be 16 to 512 characters"],
      [{ schedule: { type: "webhook", filters: [{ jsonPath: "action", equals: "opened" }] } }, "must start with $"],
      [{ schedule: { type: "webhook", dedupe: { bodyHash: false } } }, "needs a deliveryIdHeader"],
      [{ schedule: "{not json" }, "is a string that is not the JSON of a schedule object"],
      [{ schedule: { type: "hourly" } }, "schedule"],
      [
        { prompt: "x".repeat(1_001), schedule: { type: "interval", everyMs: 60_000 } },
        "more than the 1000 a scheduled task may have (scheduling.maxPromptChars)",
      ],
      [{ prompt: "   ", schedule: { type: "interval", everyMs: 60_000 } }, "prompt is empty"],
      [{ prompt: undefined, schedule: { type: "interval", everyMs: 60_000 } }, "prompt is required"],
      [{ schedule: undefined }, "schedule is required"],
      [
        { projectId: "project_missing", schedule: { type: "interval", everyMs: 60_000 } },
        "Project project_missing does not exist",
      ],
      [{ target: { providerInstanceId: "gamma" }, schedule: { type: "interval", everyMs: 60_000 } }, "disabled"],
    ];
    for (const [args, message] of refusals) {
      const outcome = await callTool(client, "schedule_task", { ...base, ...args });
      expect(outcome, JSON.stringify(args).slice(0, 120)).toMatchObject({
        ok: false,
        message: expect.stringContaining(message),
      });
      if (!outcome.ok) expect(["invalid_request", "provider_unavailable"]).toContain(outcome.code);
    }
    // A schedule sent as a JSON string (as some harnesses send nested objects) is read as the object.
    const asString = await mustCall<Task>(client, "schedule_task", {
      ...base,
      schedule: JSON.stringify({ type: "interval", everyMs: 3_600_000 }),
    });
    expect(asString.schedule).toEqual({ type: "interval", everyMs: 3_600_000 });
    await mustCall(client, "delete_scheduled_task", { scheduledTaskId: asString.scheduledTaskId });
    // An update with bad input changes nothing either.
    const kept = await mustCall<Task & { updatedAt: string }>(client, "schedule_task", {
      ...base,
      schedule: { type: "interval", everyMs: 3_600_000 },
    });
    expect(
      await callTool(client, "schedule_task", {
        scheduledTaskId: kept.scheduledTaskId,
        prompt: "@@reply changed",
        schedule: { type: "interval", everyMs: 1 },
      }),
    ).toMatchObject({ ok: false, code: "invalid_request" });
    expect(lab.host.store.get("scheduledTask", kept.scheduledTaskId)).toMatchObject({
      prompt: "@@reply x",
      updatedAt: kept.updatedAt,
    });
    expect(await callTool(client, "schedule_task", { scheduledTaskId: "sched_missing", enabled: false })).toMatchObject(
      { ok: false, code: "task_not_found" },
    );
    expect(await callTool(client, "delete_scheduled_task", { scheduledTaskId: "sched_missing" })).toMatchObject({
      ok: false,
      code: "task_not_found",
    });
    await mustCall(client, "delete_scheduled_task", { scheduledTaskId: kept.scheduledTaskId });
    expect(lab.host.store.count("scheduledTask", "1 = 1")).toBe(before);
    // Only the two tasks created here and deleted again wrote events.
    const written = lab.host.store.eventsAfter(eventsBefore).filter((event) => event.entity === "scheduledTask");
    expect(new Set(written.map((event) => (event.record as { id: string }).id))).toEqual(
      new Set([asString.scheduledTaskId, kept.scheduledTaskId]),
    );
  });

  it("refuses a time zone the runtime does not know, in the config, naming the field", () => {
    expect(() =>
      parseConfig({ scheduling: { timeZone: "Mars/Olympus_Mons" } }, "/home/me/.switchyard/config.json"),
    ).toThrowError(/scheduling\.timeZone: is not a time zone this runtime knows/);
    expect(parseConfig({ scheduling: { timeZone: "Europe/Berlin" } }, "config.json").scheduling.timeZone).toBe(
      "Europe/Berlin",
    );
  });

  it("reports scheduling as a feature, with the interval floor", async () => {
    const caps = await mustCall<{ features: { scheduling: boolean }; limits: { minScheduleIntervalMs: number } }>(
      client,
      "orchestrator_capabilities",
      {},
    );
    expect(caps.features.scheduling).toBe(true);
    expect(caps.limits.minScheduleIntervalMs).toBe(100);
  });
});
