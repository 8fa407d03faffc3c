import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKENS } from "../../src/host/tokens.js";
import type { ScheduledTriggerRecord } from "../../src/store/records.js";
import { callTool, connectMcp, mustCall } from "../support/mcp-client.js";
import { McpLab } from "../support/mcp-lab.js";
import { JumpClock } from "../support/jump-clock.js";

type Task = { scheduledTaskId: string; nextRunAt: string | null; timeZone: string; schedule: Record<string, unknown> };

/**
 * Fixed-time and interval tasks at a clock the test moves: the server's time zone is
 * Europe/Berlin (scheduling.timeZone), so cron and one-shot times are Berlin wall-clock times,
 * and daylight-saving changes are croner's.
 */
describe("fixed-time tasks and catch-up, at a controlled clock", () => {
  let lab: McpLab;
  let client: Client;
  const clock = new JumpClock();
  clock.set(Date.parse("2030-01-10T07:30:00Z"));

  beforeAll(async () => {
    lab = await McpLab.start({
      // The clock crosses months between triggers a test reads back: keep them all.
      scheduling: {
        timeZone: "Europe/Berlin",
        catchUpWindowMs: 6 * 3_600_000,
        triggerRetention: { maxAgeMs: 3_650 * 86_400_000 },
      },
      overrides: (c) => c.register(TOKENS.Clock, { useValue: clock }),
    });
    client = await connectMcp(
      lab.server.mcpUrl,
      lab.registry.issueClientToken({ ttlMs: 3_650 * 86_400_000, capabilities: ["orchestration:operate"] }).token,
    );
  });
  afterAll(async () => {
    await client.close();
    await lab.stop();
  });

  const schedule = (args: Record<string, unknown>) =>
    mustCall<Task>(client, "schedule_task", {
      projectId: lab.projectId,
      target: { providerInstanceId: "alpha" },
      prompt: "@@reply on-time",
      ...args,
    });
  const triggersOf = (id: string) =>
    lab.host.store.select("scheduledTrigger", "task_id = ?", [id], "ORDER BY created_at, rowid");
  /** Moves the clock and waits until the scheduler has looked at the tasks at that moment. */
  const jumpTo = async (iso: string) => {
    clock.set(Date.parse(iso));
    await lab.host.scheduler.settled();
  };
  const finished = async (trigger: ScheduledTriggerRecord) => {
    const done = await lab.host.threads.waitForRun({
      threadId: trigger.threadId!,
      runId: trigger.runId!,
      timeoutMs: 20_000,
    });
    expect(done.run!.status).toBe("completed");
    return done.run!;
  };
  const nextRunAt = async (id: string) =>
    (await mustCall<{ tasks: Task[] }>(client, "list_scheduled_tasks", { projectId: lab.projectId })).tasks.find(
      (t) => t.scheduledTaskId === id,
    )!.nextRunAt;

  it("fires a cron task at its time in the server's time zone, once, and then aims at the next day", async () => {
    const task = await schedule({ schedule: { type: "fixed_time", cron: "0 9 * * *" } });
    // 09:00 in Berlin in January is 08:00 UTC.
    expect(task).toMatchObject({ timeZone: "Europe/Berlin", nextRunAt: "2030-01-10T08:00:00.000Z" });
    await jumpTo("2030-01-10T07:59:59.000Z");
    expect(triggersOf(task.scheduledTaskId)).toHaveLength(0);
    await jumpTo("2030-01-10T08:00:00.200Z");
    const [fired] = triggersOf(task.scheduledTaskId);
    expect(fired).toMatchObject({
      kind: "fixed_time",
      outcome: "started",
      scheduledFor: "2030-01-10T08:00:00.000Z",
      catchUp: false,
      coalesced: 0,
    });
    const run = await finished(fired!);
    expect(run).toMatchObject({
      summary: "on-time",
      scheduledTaskId: task.scheduledTaskId,
      scheduledTriggerId: fired!.id,
    });
    await jumpTo("2030-01-10T08:30:00.000Z");
    expect(triggersOf(task.scheduledTaskId)).toHaveLength(1);
    expect(await nextRunAt(task.scheduledTaskId)).toBe("2030-01-11T08:00:00.000Z");
    await mustCall(client, "delete_scheduled_task", { scheduledTaskId: task.scheduledTaskId });
  });

  it("handles daylight-saving changes as croner does: a time in the spring gap runs after it, a repeated hour runs once", async () => {
    await jumpTo("2030-03-30T12:00:00.000Z");
    const task = await schedule({ schedule: { type: "fixed_time", cron: "30 2 * * *" } });
    // 02:30 does not exist in Berlin on 2030-03-31 (clocks go from 02:00 to 03:00): 03:00 CEST.
    expect(task.nextRunAt).toBe("2030-03-31T01:00:00.000Z");
    await jumpTo("2030-03-31T01:00:00.100Z");
    expect(triggersOf(task.scheduledTaskId)).toHaveLength(1);
    await finished(triggersOf(task.scheduledTaskId)[0]!);

    await mustCall(client, "schedule_task", { scheduledTaskId: task.scheduledTaskId, enabled: false });
    await jumpTo("2030-10-26T12:00:00.000Z");
    await mustCall(client, "schedule_task", { scheduledTaskId: task.scheduledTaskId, enabled: true });
    // 02:30 happens twice on 2030-10-27 (clocks go back from 03:00 to 02:00); it runs at the first.
    expect(await nextRunAt(task.scheduledTaskId)).toBe("2030-10-27T00:30:00.000Z");
    await jumpTo("2030-10-27T00:30:00.100Z");
    await finished(triggersOf(task.scheduledTaskId)[1]!);
    await jumpTo("2030-10-27T01:30:00.100Z");
    expect(triggersOf(task.scheduledTaskId)).toHaveLength(2);
    expect(await nextRunAt(task.scheduledTaskId)).toBe("2030-10-28T01:30:00.000Z");
    await mustCall(client, "delete_scheduled_task", { scheduledTaskId: task.scheduledTaskId });
  });

  it("runs a one-shot time once, in the server's time zone unless it carries an offset, and will not resume it after", async () => {
    await jumpTo("2030-11-01T08:00:00.000Z");
    const local = await schedule({ schedule: { type: "fixed_time", at: "2030-11-01T10:00" } });
    expect(local.schedule).toEqual({
      type: "fixed_time",
      at: "2030-11-01T10:00",
      atInstant: "2030-11-01T09:00:00.000Z",
    });
    const utc = await schedule({ schedule: { type: "fixed_time", at: "2030-11-01T10:00:00Z" } });
    expect(utc.nextRunAt).toBe("2030-11-01T10:00:00.000Z");
    await jumpTo("2030-11-01T09:00:00.100Z");
    expect(triggersOf(local.scheduledTaskId)).toHaveLength(1);
    expect(triggersOf(utc.scheduledTaskId)).toHaveLength(0);
    await finished(triggersOf(local.scheduledTaskId)[0]!);
    expect(await nextRunAt(local.scheduledTaskId)).toBeNull();
    await jumpTo("2030-11-01T10:00:00.100Z");
    expect(triggersOf(utc.scheduledTaskId)).toHaveLength(1);
    await finished(triggersOf(utc.scheduledTaskId)[0]!);
    await jumpTo("2030-11-02T09:00:00.000Z");
    expect(triggersOf(local.scheduledTaskId)).toHaveLength(1);
    expect(triggersOf(utc.scheduledTaskId)).toHaveLength(1);
    await mustCall(client, "schedule_task", { scheduledTaskId: local.scheduledTaskId, enabled: false });
    expect(
      await callTool(client, "schedule_task", { scheduledTaskId: local.scheduledTaskId, enabled: true }),
    ).toMatchObject({ ok: false, code: "invalid_request", message: expect.stringContaining("has passed") });
    for (const task of [local, utc])
      await mustCall(client, "delete_scheduled_task", { scheduledTaskId: task.scheduledTaskId });
  });

  it("catches up missed interval occurrences with one run for all of them", async () => {
    await jumpTo("2030-12-01T12:00:00.000Z");
    const task = await schedule({ schedule: { type: "interval", everyMs: 10 * 60_000 } });
    // Occurrences are anchor + k × everyMs, the anchor being when the schedule was set.
    const anchor = Date.parse(lab.host.store.get("scheduledTask", task.scheduledTaskId)!.anchorAt);
    const slot = (k: number) => new Date(anchor + k * 10 * 60_000).toISOString();
    expect(task.nextRunAt).toBe(slot(1));
    // 35 minutes pass at once (a server asleep): the occurrences at +10, +20 and +30 are due.
    await jumpTo(new Date(anchor + 35 * 60_000).toISOString());
    const [caughtUp, ...rest] = triggersOf(task.scheduledTaskId);
    expect(rest).toHaveLength(0);
    expect(caughtUp).toMatchObject({ outcome: "started", scheduledFor: slot(3), catchUp: true, coalesced: 2 });
    await finished(caughtUp!);
    expect(await nextRunAt(task.scheduledTaskId)).toBe(slot(4));
    // Seven hours later the latest occurrence (+7:30) is five minutes old: it runs, standing for 41 others.
    await jumpTo(new Date(anchor + (7 * 60 + 35) * 60_000).toISOString());
    expect(triggersOf(task.scheduledTaskId)[1]).toMatchObject({
      outcome: "started",
      scheduledFor: slot(45),
      catchUp: true,
      coalesced: 41,
    });
    await finished(triggersOf(task.scheduledTaskId)[1]!);
    await mustCall(client, "delete_scheduled_task", { scheduledTaskId: task.scheduledTaskId });
  });

  it("records a fixed-time occurrence missed by more than the catch-up window as skipped, and runs the next one", async () => {
    await jumpTo("2030-12-10T06:00:00.000Z");
    const task = await schedule({ schedule: { type: "fixed_time", cron: "0 9 * * *" } });
    expect(task.nextRunAt).toBe("2030-12-10T08:00:00.000Z");
    // The server was down from before 09:00 until 16:00 (Berlin): seven hours, beyond the six-hour window.
    await jumpTo("2030-12-10T15:00:00.000Z");
    const [missed] = triggersOf(task.scheduledTaskId);
    expect(missed).toMatchObject({
      outcome: "skipped",
      reason: "missed",
      scheduledFor: "2030-12-10T08:00:00.000Z",
      runId: null,
    });
    expect(missed!.detail).toContain("beyond the catch-up window (scheduling.catchUpWindowMs");
    expect(await nextRunAt(task.scheduledTaskId)).toBe("2030-12-11T08:00:00.000Z");
    await jumpTo("2030-12-11T08:00:00.100Z");
    expect(triggersOf(task.scheduledTaskId)[1]).toMatchObject({
      outcome: "started",
      scheduledFor: "2030-12-11T08:00:00.000Z",
      catchUp: false,
    });
    await finished(triggersOf(task.scheduledTaskId)[1]!);
    await mustCall(client, "delete_scheduled_task", { scheduledTaskId: task.scheduledTaskId });
  });

  it("refuses a cron expression that fires more often than the floor", async () => {
    expect(
      await callTool(client, "schedule_task", {
        projectId: lab.projectId,
        target: { providerInstanceId: "alpha" },
        prompt: "x",
        schedule: { type: "fixed_time", cron: "*/10 * * * * *" },
      }),
    ).toMatchObject({
      ok: false,
      code: "invalid_request",
      message: expect.stringContaining("more often than the 60000 ms floor (scheduling.minIntervalMs)"),
    });
  });
});
