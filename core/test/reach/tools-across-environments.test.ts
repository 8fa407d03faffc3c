import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReachGrants } from "../../src/services/reach/reach-grants.js";
import { ReachLinks } from "../../src/services/reach/reach-links.js";
import { RemoteTasks } from "../../src/services/reach/remote-tasks.js";
import { callTool, connectMcp, mustCall } from "../support/mcp-client.js";
import { McpLab } from "../support/mcp-lab.js";
import { sqliteStore } from "../support/sqlite-store.js";

/**
 * Two real Switchyard servers on 127.0.0.2 and 127.0.0.3 (each its own home, store, scripted
 * providers and HTTP endpoint),
 * A linked to B with a grant issued on B: A's agents use the thread and task tools on B with
 * `environmentId`, delegate to B and get the result as an event, and B holds every call to the
 * grant.
 */
describe("tools across environments", () => {
  let a: McpLab;
  let b: McpLab;
  let grantId: string;
  beforeAll(async () => {
    // Two addresses of this machine, as two machines on a network would have.
    [a, b] = await Promise.all([
      McpLab.start({ listen: { host: "127.0.0.2" } }),
      McpLab.start({ listen: { host: "127.0.0.3" } }),
    ]);
    const issued = b.host.container.resolve(ReachGrants).issue({
      for: "a",
      projects: "*",
      verbs: ["read", "create", "send", "delegate", "cancel"],
      maxRuntimeMode: "auto-accept-edits",
      ttlMs: 3_600_000,
    });
    grantId = issued.grant.id;
    a.host.container.resolve(ReachLinks).add({ name: "b", url: b.server.url, secret: issued.secret });
    // A second link whose grant does not allow delegating.
    const readOnly = b.host.container.resolve(ReachGrants).issue({
      for: "a-reader",
      projects: "*",
      verbs: ["read"],
      maxRuntimeMode: "approval-required",
      ttlMs: 3_600_000,
    });
    a.host.container.resolve(ReachLinks).add({ name: "b-reader", url: b.server.url, secret: readOnly.secret });
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  const bEnvironment = () => b.registry.environmentId;
  /** Waits, on A's committed events, until `check` holds. */
  const onA = async <T>(what: string, check: () => T | null | undefined | false): Promise<T> => {
    const value = await a.host.waiter.waitFor(() => check() || null, { timeoutMs: 30_000 });
    if (value === null) throw new Error(`timed out waiting for ${what}`);
    return value as T;
  };

  it("lists the linked environments with what their grants allow", async () => {
    const agent = await a.liveAgent();
    const capabilities = await mustCall<{ environments: Record<string, unknown>[] }>(
      agent.client,
      "orchestrator_capabilities",
      {},
    );
    const listed = new Map(capabilities.environments.map((environment) => [environment.environmentId, environment]));
    expect(listed.get("b")).toMatchObject({
      reachable: true,
      ownEnvironmentId: bEnvironment(),
      verbs: ["read", "create", "send", "delegate", "cancel"],
      maxRuntimeMode: "auto-accept-edits",
      projects: [{ projectId: b.projectId, name: "main" }],
      providers: expect.arrayContaining([
        expect.objectContaining({
          providerInstanceId: "alpha",
          canRunChildTasks: true,
          models: ["alpha-large", "alpha-small"],
        }),
      ]),
    });
    expect(listed.get("b-reader")).toMatchObject({
      reachable: true,
      verbs: ["read"],
      maxRuntimeMode: "approval-required",
    });
    agent.release();
  });

  it("delegates to B and delivers the answer to the parent on A as the delegated-task result event, once", async () => {
    const parent = await a.liveAgent({ title: "parent on a" });
    const started = await mustCall<Record<string, unknown>>(parent.client, "delegate_task", {
      task: "@@reply ANSWER-FROM-B",
      target: { providerInstanceId: "alpha" },
      environmentId: "b",
      clientRequestId: "delegate-to-b",
    });
    expect(started.childThreadLink).toBe(`switchyard-thread://v2/${bEnvironment()}/${String(started.childThreadId)}`);
    // The child on B carries its foreign lineage; the grant's ceiling bounds its modes.
    const child = b.host.store.get("thread", String(started.childThreadId))!;
    expect(child.lineage.foreignParent).toMatchObject({
      environmentId: a.registry.environmentId,
      threadId: parent.threadId,
    });
    expect(child.runtimeMode).toBe("auto-accept-edits");
    // B's views name the foreign parent.
    const childOnB = await mustCall<{ thread: { foreignParent?: Record<string, unknown>; relationship: string } }>(
      parent.client,
      "t3_thread_read",
      { environmentId: "b", threadId: started.childThreadId },
    );
    expect(childOnB.thread).toMatchObject({
      relationship: "root",
      foreignParent: { environmentId: a.registry.environmentId, threadId: parent.threadId },
    });
    // A's parent shows the child.
    expect(
      a.host.store.select("item", "thread_id = ? AND kind = 'subagent'", [parent.threadId]).map((item) => item.data),
    ).toEqual([
      expect.objectContaining({
        origin: "remote_task",
        environment: "b",
        taskId: started.taskId,
        childThreadLink: started.childThreadLink,
      }),
    ]);
    // A retry of the call is the same task.
    const retried = await mustCall<Record<string, unknown>>(parent.client, "delegate_task", {
      task: "@@reply ANSWER-FROM-B",
      target: { providerInstanceId: "alpha" },
      environmentId: "b",
      clientRequestId: "delegate-to-b",
    });
    expect(retried.taskId).toBe(started.taskId);
    parent.release();

    const messageId = `message:remote-task-result:b:${String(started.taskId)}`;
    const delivered = await onA(
      "the result event",
      () => a.host.store.select("item", "thread_id = ? AND id = ?", [parent.threadId, messageId])[0],
    );
    expect(delivered.text).toContain("ANSWER-FROM-B");
    expect(delivered.text).toContain(String(started.childThreadLink));
    // task_status on A forwards to B (no environmentId needed) and reads the published result.
    const status = await mustCall<Record<string, unknown>>(await a.agent(parent.threadId), "task_status", {
      taskId: started.taskId,
    });
    expect(status).toMatchObject({
      taskId: started.taskId,
      status: "completed",
      workState: "result_available",
      summary: "ANSWER-FROM-B",
    });
    // Another agent on A does not see the task, with or without environmentId.
    const other = await a.liveAgent();
    expect(await callTool(other.client, "task_status", { taskId: started.taskId })).toMatchObject({
      ok: false,
      code: "task_not_found",
    });
    expect(await callTool(other.client, "task_status", { taskId: started.taskId, environmentId: "b" })).toMatchObject({
      ok: false,
      code: "task_not_found",
    });
    other.release();
    // B's outbox was acknowledged; A's receipt holds it once.
    await onA(
      "the acknowledgement",
      () =>
        (
          sqliteStore(b.host.store)
            .statement("SELECT acked_at FROM reach_foreign_tasks WHERE task_id = ?")
            .get(started.taskId) as {
            acked_at: number | null;
          }
        ).acked_at !== null,
    );
    expect(a.host.store.select("item", "thread_id = ? AND id = ?", [parent.threadId, messageId])).toHaveLength(1);
  });

  it("launches a thread in a project on B and waits on it, with links B built", async () => {
    const agent = await a.liveAgent();
    const launched = await mustCall<{ thread: { threadId: string; link: string; projectId: string } }>(
      agent.client,
      "t3_thread_launch",
      {
        environmentId: "b",
        projectId: b.projectId,
        message: "@@reply LAUNCHED-ON-B",
        target: { providerInstanceId: "alpha" },
      },
    );
    expect(launched.thread.link).toBe(`switchyard-thread://v2/${bEnvironment()}/${launched.thread.threadId}`);
    expect(b.host.store.get("thread", launched.thread.threadId)?.projectId).toBe(b.projectId);
    expect(a.host.store.get("thread", launched.thread.threadId)).toBeNull();
    // B's own environment id works as environmentId too (it is in the link).
    const waited = await mustCall<{ status: string; summary: string; threadLink: string }>(
      agent.client,
      "t3_thread_wait",
      { environmentId: bEnvironment(), threadId: launched.thread.threadId, timeoutMs: 30_000 },
    );
    expect(waited).toMatchObject({ status: "completed", summary: "LAUNCHED-ON-B", threadLink: launched.thread.link });
    const read = await mustCall<{ thread: { threadId: string } }>(agent.client, "t3_thread_read", {
      environmentId: "b",
      threadId: launched.thread.threadId,
    });
    expect(read.thread.threadId).toBe(launched.thread.threadId);
    const listed = await mustCall<{ threads: { threadId: string }[] }>(agent.client, "t3_thread_list", {
      environmentId: "b",
      projectId: b.projectId,
      limit: 100,
    });
    expect(listed.threads.map((thread) => thread.threadId)).toContain(launched.thread.threadId);
    const sent = await mustCall<{ runId: string }>(agent.client, "t3_thread_send", {
      environmentId: "b",
      threadId: launched.thread.threadId,
      message: "@@reply SECOND",
    });
    expect(b.host.store.get("run", sent.runId)?.threadId).toBe(launched.thread.threadId);
    agent.release();
  });

  it("refuses with typed failures: an unknown environment, a grant without delegate, a mode above the grant, an unreachable peer", async () => {
    const agent = await a.liveAgent();
    const unknown = await callTool(agent.client, "t3_thread_list", { environmentId: "nowhere" });
    expect(unknown).toMatchObject({
      ok: false,
      code: "capability_denied",
      details: { reason: "unknown_environment", environmentId: "nowhere", linkedEnvironments: ["b", "b-reader"] },
    });
    const threadsOnB = b.host.store.count("thread", "1 = 1", []);
    const noDelegate = await callTool(agent.client, "delegate_task", {
      task: "@@reply NO",
      target: { providerInstanceId: "alpha" },
      environmentId: "b-reader",
    });
    expect(noDelegate).toMatchObject({
      ok: false,
      code: "capability_denied",
      details: { verb: "delegate", environmentId: "b-reader" },
    });
    // A grant that names no profiles (the default) refuses a profile on every entry, never ignores it.
    const withProfile = await callTool(agent.client, "delegate_task", {
      task: "@@reply NO",
      target: { providerInstanceId: "alpha" },
      environmentId: "b",
      profile: "reviewer",
    });
    expect(withProfile).toMatchObject({
      ok: false,
      code: "capability_denied",
      details: { field: "profile", profile: "reviewer", reason: "profile_not_granted", allowedProfiles: [] },
    });
    for (const [tool, args] of [
      ["t3_thread_launch", { message: "@@reply NO", profile: "reviewer" }],
      ["create_threads", { threads: [{ prompt: "@@reply NO", profile: "reviewer" }] }],
    ] as const) {
      const profiled = await callTool(agent.client, tool, { environmentId: "b", projectId: b.projectId, ...args });
      expect(profiled, tool).toMatchObject({
        ok: false,
        code: "capability_denied",
        details: { field: "profile", profile: "reviewer", reason: "profile_not_granted" },
      });
    }
    const tooBroad = await callTool(agent.client, "t3_thread_launch", {
      environmentId: "b",
      projectId: b.projectId,
      message: "@@reply NO",
      target: { providerInstanceId: "alpha" },
      runtimeMode: "full-access",
    });
    expect(tooBroad).toMatchObject({
      ok: false,
      code: "runtime_mode_escalation_denied",
      details: { environmentId: "b" },
    });
    expect(b.host.store.count("thread", "1 = 1", [])).toBe(threadsOnB);
    expect(
      sqliteStore(a.host.store)
        .statement("SELECT COUNT(*) AS n FROM reach_remote_tasks WHERE link_name = 'b-reader'")
        .get(),
    ).toEqual({ n: 0 });

    // A link to a port nothing listens on.
    const grant = b.host.container
      .resolve(ReachGrants)
      .issue({ for: "gone", projects: "*", verbs: ["read"], maxRuntimeMode: "approval-required", ttlMs: 3_600_000 });
    a.host.container.resolve(ReachLinks).add({ name: "gone", url: "http://127.0.0.1:9", secret: grant.secret });
    const unreachable = await callTool(agent.client, "t3_thread_list", { environmentId: "gone" });
    expect(unreachable).toMatchObject({
      ok: false,
      code: "provider_unavailable",
      details: { reason: "unreachable", environmentId: "gone" },
    });
    const capabilities = await mustCall<{
      environments: { environmentId: string; reachable: boolean; problem: { reason: string } | null }[];
    }>(agent.client, "orchestrator_capabilities", {});
    expect(capabilities.environments.find((environment) => environment.environmentId === "gone")).toMatchObject({
      reachable: false,
      problem: { reason: "unreachable" },
    });
    await a.host.container.resolve(ReachLinks).remove("gone");
    agent.release();

    // A token scoped to some projects here does not reach past them through a link.
    const scoped = await connectMcp(
      a.server.mcpUrl,
      a.registry.issueClientToken({ ttlMs: 60_000, capabilities: ["orchestration:operate"], projects: [a.projectId] })
        .token,
    );
    try {
      expect(await callTool(scoped, "t3_thread_list", { environmentId: "b", projectId: b.projectId })).toMatchObject({
        ok: false,
        code: "capability_denied",
        details: { reason: "scoped_caller", environmentId: "b" },
      });
      expect(
        (await mustCall<{ environments?: unknown[] }>(scoped, "orchestrator_capabilities", {})).environments,
      ).toBeUndefined();
    } finally {
      await scoped.close();
    }
  });

  it("stops the very next call once the grant is revoked on B", async () => {
    const issued = b.host.container.resolve(ReachGrants).issue({
      for: "a-revocable",
      projects: "*",
      verbs: ["read", "create"],
      maxRuntimeMode: "approval-required",
      ttlMs: 3_600_000,
    });
    a.host.container.resolve(ReachLinks).add({ name: "b-revocable", url: b.server.url, secret: issued.secret });
    const agent = await a.liveAgent();
    expect(
      await callTool(agent.client, "t3_thread_list", { environmentId: "b-revocable", projectId: b.projectId }),
    ).toMatchObject({ ok: true });
    await b.host.container.resolve(ReachGrants).revoke(issued.grant.id);
    const refused = await callTool(agent.client, "t3_thread_list", {
      environmentId: "b-revocable",
      projectId: b.projectId,
    });
    expect(refused).toMatchObject({
      ok: false,
      code: "capability_denied",
      details: { reason: "grant_revoked", environmentId: "b-revocable" },
    });
    agent.release();
  });

  it("cancels the child on B with task_cancel on A", async () => {
    const parent = await a.liveAgent();
    const started = await mustCall<Record<string, unknown>>(parent.client, "delegate_task", {
      task: "@@gate never-released @@reply NEVER",
      target: { providerInstanceId: "alpha" },
      environmentId: "b",
      clientRequestId: "to-cancel",
    });
    const childThreadId = String(started.childThreadId);
    await b.waitForLiveTurn(childThreadId);
    const cancelled = await mustCall<Record<string, unknown>>(parent.client, "task_cancel", { taskId: started.taskId });
    expect(cancelled).toMatchObject({ taskId: started.taskId, cancelled: true });
    const stopped = await b.host.waiter.waitFor(
      () =>
        b.host.store
          .select("run", "thread_id = ?", [childThreadId])
          .every((run) => ["cancelled", "interrupted"].includes(run.status))
          ? true
          : null,
      { timeoutMs: 20_000 },
    );
    expect(stopped).toBe(true);
    expect(b.host.store.get("thread", childThreadId)?.stopped).toBe(true);
    // The result arrives (as interrupted) but is not delivered on its own: the parent asked for the stop.
    const receivedAt = () =>
      (
        sqliteStore(a.host.store)
          .statement("SELECT received_at FROM reach_remote_tasks WHERE remote_task_id = ?")
          .get(started.taskId) as { received_at: number | null } | undefined
      )?.received_at ?? null;
    await onA("the cancelled task's receipt", () => receivedAt() !== null);
    expect(
      a.host.store.select("item", "thread_id = ? AND id = ?", [
        parent.threadId,
        `message:remote-task-result:b:${String(started.taskId)}`,
      ]),
    ).toEqual([]);
    parent.release();
    void grantId;
  });

  it("counts children in linked environments against the delegating run's breadth budget", async () => {
    const small = await McpLab.start({ budgets: { maxConcurrentChildrenPerRun: 1 }, listen: { host: "127.0.0.2" } });
    try {
      const issued = b.host.container.resolve(ReachGrants).issue({
        for: "small",
        projects: "*",
        verbs: ["delegate", "read"],
        maxRuntimeMode: "full-access",
        ttlMs: 3_600_000,
      });
      small.host.container.resolve(ReachLinks).add({ name: "b", url: b.server.url, secret: issued.secret });
      const parent = await small.liveAgent();
      await mustCall(parent.client, "delegate_task", {
        task: "@@gate breadth-hold @@reply ONE",
        target: { providerInstanceId: "alpha" },
        environmentId: "b",
        clientRequestId: "breadth-1",
      });
      const threadsOnB = b.host.store.count("thread", "1 = 1", []);
      const second = await callTool(parent.client, "delegate_task", {
        task: "@@reply TWO",
        target: { providerInstanceId: "alpha" },
        environmentId: "b",
        clientRequestId: "breadth-2",
      });
      expect(second).toMatchObject({
        ok: false,
        code: "invalid_request",
        details: { budget: "maxConcurrentChildrenPerRun", limit: 1 },
      });
      expect(b.host.store.count("thread", "1 = 1", [])).toBe(threadsOnB);
      b.release("breadth-hold");
      parent.release();
    } finally {
      await small.stop();
    }
  });

  it("answers a blocking question of the child on B from A, and the task finishes", async () => {
    const parent = await a.liveAgent();
    const asked = await mustCall<Record<string, unknown>>(parent.client, "delegate_task", {
      task: "@@ask Which database? @@reply done with it",
      target: { providerInstanceId: "alpha" },
      environmentId: "b",
      mode: "wait",
      clientRequestId: "ask-on-b",
    });
    expect(asked).toMatchObject({ hasPendingQuestion: true, workState: "working" });
    const listed = await mustCall<{ requests: { requestId: string; questions: { id: string; question: string }[] }[] }>(
      parent.client,
      "t3_pending_request",
      { environmentId: "b", threadId: asked.childThreadId, action: "list" },
    );
    expect(listed.requests.map((request) => request.questions[0]!.question)).toEqual(["Which database?"]);
    await mustCall(parent.client, "t3_pending_request", {
      environmentId: "b",
      threadId: asked.childThreadId,
      action: "respond",
      requestId: listed.requests[0]!.requestId,
      answers: { q1: "SQLite" },
    });
    const finished = await mustCall<Record<string, unknown>>(parent.client, "delegate_task", {
      task: "@@ask Which database? @@reply done with it",
      target: { providerInstanceId: "alpha" },
      environmentId: "b",
      mode: "wait",
      clientRequestId: "ask-on-b",
    });
    expect(finished).toMatchObject({
      taskId: asked.taskId,
      status: "completed",
      workState: "result_available",
      summary: "done with it",
    });
    // The parent read the result in its wait: the outbox hand-over is acknowledged, and no wake
    // message follows (as for a local task).
    await onA(
      "the acknowledgement",
      () =>
        (
          sqliteStore(b.host.store)
            .statement("SELECT acked_at FROM reach_foreign_tasks WHERE task_id = ?")
            .get(asked.taskId) as {
            acked_at: number | null;
          }
        ).acked_at !== null,
    );
    expect(
      a.host.store.select("item", "thread_id = ? AND id = ?", [
        parent.threadId,
        `message:remote-task-result:b:${String(asked.taskId)}`,
      ]),
    ).toEqual([]);
    expect(await a.host.container.resolve(RemoteTasks).get("b", String(asked.taskId))).toMatchObject({
      delivery: "acknowledged",
      status: "completed",
    });
    parent.release();
  });
});
