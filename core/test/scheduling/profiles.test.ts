import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FULL_SCRIPTED_CAPABILITIES } from "@switchyard/testkit";
import { TOKENS } from "../../src/host/tokens.js";
import { ApiClient, ok, type FailureBody } from "../support/api-client.js";
import { runCli } from "../support/cli.js";
import { callTool, connectMcp, mustCall } from "../support/mcp-client.js";
import { McpLab } from "../support/mcp-lab.js";
import { JumpClock } from "../support/jump-clock.js";
import { scriptedInstance } from "../support/test-host.js";

const HOUR_MS = 3_600_000;

const reviewerFile = (model: string, maxRuntimeMode = "auto-accept-edits") =>
  [
    "---",
    "description: Reviews a change and reports findings",
    "target:",
    "  providerInstanceId: beta",
    `  model: ${model}`,
    `maxRuntimeMode: ${maxRuntimeMode}`,
    "---",
    "Review the change as the scheduled reviewer.",
    "",
  ].join("\n");

const versionOf = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex").slice(0, 16)}`;

type Trigger = { outcome: string; reason: string | null; detail: string | null; threadId: string | null };
type Task = {
  scheduledTaskId: string;
  profile: string | null;
  providerInstanceId: string;
  model: string | null;
  runtimeMode: string;
  bindToCurrentThread: boolean;
  enabled: boolean;
  recentTriggers: Trigger[];
  notes?: string[];
};

/**
 * `profile` on scheduled tasks (issue 36): checked at creation through the path every entry point
 * takes, stored by name, resolved again at each fire; a fire whose profile was removed or would
 * now be refused fails with the reason on the task, never running without it. Over the real MCP
 * endpoint, engine and SQLite, with scripted providers and a clock the test moves.
 */
