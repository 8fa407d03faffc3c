import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKENS } from "../../src/host/tokens.js";
import { callTool, connectMcp, mustCall } from "../support/mcp-client.js";
import { McpLab } from "../support/mcp-lab.js";
import { JumpClock } from "../support/jump-clock.js";

type Task = {
  scheduledTaskId: string;
  bindToCurrentThread: boolean;
  boundThreadId: string | null;
  providerInstanceId: string;
  runtimeMode: string;
  interactionMode: string;
  projectId: string;
};

describe("where scheduled runs go: bound and unbound tasks, and the creator's ceiling", () => {
  let lab: McpLab;
  let otherProject: string;
  let otherDir: string;
  const clock = new JumpClock();
  beforeAll(async () => {
    lab = await McpLab.start({ overrides: (c) => c.register(TOKENS.Clock, { useValue: clock }) });
    otherDir = mkdtempSync(join(tmpdir(), "switchyard-sched-other-"));
    otherProject = (await lab.host.projects.add(otherDir, "other")).id;
  });
  afterAll(async () => {
    await lab.stop();
    rmSync(otherDir, { recursive: true, force: true });
  });

  /** A client whose token outlives the hours the clock is moved by. */
  const longClient = () =>
    connectMcp(
      lab.server.mcpUrl,
      lab.registry.issueClientToken({ ttlMs: 365 * 86_400_000, capabilities: ["orchestration:operate"] }).token,
    );
  const triggersOf = (id: string) =>
    lab.host.store.select("scheduledTrigger", "task_id = ?", [id], "ORDER BY created_at, rowid");
  const hourly = { type: "interval", everyMs: 3_600_000 };
  /** Moves the clock to the task's next occurrence and waits until the scheduler has looked. */
  const nextOccurrence = async (id: string) => {
    const anchor = Date.parse(lab.host.store.get("scheduledTask", id)!.anchorAt);
    const fired = triggersOf(id).length;
    const nowMs = clock.nowMs();
    const k = Math.floor((nowMs - anchor) / 3_600_000) + 1;
    clock.set(anchor + k * 3_600_000 + 50);
    await lab.host.scheduler.settled();
    expect(triggersOf(id).length).toBe(fired + 1);
    return triggersOf(id).at(-1)!;
  };

  it("binds by default when the caller has a thread in the task's project: runs queue into that thread behind its work, and never stack", async () => {
    const agent = await lab.liveAgent({ instance: "alpha" });
    const task = await mustCall<Task>(agent.client, "schedule_task", { prompt: "@@reply bound-run", schedule: hourly });
    expect(task).toMatchObject({
      bindToCurrentThread: true,
      boundThreadId: agent.threadId,
      providerInstanceId: "alpha",
      projectId: lab.projectId,
    });
    const first = await nextOccurrence(task.scheduledTaskId);
    // The agent's own turn still runs (held at its gate): the scheduled run waits behind it.
    expect(first).toMatchObject({ outcome: "started", threadId: agent.threadId });
    expect(lab.host.store.get("run", first.runId!)).toMatchObject({
      status: "queued",
      threadId: agent.threadId,
      scheduledTaskId: task.scheduledTaskId,
    });
    const second = await nextOccurrence(task.scheduledTaskId);
    expect(second).toMatchObject({ outcome: "skipped", reason: "overlap", runId: null });
    agent.release();
    const done = await lab.host.threads.waitForRun({
      threadId: agent.threadId,
      runId: first.runId!,
      timeoutMs: 20_000,
    });
    expect(done.run).toMatchObject({
      status: "completed",
      summary: "bound-run",
      creationSource: "scheduler",
      createdBy: "system",
    });
    // It ran in the agent's thread, which no other thread was created for.
    expect(
      lab.host.store.count("thread", "id LIKE 'thread:scheduled:%' AND json_extract(data, '$.projectId') = ?", [
        lab.projectId,
      ]),
    ).toBe(0);
    await mustCall(agent.client, "list_scheduled_tasks", {});
    await mustCall(await longClient(), "delete_scheduled_task", { scheduledTaskId: task.scheduledTaskId });
  });

  it("does not bind by default in another project, or for a client; explicit true there is refused", async () => {
    const agent = await lab.liveAgent({ instance: "alpha" });
    const elsewhere = await mustCall<Task>(agent.client, "schedule_task", {
      projectId: otherProject,
      prompt: "@@reply fresh-thread",
      schedule: hourly,
    });
    expect(elsewhere).toMatchObject({
      bindToCurrentThread: false,
      boundThreadId: null,
      projectId: otherProject,
      providerInstanceId: "alpha",
    });
    const refusedForAgent = await callTool(agent.client, "schedule_task", {
      projectId: otherProject,
      prompt: "x",
      schedule: hourly,
      bindToCurrentThread: true,
    });
    expect(refusedForAgent).toMatchObject({
      ok: false,
      code: "invalid_request",
      message: expect.stringContaining("the calling thread is in another project"),
    });
    const client = await longClient();
    const forClient = await mustCall<Task>(client, "schedule_task", {
      projectId: lab.projectId,
      target: { providerInstanceId: "beta" },
      prompt: "@@reply client-run",
      schedule: hourly,
    });
    expect(forClient).toMatchObject({ bindToCurrentThread: false, boundThreadId: null });
    const refusedForClient = await callTool(client, "schedule_task", {
      projectId: lab.projectId,
      target: { providerInstanceId: "beta" },
      prompt: "x",
      schedule: hourly,
      bindToCurrentThread: true,
    });
    expect(refusedForClient).toMatchObject({
      ok: false,
      code: "invalid_request",
      message: expect.stringContaining("this caller has no thread"),
    });
    // An unbound run launches a fresh thread in the task's project, on the task's provider.
    const run = await nextOccurrence(elsewhere.scheduledTaskId);
    expect(run.outcome).toBe("started");
    expect(lab.host.store.get("thread", run.threadId!)).toMatchObject({
      projectId: otherProject,
      providerInstanceId: "alpha",
      cwd: (await lab.host.projects.get(otherProject))!.rootPath,
      creationSource: "scheduler",
    });
    const done = await lab.host.threads.waitForRun({ threadId: run.threadId!, runId: run.runId!, timeoutMs: 20_000 });
    expect(done.run!.summary).toBe("fresh-thread");
    const again = await nextOccurrence(elsewhere.scheduledTaskId);
    expect(again.threadId).not.toBe(run.threadId);
    await lab.host.threads.waitForRun({ threadId: again.threadId!, runId: again.runId!, timeoutMs: 20_000 });
    // Rebinding on update follows the same rule, from the thread of the caller that updates it.
    expect(
      await callTool(agent.client, "schedule_task", {
        scheduledTaskId: elsewhere.scheduledTaskId,
        bindToCurrentThread: true,
      }),
    ).toMatchObject({ ok: false, code: "invalid_request" });
    expect(
      await callTool(agent.client, "schedule_task", {
        scheduledTaskId: forClient.scheduledTaskId,
        bindToCurrentThread: true,
      }),
    ).toMatchObject({ ok: true, value: { boundThreadId: agent.threadId, providerInstanceId: "alpha" } });
    agent.release();
    for (const id of [elsewhere.scheduledTaskId, forClient.scheduledTaskId])
      await mustCall(client, "delete_scheduled_task", { scheduledTaskId: id });
  });

  it("never runs broader than its creator: modes inherit and step down, escalation is refused, also on a later update by a broader caller", async () => {
    const agent = await lab.liveAgent({ instance: "alpha", runtimeMode: "auto-accept-edits", interactionMode: "plan" });
    expect(
      await callTool(agent.client, "schedule_task", { prompt: "x", schedule: hourly, runtimeMode: "full-access" }),
    ).toMatchObject({ ok: false, code: "runtime_mode_escalation_denied" });
    expect(
      await callTool(agent.client, "schedule_task", { prompt: "x", schedule: hourly, interactionMode: "default" }),
    ).toMatchObject({ ok: false, code: "interaction_mode_escalation_denied" });
    const task = await mustCall<Task>(agent.client, "schedule_task", {
      prompt: "x",
      schedule: hourly,
      bindToCurrentThread: false,
      target: { providerInstanceId: "beta" },
    });
    expect(task).toMatchObject({
      providerInstanceId: "beta",
      runtimeMode: "auto-accept-edits",
      interactionMode: "plan",
    });
    const client = await longClient();
    expect(
      await callTool(client, "schedule_task", { scheduledTaskId: task.scheduledTaskId, runtimeMode: "full-access" }),
    ).toMatchObject({ ok: false, code: "runtime_mode_escalation_denied" });
    expect(
      await callTool(client, "schedule_task", {
        scheduledTaskId: task.scheduledTaskId,
        runtimeMode: "approval-required",
      }),
    ).toMatchObject({ ok: true, value: { runtimeMode: "approval-required", interactionMode: "plan" } });
    // A narrower agent cannot change (or delete) a task that runs broader than itself.
    const narrow = await lab.liveAgent({
      instance: "alpha",
      runtimeMode: "approval-required",
      interactionMode: "plan",
    });
    const broadTask = await mustCall<Task>(client, "schedule_task", {
      projectId: lab.projectId,
      prompt: "x",
      schedule: hourly,
      target: { providerInstanceId: "alpha" },
    });
    expect(broadTask.runtimeMode).toBe("full-access");
    expect(
      await callTool(narrow.client, "delete_scheduled_task", { scheduledTaskId: broadTask.scheduledTaskId }),
    ).toMatchObject({ ok: false, code: "runtime_mode_escalation_denied" });
    expect(
      await callTool(narrow.client, "schedule_task", { scheduledTaskId: broadTask.scheduledTaskId, enabled: false }),
    ).toMatchObject({ ok: false, code: "runtime_mode_escalation_denied" });
    agent.release();
    narrow.release();
    await lab.host.threads.waitForRun({ threadId: agent.threadId, timeoutMs: 20_000 });
    // An agent with no live run changes nothing.
    expect(await callTool(agent.client, "schedule_task", { prompt: "x", schedule: hourly })).toMatchObject({
      ok: false,
      code: "parent_not_active",
    });
    for (const id of [task.scheduledTaskId, broadTask.scheduledTaskId])
      await mustCall(client, "delete_scheduled_task", { scheduledTaskId: id });
  });

  it("retries with a clientRequestId return the same task", async () => {
    const client = await longClient();
    const args = {
      projectId: lab.projectId,
      target: { providerInstanceId: "alpha" },
      prompt: "@@reply once",
      schedule: { type: "webhook", signature: { secret: "a retry-safe secret value" } },
      clientRequestId: "nightly-1",
    };
    const first = await mustCall<Task & { created: boolean; replayed: boolean }>(client, "schedule_task", args);
    const again = await mustCall<Task & { created: boolean; replayed: boolean }>(client, "schedule_task", args);
    expect(again).toMatchObject({ scheduledTaskId: first.scheduledTaskId, created: false, replayed: true });
    // The same key with another secret is another request: refused, not silently the first.
    expect(
      await callTool(client, "schedule_task", {
        ...args,
        schedule: { type: "webhook", signature: { secret: "a different secret value" } },
      }),
    ).toMatchObject({
      ok: false,
      code: "invalid_request",
      message: expect.stringContaining("clientRequestId was already used"),
    });
    expect(lab.host.store.count("scheduledTask", "1 = 1")).toBe(1);
    await mustCall(client, "delete_scheduled_task", { scheduledTaskId: first.scheduledTaskId });
    await client.close();
  });
});
