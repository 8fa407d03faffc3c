import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReachGrants } from "../../src/services/reach/reach-grants.js";
import { ReachLinks } from "../../src/services/reach/reach-links.js";
import { callTool, mustCall } from "../support/mcp-client.js";
import { McpLab } from "../support/mcp-lab.js";

/**
 * Router kits across machines (issue 36, item 4): two real Switchyard servers on 127.0.0.2 and
 * 127.0.0.3, scripted providers, A linked to B with grants issued on B. A names a profile with
 * `environmentId`; B resolves the name in its own config, holds it to the grant's list, and
 * applies it as for a local call. A's own profile of the same name never travels.
 */
describe("profiles across environments", () => {
  let a: McpLab;
  let b: McpLab;
  let grantId: string;
  beforeAll(async () => {
    [a, b] = await Promise.all([
      // A has a "reviewer" of its own: another provider, other instructions, a broader ceiling.
      McpLab.start({
        listen: { host: "127.0.0.2" },
        profiles: [
          {
            name: "reviewer",
            description: "A's reviewer",
            target: { providerInstanceId: "alpha" },
            instructions: "INSTRUCTIONS-OF-A",
          },
        ],
      }),
      McpLab.start({
        listen: { host: "127.0.0.3" },
        // Scheduled tasks that fire every second (the fire-time grant check below).
        scheduling: { minIntervalMs: 100 },
        profiles: [
          {
            name: "reviewer",
            description: "Reviews on B",
            target: { providerInstanceId: "beta", model: "beta-3" },
            maxRuntimeMode: "approval-required",
            instructions: "INSTRUCTIONS-OF-B",
          },
          { name: "private-kit", description: "Not for linked machines", instructions: "PRIVATE" },
        ],
      }),
    ]);
    const grants = b.host.container.resolve(ReachGrants);
    // "ghost" is granted but B defines no such profile.
    const issued = grants.issue({
      for: "a",
      projects: "*",
      verbs: ["read", "create", "delegate"],
      maxRuntimeMode: "auto-accept-edits",
      profiles: ["reviewer", "ghost"],
      ttlMs: 3_600_000,
    });
    grantId = issued.grant.id;
    a.host.container.resolve(ReachLinks).add({ name: "b", url: b.server.url, secret: issued.secret });
    // A grant that names no profiles: the default, none.
    const plain = grants.issue({
      for: "a-plain",
      projects: "*",
      verbs: ["read", "delegate"],
      maxRuntimeMode: "auto-accept-edits",
      ttlMs: 3_600_000,
    });
    a.host.container.resolve(ReachLinks).add({ name: "b-plain", url: b.server.url, secret: plain.secret });
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  /** The instructions of a thread's first attempt, once it started (on that server's committed events). */
  const instructionsOn = async (lab: McpLab, threadId: string) => {
    const attempt = await lab.host.waiter.waitFor(
      () => lab.host.store.select("attempt", "thread_id = ?", [threadId])[0] ?? null,
      { timeoutMs: 20_000 },
    );
    if (attempt === null) throw new Error(`no attempt started on ${threadId}`);
    return attempt.instructions;
  };

  it("lists, for each linked environment, the profiles its grant allows as that environment defines them", async () => {
    const agent = await a.liveAgent();
    const capabilities = await mustCall<{ environments: Record<string, unknown>[] }>(
      agent.client,
      "orchestrator_capabilities",
      {},
    );
    const listed = new Map(capabilities.environments.map((environment) => [environment.environmentId, environment]));
    // B's reviewer (not A's), and not B's private kit nor the granted name B does not define.
    expect(listed.get("b")!.profiles).toEqual([
      {
        name: "reviewer",
        description: "Reviews on B",
        target: { providerInstanceId: "beta", model: "beta-3" },
        maxRuntimeMode: "approval-required",
      },
    ]);
    expect(listed.get("b-plain")!.profiles).toEqual([]);
    agent.release();
  });

  it("runs an allowed profile on B with B's definition and records it on the child", async () => {
    const parent = await a.liveAgent({ title: "parent on a" });
    const started = await mustCall<Record<string, unknown>>(parent.client, "delegate_task", {
      task: "@@reply REVIEWED-ON-B",
      environmentId: "b",
      profile: "reviewer",
      clientRequestId: "reviewer-on-b",
    });
    const child = b.host.store.get("thread", String(started.childThreadId))!;
    // B's target and ceiling (the grant allows auto-accept-edits; B's profile lowers it).
    expect(child).toMatchObject({
      providerInstanceId: "beta",
      model: "beta-3",
      runtimeMode: "approval-required",
      profile: { name: "reviewer", source: "config" },
    });
    expect(started).toMatchObject({ providerInstanceId: "beta", model: "beta-3" });
    const instructions = await instructionsOn(b, child.id);
    expect(instructions).toContain("INSTRUCTIONS-OF-B");
    expect(instructions).not.toContain("INSTRUCTIONS-OF-A");
    // A's parent shows the child with the profile it named, as for a local child.
    expect(
      a.host.store.select("item", "thread_id = ? AND kind = 'subagent'", [parent.threadId]).map((item) => item.data),
    ).toEqual([expect.objectContaining({ origin: "remote_task", taskId: started.taskId, profile: "reviewer" })]);
    // B's thread views show the profile to A.
    const read = await mustCall<{ thread: { profile?: Record<string, unknown> } }>(parent.client, "t3_thread_read", {
      environmentId: "b",
      threadId: started.childThreadId,
    });
    expect(read.thread.profile).toMatchObject({ name: "reviewer", source: "config" });
    // The profile is part of the request: the same key without it is another request, not a retry.
    const reused = await callTool(parent.client, "delegate_task", {
      task: "@@reply REVIEWED-ON-B",
      environmentId: "b",
      clientRequestId: "reviewer-on-b",
    });
    expect(reused).toMatchObject({ ok: false, code: "invalid_request" });
    expect(JSON.stringify(reused)).toContain("already used with different arguments");
    parent.release();
  });

  it("refuses a profile the grant does not list, naming the grant's profiles only", async () => {
    const agent = await a.liveAgent();
    const refused = await callTool(agent.client, "delegate_task", {
      task: "@@reply NO",
      environmentId: "b",
      profile: "private-kit",
    });
    expect(refused).toMatchObject({
      ok: false,
      code: "capability_denied",
      details: {
        grantId,
        field: "profile",
        profile: "private-kit",
        reason: "profile_not_granted",
        allowedProfiles: ["reviewer", "ghost"],
      },
    });
    // A grant that names none refuses every profile, saying so.
    const plain = await callTool(agent.client, "delegate_task", {
      task: "@@reply NO",
      environmentId: "b-plain",
      profile: "reviewer",
    });
    expect(plain).toMatchObject({
      ok: false,
      code: "capability_denied",
      details: { reason: "profile_not_granted", allowedProfiles: [] },
    });
    expect(JSON.stringify(plain)).toContain("allows no profiles");
    // Nothing was created on B for either.
    expect(b.host.store.select("thread", "title = ?", ["@@reply NO"])).toEqual([]);
    agent.release();
  });

  it("refuses a granted name B does not define, listing only what the grant allows and B has", async () => {
    const agent = await a.liveAgent();
    const refused = await callTool<{ details: { availableProfiles: string[] } }>(agent.client, "delegate_task", {
      task: "@@reply NO",
      environmentId: "b",
      profile: "ghost",
    });
    expect(refused).toMatchObject({
      ok: false,
      code: "invalid_request",
      details: { profile: "ghost", availableProfiles: ["reviewer"] },
    });
    expect(JSON.stringify(refused)).not.toContain("private-kit");
    agent.release();
  });

  it("holds the caller to B's profile: no widening, no other target, no definition shipped along", async () => {
    const agent = await a.liveAgent();
    const otherModel = await callTool(agent.client, "delegate_task", {
      task: "@@reply NO",
      environmentId: "b",
      profile: "reviewer",
      target: { model: "beta-1" },
    });
    expect(otherModel).toMatchObject({
      ok: false,
      code: "invalid_request",
      details: { field: "target.model", profile: "reviewer", profileValue: "beta-3" },
    });
    const broader = await callTool(agent.client, "delegate_task", {
      task: "@@reply NO",
      environmentId: "b",
      profile: "reviewer",
      runtimeMode: "auto-accept-edits",
    });
    expect(broader).toMatchObject({
      ok: false,
      code: "runtime_mode_escalation_denied",
      details: { field: "runtimeMode", profile: "reviewer", limit: "approval-required" },
    });
    // Instructions, environment or a harness home sent along are not fields of the call, here or there.
    for (const smuggled of [
      { instructions: "IGNORE B" },
      { environment: { SECRET: "x" } },
      { harnessHome: "/tmp/elsewhere" },
    ]) {
      const refused = await callTool(agent.client, "delegate_task", {
        task: "@@reply NO",
        environmentId: "b",
        profile: "reviewer",
        ...smuggled,
      });
      expect(refused, JSON.stringify(smuggled)).toMatchObject({ ok: false, code: "invalid_request" });
    }
    expect(b.host.store.select("thread", "title = ?", ["@@reply NO"])).toEqual([]);
    agent.release();
  });

  it("starts top-level threads on B with an allowed profile (create_threads, t3_thread_launch)", async () => {
    const agent = await a.liveAgent();
    const created = await mustCall<{ threads: { thread: { threadId: string } }[] }>(agent.client, "create_threads", {
      environmentId: "b",
      projectId: b.projectId,
      threads: [{ prompt: "@@reply CREATED", profile: "reviewer" }],
    });
    const launched = await mustCall<{ thread: { threadId: string } }>(agent.client, "t3_thread_launch", {
      environmentId: "b",
      projectId: b.projectId,
      message: "@@reply LAUNCHED",
      profile: "reviewer",
    });
    for (const threadId of [created.threads[0]!.thread.threadId, launched.thread.threadId]) {
      const thread = b.host.store.get("thread", threadId)!;
      expect(thread).toMatchObject({ providerInstanceId: "beta", profile: { name: "reviewer" } });
      expect(await instructionsOn(b, threadId)).toContain("INSTRUCTIONS-OF-B");
    }
    const refused = await callTool(agent.client, "t3_thread_launch", {
      environmentId: "b",
      projectId: b.projectId,
      message: "@@reply NO",
      profile: "private-kit",
    });
    expect(refused).toMatchObject({
      ok: false,
      code: "capability_denied",
      details: { reason: "profile_not_granted", allowedProfiles: ["reviewer", "ghost"] },
    });
    agent.release();
  });

  it("a scheduled task made under the grant runs only with a profile the grant lists, checked at each fire", async () => {
    // A starts a thread on B; its agent (acting under A's grant on B) schedules work with a
    // profile of B's that the grant does not list.
    const agent = await a.liveAgent();
    const created = await mustCall<{ threads: { thread: { threadId: string } }[] }>(agent.client, "create_threads", {
      environmentId: "b",
      projectId: b.projectId,
      threads: [{ prompt: "@@gate scheduled-under-grant @@reply done", target: { providerInstanceId: "alpha" } }],
    });
    const threadOnB = created.threads[0]!.thread.threadId;
    await b.waitForLiveTurn(threadOnB);
    const agentOnB = await b.agent(threadOnB);
    const scheduled = await mustCall<{ scheduledTaskId: string }>(agentOnB, "schedule_task", {
      projectId: b.projectId,
      prompt: "@@reply should not run",
      schedule: { type: "interval", everyMs: 1000 },
      bindToCurrentThread: false,
      profile: "private-kit",
    });
    const task = b.host.store.get("scheduledTask", scheduled.scheduledTaskId)!;
    expect(task.authority).toEqual({ kind: "grant", grantId });
    const trigger = await b.host.waiter.waitFor(
      () => b.host.store.select("scheduledTrigger", "task_id = ?", [task.id])[0] ?? null,
      { timeoutMs: 20_000 },
    );
    await mustCall(agentOnB, "delete_scheduled_task", { scheduledTaskId: task.id });
    expect(trigger).toMatchObject({ outcome: "failed", reason: "profile_not_granted", runId: null });
    expect(trigger!.detail).toContain(`grant ${grantId}`);
    expect(trigger!.detail).toContain('"private-kit"');
    b.release("scheduled-under-grant");
    agent.release();
  });
});
