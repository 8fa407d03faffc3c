import { setTimeout as sleep } from "node:timers/promises";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultProviders, McpLab } from "../support/mcp-lab.js";
import { callTool, connectMcp, mustCall } from "../support/mcp-client.js";
import { scriptedInstance } from "../support/test-host.js";

/**
 * Contract fidelity of waits, ceilings, send policy, shell fields, model short lists and retry
 * keys (seed 000; seed 002 for peer threads), through the real MCP client over HTTP, the real
 * engine on SQLite and scripted providers.
 */

type Shell = {
  threadId: string;
  title: string;
  linkedPullRequest: unknown;
  blockedOnThreadWait: boolean;
  pendingBackgroundTasks: number;
};
type Send = {
  runId: string;
  messageId: string;
  delivery: string;
  asked: string;
  action: string;
  degraded: boolean;
  reason: string;
  replayed: boolean;
};
type Wait = { runId: string | null; status: string; summary: string | null; waitTimedOut: boolean };
type Provider = {
  providerInstanceId: string;
  models: { id: string; custom?: boolean; favorite?: boolean; legacy?: boolean; callerModel?: boolean }[];
  omittedModels: number;
};

const numbered = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}-${i + 1}`);

describe("MCP contract surface: waits, ceilings, send policy, shell fields, model lists, retry keys", async () => {
  let lab: McpLab;
  let gates = 0;
  const gate = (name: string) => `${name}-${++gates}`;

  beforeAll(async () => {
    lab = await McpLab.start({
      providers: (dirs) => [
        ...defaultProviders(dirs),
        // Interrupt but no restart with new input, and no native steer.
        scriptedInstance("stopper", {
          gateDir: dirs.gateDir,
          capabilities: {
            turns: { interrupt: true, terminalStatusQuality: "strong" },
            tools: { mcp: { http: true } },
            runtimeModes: ["approval-required", "auto-accept-edits", "full-access"],
          },
        }),
        // A short, curated list: every current model is listed.
        scriptedInstance("wide", {
          gateDir: dirs.gateDir,
          models: numbered("wide", 12),
          capabilities: {
            turns: { terminalStatusQuality: "strong" },
            tools: { mcp: { http: true } },
            models: { shortList: "all_current" },
          },
        }),
        // A long catalog: the first 8 current models in the user's order.
        scriptedInstance(
          "narrow",
          {
            gateDir: dirs.gateDir,
            models: numbered("narrow", 12),
            capabilities: {
              turns: { terminalStatusQuality: "strong" },
              tools: { mcp: { http: true } },
              runtimeModes: ["approval-required", "auto-accept-edits", "full-access"],
              models: { shortList: "first_n" },
            },
          },
          { customModels: ["narrow-custom"], favoriteModels: ["narrow-11", "narrow-3"] },
        ),
      ],
    });
  });
  afterAll(async () => lab.stop());

  const idleThread = async (
    providerInstanceId: string,
    extra: {
      runtimeMode?: "approval-required" | "auto-accept-edits" | "full-access";
      interactionMode?: "plan" | "default";
      title?: string;
      prompt?: string;
      model?: string;
    } = {},
  ) =>
    (
      await lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId,
        createdBy: "user",
        creationSource: "cli",
        ...extra,
      })
    ).thread;

  /** A thread whose first turn is live at its provider, held at a gate. */
  const busyThread = async (
    providerInstanceId: string,
    script: string,
    extra: { runtimeMode?: "approval-required" | "auto-accept-edits" | "full-access"; model?: string } = {},
  ) => {
    const thread = await idleThread(providerInstanceId, { ...extra, prompt: script });
    await lab.waitForLiveTurn(thread.id);
    return thread;
  };

  it("t3_thread_wait without runId pins the latest run at call time, queued or not: a send then a wait never returns the old answer", async () => {
    const agent = await lab.liveAgent();
    const hold = gate("peer-old");
    const peer = await busyThread("alpha", `@@gate ${hold} @@reply old answer`, { runtimeMode: "full-access" });
    const sent = await mustCall<Send>(agent.client, "t3_thread_send", {
      threadId: peer.id,
      message: "@@reply new answer",
      mode: "queue",
    });
    expect(sent.delivery).toBe("queued");
    // While the old turn still runs, the wait is already pinned to the queued run.
    const pinned = await mustCall<Wait>(agent.client, "t3_thread_wait", { threadId: peer.id, timeoutMs: 200 });
    expect(pinned).toMatchObject({ runId: sent.runId, status: "queued", waitTimedOut: true });
    // The listing's shell shows the run that is live, not the newer queued one.
    type Listed = Shell & { status: string; latestRunId: string | null; queuedRuns: number };
    const listed = async () =>
      (
        await mustCall<{ threads: Listed[] }>(agent.client, "t3_thread_list", { projectId: lab.projectId, limit: 100 })
      ).threads.find((t) => t.threadId === peer.id)!;
    const live = await listed();
    expect(live).toMatchObject({ status: "running", queuedRuns: 1 });
    expect(live.latestRunId).not.toBe(sent.runId);
    lab.release(hold);
    const done = await mustCall<Wait>(agent.client, "t3_thread_wait", { threadId: peer.id });
    expect(done).toMatchObject({ runId: sent.runId, status: "completed", summary: "new answer", waitTimedOut: false });
    expect(await listed()).toMatchObject({ status: "completed", latestRunId: sent.runId, queuedRuns: 0 });
    agent.release();
  });

  it("t3_thread_update, link_pull_request and unlink_pull_request on another thread hold the privilege ceiling, like send and interrupt", async () => {
    const narrowCaller = await lab.liveAgent({ runtimeMode: "auto-accept-edits" });
    const broad = await idleThread("alpha", { runtimeMode: "full-access", title: "broad" });
    const changes: [string, Record<string, unknown>][] = [
      ["t3_thread_update", { threadId: broad.id, action: "rename", title: "taken over" }],
      ["t3_thread_update", { threadId: broad.id, action: "regenerate_title" }],
      ["link_pull_request", { threadId: broad.id, url: "https://github.com/acme/app/pull/7" }],
      ["unlink_pull_request", { threadId: broad.id }],
    ];
    for (const [tool, args] of changes) {
      expect(await callTool(narrowCaller.client, tool, args), tool).toMatchObject({
        ok: false,
        code: "runtime_mode_escalation_denied",
        details: { threadId: broad.id },
      });
    }
    expect(lab.host.store.get("thread", broad.id)).toMatchObject({
      title: "broad",
      linkedPullRequest: null,
      titleRegenerationPending: false,
    });

    const planner = await lab.liveAgent({ runtimeMode: "full-access", interactionMode: "plan" });
    const defaultMode = await idleThread("alpha", {
      runtimeMode: "approval-required",
      interactionMode: "default",
      title: "default mode",
    });
    for (const [tool, args] of changes) {
      expect(await callTool(planner.client, tool, { ...args, threadId: defaultMode.id }), tool).toMatchObject({
        ok: false,
        code: "interaction_mode_escalation_denied",
      });
    }

    // At or below the ceiling it works, and the caller's own thread is always its own to change.
    const within = await idleThread("alpha", { runtimeMode: "approval-required", title: "within" });
    expect(
      await mustCall(narrowCaller.client, "t3_thread_update", {
        threadId: within.id,
        action: "rename",
        title: "renamed below the ceiling",
      }),
    ).toMatchObject({ title: "renamed below the ceiling" });
    expect(
      await mustCall(narrowCaller.client, "link_pull_request", {
        threadId: within.id,
        url: "https://github.com/acme/app/pull/8",
      }),
    ).toMatchObject({ linkedPullRequest: { number: 8 } });
    expect(await mustCall(narrowCaller.client, "unlink_pull_request", { threadId: within.id })).toMatchObject({
      linkedPullRequest: null,
    });
    expect(await mustCall(planner.client, "t3_thread_update", { action: "rename", title: "my own" })).toMatchObject({
      title: "my own",
    });
    narrowCaller.release();
    planner.release();
  });

  it("a default send steers a fully active turn of a restart-only provider by interrupt-and-restart, reported as degraded", async () => {
    const agent = await lab.liveAgent();
    const hold = gate("beta-long");
    const peer = await busyThread("beta", `@@gate ${hold} @@reply first plan`, { runtimeMode: "auto-accept-edits" });
    const sent = await mustCall<Send>(agent.client, "t3_thread_send", {
      threadId: peer.id,
      message: "@@reply steered answer",
    });
    expect(sent).toMatchObject({
      asked: "auto",
      action: "restart",
      delivery: "restarted",
      degraded: true,
      reason: expect.stringContaining("interrupted and restarted"),
    });
    const done = await mustCall<Wait>(agent.client, "t3_thread_wait", { threadId: peer.id, runId: sent.runId });
    expect(done).toMatchObject({ status: "completed", summary: "steered answer" });
    // Same run, a second attempt: nothing waits in the queue behind the turn.
    expect(lab.host.store.get("run", sent.runId)).toMatchObject({ attemptCount: 2 });
    expect(lab.host.store.select("run", "thread_id = ?", [peer.id])).toHaveLength(1);
    lab.release(hold);
    agent.release();
  });

  it("a default send queues behind a live turn of a provider that can only stop it, degraded, and never stops the turn", async () => {
    const agent = await lab.liveAgent();
    const hold = gate("stopper-long");
    const peer = await busyThread("stopper", `@@gate ${hold} @@reply first answer`);
    const sent = await mustCall<Send>(agent.client, "t3_thread_send", {
      threadId: peer.id,
      message: "@@reply second answer",
    });
    expect(sent).toMatchObject({
      asked: "auto",
      action: "queue",
      delivery: "queued",
      degraded: true,
      reason: expect.stringContaining("neither steer"),
    });
    lab.release(hold);
    const done = await mustCall<Wait>(agent.client, "t3_thread_wait", { threadId: peer.id, runId: sent.runId });
    expect(done).toMatchObject({ status: "completed", summary: "second answer" });
    const runs = lab.host.store.select("run", "thread_id = ?", [peer.id], "ORDER BY ordinal");
    expect(runs.map((run) => [run.status, run.summary])).toEqual([
      ["completed", "first answer"],
      ["completed", "second answer"],
    ]);
    agent.release();
  });

  it("a turn running /compact or /logout is never steered or restarted; a default send queues behind it", async () => {
    const agent = await lab.liveAgent();
    const hold = gate("compact");
    const peer = await busyThread("alpha", `/compact @@gate ${hold} @@reply compacted`, { runtimeMode: "full-access" });
    for (const mode of ["steer", "restart"]) {
      expect(
        await callTool(agent.client, "t3_thread_send", { threadId: peer.id, message: "more context", mode }),
        mode,
      ).toMatchObject({
        ok: false,
        code: "thread_not_sendable",
        message: expect.stringContaining("maintenance command"),
      });
    }
    const queued = await mustCall<Send>(agent.client, "t3_thread_send", {
      threadId: peer.id,
      message: "@@reply after compaction",
    });
    expect(queued).toMatchObject({ asked: "auto", action: "queue", delivery: "queued", degraded: false });
    lab.release(hold);
    const done = await mustCall<Wait>(agent.client, "t3_thread_wait", { threadId: peer.id, runId: queued.runId });
    expect(done).toMatchObject({ status: "completed", summary: "after compaction" });
    expect(
      lab.host.store.select("run", "thread_id = ?", [peer.id], "ORDER BY ordinal").map((run) => run.summary),
    ).toEqual(["compacted", "after compaction"]);
    agent.release();
  });

  it("blockedOnThreadWait is a live blocking wait by the thread's agent; pendingBackgroundTasks counts its unfinished delegated work", async () => {
    const observer = await lab.client(["orchestration:read"]);
    const shellOf = async (threadId: string) =>
      (await mustCall<{ thread: Shell }>(observer, "t3_thread_read", { threadId, limit: 1 })).thread;
    const listed = async (threadId: string) =>
      (
        await mustCall<{ threads: Shell[] }>(observer, "t3_thread_list", { projectId: lab.projectId, limit: 100 })
      ).threads.find((t) => t.threadId === threadId)!;
    /** The shell once a wait has registered (bounded: a wait registers as soon as its call arrives). */
    const whenBlocked = async (threadId: string) => {
      for (let attempt = 0; attempt < 200; attempt += 1) {
        const shell = await shellOf(threadId);
        if (shell.blockedOnThreadWait) return shell;
        await sleep(25);
      }
      throw new Error(`thread ${threadId} never showed blockedOnThreadWait`);
    };

    const waiter = await lab.liveAgent();
    expect(await shellOf(waiter.threadId)).toMatchObject({ blockedOnThreadWait: false, pendingBackgroundTasks: 0 });

    // Blocked in t3_thread_wait: no delegated work at all.
    const peerHold = gate("watched-peer");
    const peer = await busyThread("alpha", `@@gate ${peerHold} @@reply peer done`, { runtimeMode: "full-access" });
    const waiting = mustCall<Wait>(waiter.client, "t3_thread_wait", { threadId: peer.id });
    expect(await whenBlocked(waiter.threadId)).toMatchObject({ blockedOnThreadWait: true, pendingBackgroundTasks: 0 });
    expect(await listed(waiter.threadId)).toMatchObject({ blockedOnThreadWait: true });
    // The thread waited on is not the one blocked.
    expect(await shellOf(peer.id)).toMatchObject({ blockedOnThreadWait: false });
    lab.release(peerHold);
    expect(await waiting).toMatchObject({ status: "completed", summary: "peer done" });
    expect(await shellOf(waiter.threadId)).toMatchObject({ blockedOnThreadWait: false, pendingBackgroundTasks: 0 });

    // Unfinished delegated work without a wait: pending, not blocked.
    const childHold = gate("child");
    const task = { task: `@@gate ${childHold} @@reply child done`, clientRequestId: "shell-fields-child" };
    const started = await mustCall<{ taskId: string; status: string }>(waiter.client, "delegate_task", {
      ...task,
      mode: "async",
    });
    expect(await shellOf(waiter.threadId)).toMatchObject({ blockedOnThreadWait: false, pendingBackgroundTasks: 1 });
    // Blocked in a delegate_task wait on it (the retry key replays the same task).
    const waitingTask = mustCall<{ taskId: string; status: string }>(waiter.client, "delegate_task", {
      ...task,
      mode: "wait",
    });
    expect(await whenBlocked(waiter.threadId)).toMatchObject({ blockedOnThreadWait: true, pendingBackgroundTasks: 1 });
    lab.release(childHold);
    expect(await waitingTask).toMatchObject({ taskId: started.taskId, status: "completed" });
    expect(await shellOf(waiter.threadId)).toMatchObject({ blockedOnThreadWait: false, pendingBackgroundTasks: 0 });
    waiter.release();
  });

  it("lists every current model for an all_current provider, and the first 8 in the user's order (custom, favorites, provider) for the others", async () => {
    const client = await lab.client(["orchestration:read"]);
    const providers = async (caller: Client, search?: string) =>
      Object.fromEntries(
        (
          await mustCall<{ providers: Provider[] }>(
            caller,
            "orchestrator_capabilities",
            search === undefined ? {} : { search },
          )
        ).providers.map((p) => [p.providerInstanceId, p]),
      ) as Record<string, Provider>;
    const all = await providers(client);
    expect(all.wide!.models.map((m) => m.id)).toEqual(numbered("wide", 12));
    expect(all.wide!.omittedModels).toBe(0);
    // narrow: the custom model, the favorites in their configured order, then narrow's own order.
    expect(all.narrow!.models).toEqual([
      { id: "narrow-custom", custom: true },
      { id: "narrow-11", favorite: true },
      { id: "narrow-3", favorite: true },
      { id: "narrow-1" },
      { id: "narrow-2" },
      { id: "narrow-4" },
      { id: "narrow-5" },
      { id: "narrow-6" },
    ]);
    expect(all.narrow!.omittedModels).toBe(5);
    // A provider that declares nothing keeps the shorter rule.
    expect(all.beta!.models.map((m) => m.id)).toEqual(numbered("beta", 8));
    expect(all.beta!.omittedModels).toBe(4);
    const searched = await providers(client, "narrow-12");
    expect(searched.narrow!.models.map((m) => m.id).slice(-1)).toEqual(["narrow-12"]);
    expect(searched.narrow!.omittedModels).toBe(4);

    // The caller's own model is always listed, besides the first 8.
    const hold = gate("narrow-caller");
    const callerThread = await busyThread("narrow", `@@gate ${hold} @@reply ok`, {
      model: "narrow-9",
      runtimeMode: "full-access",
    });
    const agent = await lab.agent(callerThread.id);
    const own = await providers(agent);
    expect(own.narrow!.models.map((m) => m.id)).toEqual([
      "narrow-custom",
      "narrow-11",
      "narrow-3",
      "narrow-1",
      "narrow-2",
      "narrow-4",
      "narrow-5",
      "narrow-6",
      "narrow-9",
    ]);
    expect(own.narrow!.models.find((m) => m.id === "narrow-9")).toEqual({ id: "narrow-9", callerModel: true });
    expect(own.narrow!.omittedModels).toBe(4);
    lab.release(hold);
  });

  it("an agent's clientRequestId survives a new provider session of its thread; another thread's or another token's key is its own", async () => {
    const peer = await idleThread("alpha", { runtimeMode: "full-access" });
    const firstHold = gate("retry-first");
    const parent = await busyThread("alpha", `@@gate ${firstHold} @@reply first turn`, { runtimeMode: "full-access" });
    const firstSession = await lab.agent(parent.id);
    const firstGrant = lab.registry.grants.filter((g) => g.threadId === parent.id).at(-1)!;
    const delegated = { task: "@@reply child result", clientRequestId: "round-1", mode: "wait" };
    const task = await mustCall<{ taskId: string; status: string }>(firstSession, "delegate_task", delegated);
    expect(task.status).toBe("completed");
    const sent = await mustCall<Send>(firstSession, "t3_thread_send", {
      threadId: peer.id,
      message: "@@reply hello peer",
      clientRequestId: "send-1",
    });
    lab.release(firstHold);
    expect((await lab.host.threads.waitForRun({ threadId: parent.id, timeoutMs: 10_000 })).run?.status).toBe(
      "completed",
    );

    // The provider session ends (as at a restart); the next run opens a new one with a new credential.
    await lab.host.sessions.close(parent.id, "test_session_end");
    const secondHold = gate("retry-second");
    await lab.host.threads.send({
      threadId: parent.id,
      text: `@@gate ${secondHold} @@reply second turn`,
      mode: "auto",
      createdBy: "user",
      creationSource: "cli",
    });
    await lab.waitForLiveTurn(parent.id);
    const secondSession = await lab.agent(parent.id);
    const secondGrant = lab.registry.grants.filter((g) => g.threadId === parent.id).at(-1)!;
    expect(secondGrant.providerSessionId).not.toBe(firstGrant.providerSessionId);

    const retried = await mustCall<{ taskId: string }>(secondSession, "delegate_task", delegated);
    expect(retried.taskId).toBe(task.taskId);
    expect(lab.host.store.count("delegatedTask", "parent_thread_id = ?", [parent.id])).toBe(1);
    const resent = await mustCall<Send>(secondSession, "t3_thread_send", {
      threadId: peer.id,
      message: "@@reply hello peer",
      clientRequestId: "send-1",
    });
    expect(resent).toMatchObject({ messageId: sent.messageId, runId: sent.runId, replayed: true });
    expect(lab.host.store.select("run", "thread_id = ?", [peer.id])).toHaveLength(1);

    // The same key from another thread is that thread's own work.
    const other = await lab.liveAgent();
    const othersTask = await mustCall<{ taskId: string }>(other.client, "delegate_task", delegated);
    expect(othersTask.taskId).not.toBe(task.taskId);
    lab.release(secondHold);
    other.release();

    // Clients: keyed to the token, across connections.
    const tokenA = lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:operate"] }).token;
    const tokenB = lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:operate"] }).token;
    const batch = {
      projectId: lab.projectId,
      clientRequestId: "client-batch",
      threads: [{ title: "client thread", target: { providerInstanceId: "alpha" } }],
    };
    const created = async (token: string) => {
      const client = await connectMcp(lab.server.mcpUrl, token);
      try {
        return (await mustCall<{ threads: { thread: { threadId: string } }[] }>(client, "create_threads", batch))
          .threads[0]!.thread.threadId;
      } finally {
        await client.close();
      }
    };
    const fromA = await created(tokenA);
    expect(await created(tokenA)).toBe(fromA);
    expect(await created(tokenB)).not.toBe(fromA);
  });
});
