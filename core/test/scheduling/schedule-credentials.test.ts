import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKENS } from "../../src/host/tokens.js";
import type { CredentialCapability, ModeCeiling } from "../../src/services/credentials/mcp-session-registry.js";
import { runCli } from "../support/cli.js";
import { callTool, connectMcp, mustCall } from "../support/mcp-client.js";
import { McpLab } from "../support/mcp-lab.js";
import { httpRequest } from "../support/http-request.js";
import { JumpClock } from "../support/jump-clock.js";
import { until } from "../support/until.js";
import { sqliteStore } from "../support/sqlite-store.js";

type Task = {
  scheduledTaskId: string;
  enabled: boolean;
  pausedReason: string | null;
  pausedDetail: string | null;
  authority: { kind: string; id: string | null; state: string } | null;
  webhookUrl: string | null;
};

/**
 * A scheduled task runs long after the call that made it, so it is held to the credential that
 * made it at every firing: revoking or expiring that credential pauses it, and resuming binds it
 * to the resumer's. Over the real MCP endpoint, real webhook requests and the built CLI.
 */
describe("scheduled tasks never outlive the credential that made them", () => {
  let lab: McpLab;
  const clock = new JumpClock();
  let tokens = 0;

  beforeAll(async () => {
    lab = await McpLab.start({
      scheduling: { minIntervalMs: 10 },
      overrides: (c) => c.register(TOKENS.Clock, { useValue: clock }),
    });
  });
  afterAll(async () => lab.stop());

  const issue = (options: { capabilities?: CredentialCapability[]; ceiling?: ModeCeiling; ttlMs?: number } = {}) =>
    lab.registry.issueClientTokenAsync({
      ttlMs: options.ttlMs ?? 30 * 86_400_000,
      capabilities: options.capabilities ?? ["orchestration:operate"],
      label: `t${++tokens}`,
      ...(options.ceiling ? { ceiling: options.ceiling } : {}),
    });
  const clientOf = (token: string) => connectMcp(lab.server.mcpUrl, token);
  const taskAs = async (client: Client, id: string) =>
    (await mustCall<{ tasks: Task[] }>(client, "list_scheduled_tasks", { projectId: lab.projectId })).tasks.find(
      (t) => t.scheduledTaskId === id,
    )!;
  const started = (id: string) => lab.host.store.count("scheduledTrigger", "task_id = ? AND outcome = 'started'", [id]);
  const interval = (client: Client, prompt = "@@reply tick @@wait 0") =>
    mustCall<Task>(client, "schedule_task", {
      projectId: lab.projectId,
      target: { providerInstanceId: "alpha" },
      prompt,
      schedule: { type: "interval", everyMs: 60_000 },
    });
  /** Moves the clock past the next occurrence and waits until the scheduler looked. */
  const nextOccurrence = async () => {
    clock.advance(61_000);
    await lab.host.scheduler.settled();
  };

  it("pauses a token's tasks when `switchyard token revoke` runs beside the server, says how many, and resumes one under the resumer's token", async () => {
    const maker = await issue();
    const makerClient = await clientOf(maker.token);
    const task = await interval(makerClient);
    expect(task.authority).toEqual({ kind: "token", id: maker.id, state: "active" });
    await nextOccurrence();
    await until("the first run", () => started(task.scheduledTaskId) === 1);

    const revoked = await runCli(["token", "revoke", maker.id, "--home", lab.t.home]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain(`Revoked ${maker.id}`);
    expect(revoked.stdout).toContain("Paused 1 scheduled task that ran under it");

    const operator = await clientOf((await issue()).token);
    const paused = await taskAs(operator, task.scheduledTaskId);
    expect(paused).toMatchObject({
      enabled: false,
      pausedReason: "credential_revoked",
      authority: { kind: "token", id: maker.id, state: "revoked" },
    });
    expect(paused.pausedDetail).toContain(`Token ${maker.id}`);
    // The server never heard the CLI's commit: the task's occurrence comes and starts nothing.
    await nextOccurrence();
    expect(started(task.scheduledTaskId)).toBe(1);

    // Resuming takes operate, and modes at least as broad as the task's (the maker's ceiling was the broadest).
    const reader = await clientOf((await issue({ capabilities: ["orchestration:read"] })).token);
    const narrow = await clientOf(
      (await issue({ ceiling: { runtimeMode: "approval-required", interactionMode: "default" } })).token,
    );
    expect(
      await callTool(reader, "schedule_task", { scheduledTaskId: task.scheduledTaskId, enabled: true }),
    ).toMatchObject({ ok: false, code: "capability_denied" });
    expect(
      await callTool(narrow, "schedule_task", { scheduledTaskId: task.scheduledTaskId, enabled: true }),
    ).toMatchObject({ ok: false, code: "runtime_mode_escalation_denied" });
    const resumed = await mustCall<Task>(operator, "schedule_task", {
      scheduledTaskId: task.scheduledTaskId,
      enabled: true,
    });
    const operatorId = resumed.authority!.id!;
    expect(resumed).toMatchObject({ enabled: true, pausedReason: null, authority: { kind: "token", state: "active" } });
    expect(operatorId).not.toBe(maker.id);
    await nextOccurrence();
    await until("a run under the resumer's token", () => started(task.scheduledTaskId) === 2);
    for (const client of [makerClient, operator, reader, narrow]) await client.close();
  });

  it("pauses a task at its next firing once its token expired, and a webhook task at its next request once its token was revoked", async () => {
    const shortLived = await issue({ ttlMs: 10 * 60_000 });
    const client = await clientOf(shortLived.token);
    const timed = await interval(client);
    const hook = await mustCall<Task>(client, "schedule_task", {
      projectId: lab.projectId,
      target: { providerInstanceId: "alpha" },
      prompt: "@@reply hooked @@wait 0",
      schedule: { type: "webhook" },
    });
    await client.close();
    const startedBefore = started(timed.scheduledTaskId);

    // Eleven minutes on, the token has expired: no revoke event, only the clock.
    clock.advance(11 * 60_000);
    await lab.host.scheduler.settled();
    await until(
      "the expired token's task to pause",
      () => lab.host.store.get("scheduledTask", timed.scheduledTaskId)!.enabled === false,
    );
    expect(lab.host.store.get("scheduledTask", timed.scheduledTaskId)!.pause).toMatchObject({
      reason: "credential_expired",
    });
    expect(started(timed.scheduledTaskId)).toBe(startedBefore);

    // A webhook whose token was revoked without its tasks being paused (the registry only):
    // the next request pauses it and is recorded as skipped, starting nothing. Work that reads
    // awaited (issue 33) may still hold a transaction open: the token is written in the store's turn.
    const webhookMaker = await issue();
    const makerClient = await clientOf(webhookMaker.token);
    const revokedHook = await mustCall<Task>(makerClient, "schedule_task", {
      projectId: lab.projectId,
      target: { providerInstanceId: "alpha" },
      prompt: "@@reply hooked @@wait 0",
      schedule: { type: "webhook" },
    });
    await makerClient.close();
    expect(lab.registry.revoke(webhookMaker.id)).toBe(true);
    const lapsed = await httpRequest(revokedHook.webhookUrl!, { body: "{}" });
    expect(lapsed.status, lapsed.text).toBe(200);
    expect(lapsed.json).toMatchObject({ status: "skipped", reason: "credential_revoked" });
    const after = await httpRequest(revokedHook.webhookUrl!, { body: "{}" });
    expect(after.json).toMatchObject({ status: "skipped", reason: "paused" });
    expect(String(after.json!.detail)).toContain(`Token ${webhookMaker.id}`);
    expect(started(revokedHook.scheduledTaskId)).toBe(0);
    // The expired token's webhook task was paused too (by the scheduler's look after the jump, or by this request).
    const expiredHook = await httpRequest(hook.webhookUrl!, { body: "{}" });
    expect(expiredHook.json).toMatchObject({ status: "skipped" });
    expect(lab.host.store.get("scheduledTask", hook.scheduledTaskId)!.pause).toMatchObject({
      reason: "credential_expired",
    });
  });

  it("binds an agent's task to the credential that started its thread's tree, not to the agent's own session credential", async () => {
    const starter = await issue();
    const starterClient = await clientOf(starter.token);
    const created = await mustCall<{ threads: { thread: { threadId: string } }[] }>(starterClient, "create_threads", {
      projectId: lab.projectId,
      threads: [
        {
          target: { providerInstanceId: "alpha" },
          prompt: "@@gate agent-of-token @@reply done",
          runtimeMode: "full-access",
        },
      ],
    });
    const threadId = created.threads[0]!.thread.threadId;
    await lab.waitForLiveTurn(threadId);
    const agent = await lab.agent(threadId);
    const agentTask = await interval(agent);
    expect(agentTask.authority).toEqual({ kind: "token", id: starter.id, state: "active" });

    const revoked = await runCli(["token", "revoke", starter.id, "--home", lab.t.home, "--json"]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ id: starter.id, revoked: true, pausedSchedules: 1 });
    expect(lab.host.store.get("scheduledTask", agentTask.scheduledTaskId)).toMatchObject({
      enabled: false,
      pause: { reason: "credential_revoked" },
    });
    // The agent's own credential still works, but what it schedules would run under a revoked one.
    const refused = await callTool(agent, "schedule_task", {
      prompt: "@@reply again",
      schedule: { type: "interval", everyMs: 60_000 },
    });
    expect(refused).toMatchObject({ ok: false, code: "capability_denied" });
    expect(refused.ok ? "" : refused.message).toContain(`token ${starter.id}`);
    lab.release("agent-of-token");

    // A thread the home's owner started (in process, as the CLI does) schedules under the owner.
    const owned = await lab.liveAgent({ instance: "alpha" });
    const ownerTask = await interval(owned.client);
    expect(ownerTask.authority).toEqual({ kind: "owner", id: null, state: "active" });
    owned.release();
    await starterClient.close();
  });

  it("pauses a task that records no credential (made before tasks recorded one), lists why, and the owner resumes it with the CLI", async () => {
    const client = await clientOf((await issue()).token);
    const made = await mustCall<Task>(client, "schedule_task", {
      projectId: lab.projectId,
      target: { providerInstanceId: "alpha" },
      prompt: "@@reply legacy @@wait 0",
      schedule: { type: "webhook" },
    });
    await client.close();
    // The task as an older Switchyard wrote it: no authority, no pause.
    await lab.host.engine.execute({
      commandId: "cmd:test.legacy_task",
      operation: "test.legacy_task",
      request: {},
      handle: async (ctx) => {
        const {
          authority: _authority,
          pause: _pause,
          ...legacy
        } = (await ctx.get("scheduledTask", made.scheduledTaskId))!;
        ctx.put("scheduledTask", legacy);
        return null;
      },
    });
    expect(
      sqliteStore(lab.host.store)
        .db.prepare("SELECT authority_id FROM scheduled_tasks WHERE id = ?")
        .get(made.scheduledTaskId),
    ).toEqual({ authority_id: null });
    // The scheduler's next look (at start, then every few minutes) pauses it.
    clock.advance(6 * 60_000);
    await until(
      "the legacy task to pause",
      () => lab.host.store.get("scheduledTask", made.scheduledTaskId)!.enabled === false,
    );

    const listed = await runCli(["schedules", "list", "--home", lab.t.home]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout.split("\n").find((line) => line.startsWith(made.scheduledTaskId))).toContain(
      "paused: authority_unknown",
    );
    const resumed = await runCli(["schedules", "resume", made.scheduledTaskId, "--home", lab.t.home, "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({
      enabled: true,
      pausedReason: null,
      authority: { kind: "owner", state: "active" },
    });
    const answer = await httpRequest(made.webhookUrl!, { body: "{}" });
    expect(answer.status, answer.text).toBe(202);

    const unknown = await runCli(["schedules", "resume", "sched_nope", "--home", lab.t.home]);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain("switchyard schedules list");
  });
});