describe("scheduled tasks with a profile (real MCP endpoint; scripted providers)", () => {
  let lab: McpLab;
  let client: Client;
  let agentsDir: string;
  const clock = new JumpClock();
  beforeAll(async () => {
    const { tools } = FULL_SCRIPTED_CAPABILITIES;
    const bare = {
      ...FULL_SCRIPTED_CAPABILITIES,
      tools: { ...tools, rules: { allow: false, deny: false, ask: false, allowOnly: false } },
    };
    lab = await McpLab.start({
      scheduling: { minIntervalMs: 100 },
      overrides: (c) => c.register(TOKENS.Clock, { useValue: clock }),
      providers: ({ home, gateDir }) => [
        scriptedInstance("alpha", { gateDir, stateDir: `${home}/scripted-state`, models: ["alpha-large"] }),
        scriptedInstance("beta", { gateDir, stateDir: `${home}/scripted-state`, models: ["beta-1", "beta-2"] }),
        scriptedInstance("bare", { gateDir, stateDir: `${home}/scripted-state`, capabilities: bare }),
      ],
      profiles: [
        {
          name: "planner",
          description: "Plans, changes nothing",
          maxInteractionMode: "plan",
          instructions: "Only plan.",
        },
        { name: "no-shell", description: "Works without a shell", tools: { deny: ["shell"] } },
        {
          name: "frugal",
          description: "A small token budget",
          target: { providerInstanceId: "alpha" },
          budget: { tokens: 100 },
        },
      ],
    });
    agentsDir = join(lab.t.workspace, ".switchyard", "agents");
    mkdirSync(agentsDir, { recursive: true });
    writeFileSync(join(agentsDir, "reviewer.md"), reviewerFile("beta-2"));
    client = await connectMcp(
      lab.server.mcpUrl,
      lab.registry.issueClientToken({ ttlMs: 30 * 86_400_000, capabilities: ["orchestration:operate"] }).token,
    );
  });
  afterAll(async () => {
    await client.close();
    await lab.stop();
  });

  const triggersOf = (id: string) =>
    lab.host.store.select("scheduledTrigger", "task_id = ?", [id], "ORDER BY created_at, rowid");
  /** Moves the clock one interval on and waits for the trigger it fires. */
  const fireNext = async (id: string) => {
    const before = triggersOf(id).length;
    clock.advance(HOUR_MS);
    const fired = await lab.host.waiter.waitFor(
      () => (triggersOf(id).length > before ? triggersOf(id).at(-1)! : null),
      { timeoutMs: 20_000 },
    );
    expect(fired, `a trigger of ${id}`).not.toBeNull();
    await lab.host.scheduler.settled();
    return fired!;
  };
  const listed = async (id: string) =>
    (await mustCall<{ tasks: Task[] }>(client, "list_scheduled_tasks", { projectId: lab.projectId })).tasks.find(
      (task) => task.scheduledTaskId === id,
    )!;
  const instructionsOf = async (threadId: string) =>
    (
      await lab.host.waiter.waitFor(() => lab.host.store.select("attempt", "thread_id = ?", [threadId])[0] ?? null, {
        timeoutMs: 10_000,
      })
    )?.instructions ?? null;
  const settle = async (threadId: string) => {
    const run = lab.host.store.select("run", "thread_id = ?", [threadId])[0]!;
    await lab.host.threads.waitForRun({ threadId, runId: run.id, timeoutMs: 20_000 });
  };

  it("a fire's thread runs on the profile's provider and model, with its instructions, and records it", async () => {
    const created = await mustCall<Task>(client, "schedule_task", {
      projectId: lab.projectId,
      prompt: "@@reply reviewed",
      schedule: { type: "interval", everyMs: HOUR_MS },
      profile: "reviewer",
    });
    expect(created).toMatchObject({
      profile: "reviewer",
      providerInstanceId: "beta",
      model: "beta-2",
      runtimeMode: "auto-accept-edits",
      bindToCurrentThread: false,
    });
    const fired = await fireNext(created.scheduledTaskId);
    expect(fired).toMatchObject({ outcome: "started" });
    const thread = lab.host.store.get("thread", fired.threadId!)!;
    const file = join(agentsDir, "reviewer.md");
    expect(thread).toMatchObject({
      providerInstanceId: "beta",
      model: "beta-2",
      runtimeMode: "auto-accept-edits",
      creationSource: "scheduler",
      profile: { name: "reviewer", source: "switchyard", file, version: versionOf(readFileSync(file, "utf8")) },
    });
    const instructions = await instructionsOf(thread.id);
    expect(instructions).toMatch(/^Review the change as the scheduled reviewer\.\n\n/);
    expect(instructions).toContain(`scheduled task "`);
    await settle(thread.id);

    // Resolved again at the next fire: the user moved the profile to another model meanwhile.
    writeFileSync(file, reviewerFile("beta-1"));
    const next = await fireNext(created.scheduledTaskId);
    expect(next.outcome).toBe("started");
    expect(lab.host.store.get("thread", next.threadId!)).toMatchObject({
      model: "beta-1",
      profile: { name: "reviewer", version: versionOf(reviewerFile("beta-1")) },
    });
    await settle(next.threadId!);
    // The terminal's listing names the profile where the runs go.
    const table = await runCli(["schedules", "list", "--home", lab.t.home]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout.split("\n").find((line) => line.startsWith(created.scheduledTaskId))).toContain(
      "new thread (profile reviewer)",
    );
    writeFileSync(file, reviewerFile("beta-2"));
    await mustCall(client, "delete_scheduled_task", { scheduledTaskId: created.scheduledTaskId });
  });

  it("a fire's thread carries the profile's budget as its root budget (no note says otherwise)", async () => {
    const created = await mustCall<Task>(client, "schedule_task", {
      projectId: lab.projectId,
      prompt: "@@usage in=100 out=50 @@reply spent",
      schedule: { type: "interval", everyMs: HOUR_MS },
      profile: "frugal",
    });
    expect((created.notes ?? []).join(" ")).not.toContain("budget");
    const fired = await fireNext(created.scheduledTaskId);
    expect(fired).toMatchObject({ outcome: "started" });
    expect(lab.host.store.get("thread", fired.threadId!)!.profileBudget).toEqual({
      tokens: 100,
      costUsd: null,
      wallClockMs: null,
    });
    await settle(fired.threadId!);
    // The run's own turn used 150 tokens of the root's 100.
    const exceeded = await lab.host.waiter.waitFor(
      () => lab.host.store.get("budget", `budget:root:${fired.threadId!}`)?.exceeded ?? null,
      { timeoutMs: 10_000 },
    );
    expect(exceeded).toMatchObject({ limit: "tokens", used: 150, allowed: 100 });
    await mustCall(client, "delete_scheduled_task", { scheduledTaskId: created.scheduledTaskId });
  });

  it("refuses an unknown profile, a widening field and a profile the provider cannot carry at creation, saving nothing", async () => {
    const before = lab.host.store.count("scheduledTask", "1 = 1");
    const base = { projectId: lab.projectId, prompt: "@@reply x", schedule: { type: "interval", everyMs: HOUR_MS } };
    const unknown = await callTool(client, "schedule_task", { ...base, profile: "nobody" });
    expect(unknown).toMatchObject({
      ok: false,
      code: "invalid_request",
      message: expect.stringContaining('There is no profile "nobody"'),
      details: { profile: "nobody", availableProfiles: expect.arrayContaining(["reviewer", "planner", "no-shell"]) },
    });
    const wider = await callTool(client, "schedule_task", { ...base, profile: "reviewer", runtimeMode: "full-access" });
    expect(wider).toMatchObject({
      ok: false,
      code: "runtime_mode_escalation_denied",
      details: { field: "runtimeMode", profile: "reviewer", limit: "auto-accept-edits" },
    });
    const otherModel = await callTool(client, "schedule_task", {
      ...base,
      profile: "reviewer",
      target: { model: "beta-1" },
    });
    expect(otherModel).toMatchObject({ ok: false, code: "invalid_request", details: { field: "target.model" } });
    const uncarried = await callTool(client, "schedule_task", {
      ...base,
      profile: "no-shell",
      target: { providerInstanceId: "bare" },
    });
    expect(uncarried).toMatchObject({
      ok: false,
      code: "capability_denied",
      details: { reason: "profile_not_enforceable", profile: "no-shell", providerInstanceId: "bare" },
    });
    const bound = await callTool(client, "schedule_task", { ...base, profile: "planner", bindToCurrentThread: true });
    expect(bound).toMatchObject({ ok: false, code: "invalid_request", details: { field: "bindToCurrentThread" } });
    expect(lab.host.store.count("scheduledTask", "1 = 1")).toBe(before);

    // Explicit fields may narrow it, as on every other entry point.
    const narrowed = await mustCall<Task>(client, "schedule_task", {
      ...base,
      profile: "planner",
      target: { providerInstanceId: "alpha" },
      runtimeMode: "approval-required",
      schedule: { type: "interval", everyMs: 100 * HOUR_MS },
    });
    expect(narrowed).toMatchObject({ profile: "planner", runtimeMode: "approval-required" });
    expect(lab.host.store.get("scheduledTask", narrowed.scheduledTaskId)!.interactionMode).toBe("plan");
    await mustCall(client, "delete_scheduled_task", { scheduledTaskId: narrowed.scheduledTaskId });
  });

  it("a fire whose profile was removed fails with the reason on the task; after it is restored the next fire runs", async () => {
    const file = join(agentsDir, "reviewer.md");
    const created = await mustCall<Task>(client, "schedule_task", {
      projectId: lab.projectId,
      prompt: "@@reply again",
      schedule: { type: "interval", everyMs: HOUR_MS },
      profile: "reviewer",
    });
    const startedBefore = lab.host.store.count("thread", "json_extract(data, '$.creationSource') = 'scheduler'");
    rmSync(file);
    const failed = await fireNext(created.scheduledTaskId);
    expect(failed).toMatchObject({ outcome: "failed", reason: "profile_not_found", runId: null, threadId: null });
    // No run went out without the profile.
    expect(lab.host.store.count("thread", "json_extract(data, '$.creationSource') = 'scheduler'")).toBe(startedBefore);
    const shown = await listed(created.scheduledTaskId);
    expect(shown.profile).toBe("reviewer");
    expect(shown.recentTriggers[0]).toMatchObject({
      outcome: "failed",
      reason: "profile_not_found",
      detail: expect.stringContaining('profile "reviewer" no longer exists'),
    });
    expect(shown.recentTriggers[0]!.detail).toContain('"planner"');

    // A profile that no longer allows the task's modes fails the fire too (never a silent narrowing or fallback).
    writeFileSync(file, reviewerFile("beta-2", "approval-required"));
    const refused = await fireNext(created.scheduledTaskId);
    expect(refused).toMatchObject({ outcome: "failed", reason: "profile_refused" });
    expect(refused.detail).toContain("runtime_mode_escalation_denied");

    writeFileSync(file, reviewerFile("beta-2"));
    const restored = await fireNext(created.scheduledTaskId);
    expect(restored.outcome).toBe("started");
    expect(lab.host.store.get("thread", restored.threadId!)).toMatchObject({
      providerInstanceId: "beta",
      profile: { name: "reviewer" },
    });
    await settle(restored.threadId!);
    expect((await listed(created.scheduledTaskId)).recentTriggers[0]).toMatchObject({ outcome: "started" });
    await mustCall(client, "delete_scheduled_task", { scheduledTaskId: created.scheduledTaskId });
  });

  it("a fire whose profile the provider can no longer carry fails with the reason, never running without its rules", async () => {
    const file = join(agentsDir, "bare-worker.md");
    const bareWorker = (deny: string[]) =>
      [
        "---",
        "description: Works on the bare provider",
        "target:",
        "  providerInstanceId: bare",
        ...(deny.length > 0 ? ["tools:", `  deny: [${deny.join(", ")}]`] : []),
        "---",
        "Work plainly.",
        "",
      ].join("\n");
    writeFileSync(file, bareWorker([]));
    const created = await mustCall<Task>(client, "schedule_task", {
      projectId: lab.projectId,
      prompt: "@@reply bare",
      schedule: { type: "interval", everyMs: HOUR_MS },
      profile: "bare-worker",
    });
    expect(created.providerInstanceId).toBe("bare");
    // The user adds a deny rule the bare provider cannot enforce.
    writeFileSync(file, bareWorker(["shell"]));
    const refused = await fireNext(created.scheduledTaskId);
    expect(refused).toMatchObject({ outcome: "failed", reason: "profile_refused", threadId: null });
    expect(refused.detail).toContain("capability_denied");
    expect(refused.detail).toContain("tools.rules.deny");
    expect((await listed(created.scheduledTaskId)).recentTriggers[0]).toMatchObject({ reason: "profile_refused" });
    rmSync(file);
    await mustCall(client, "delete_scheduled_task", { scheduledTaskId: created.scheduledTaskId });
  });

  it("an update may change or remove the profile, through the same checks", async () => {
    const created = await mustCall<Task>(client, "schedule_task", {
      projectId: lab.projectId,
      prompt: "@@reply updated",
      schedule: { type: "interval", everyMs: 100 * HOUR_MS },
      target: { providerInstanceId: "alpha" },
    });
    expect(created.profile).toBeNull();
    const unknown = await callTool(client, "schedule_task", { scheduledTaskId: created.scheduledTaskId, profile: "x" });
    expect(unknown).toMatchObject({ ok: false, code: "invalid_request", details: { profile: "x" } });
    const planned = await mustCall<Task>(client, "schedule_task", {
      scheduledTaskId: created.scheduledTaskId,
      profile: "planner",
    });
    expect(planned).toMatchObject({ profile: "planner", providerInstanceId: "alpha" });
    expect(lab.host.store.get("scheduledTask", created.scheduledTaskId)!.interactionMode).toBe("plan");
    const removed = await mustCall<Task>(client, "schedule_task", {
      scheduledTaskId: created.scheduledTaskId,
      profile: null,
    });
    expect(removed.profile).toBeNull();
    await mustCall(client, "delete_scheduled_task", { scheduledTaskId: created.scheduledTaskId });
  });

  it("the HTTP API takes profile on create and update, with the same typed failures", async () => {
    const token = lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:operate"] }).token;
    const api = new ApiClient(lab.server.apiUrl, token);
    const base = {
      projectId: lab.projectId,
      prompt: "@@reply api",
      schedule: { type: "interval", everyMs: 100 * HOUR_MS },
    };
    const unknown = await api.post("/scheduled-tasks", { ...base, profile: "nobody" });
    expect(unknown.status).toBe(400);
    expect((unknown.body as FailureBody).error).toMatchObject({
      code: "invalid_request",
      details: { profile: "nobody", availableProfiles: expect.arrayContaining(["reviewer", "planner"]) },
    });
    const created = await ok<Task>(api.post("/scheduled-tasks", { ...base, profile: "reviewer" }), 201);
    expect(created).toMatchObject({ profile: "reviewer", providerInstanceId: "beta", model: "beta-2" });
    const read = await ok<Task>(api.get(`/scheduled-tasks/${created.scheduledTaskId}`));
    expect(read.profile).toBe("reviewer");
    const removed = await ok<Task>(api.post(`/scheduled-tasks/${created.scheduledTaskId}`, { profile: null }));
    expect(removed.profile).toBeNull();
    await ok(api.post(`/scheduled-tasks/${created.scheduledTaskId}/delete`, {}));
  });
});
