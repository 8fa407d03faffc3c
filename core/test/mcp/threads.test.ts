import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpLab } from "../support/mcp-lab.js";
import { callTool, mustCall } from "../support/mcp-client.js";

type Shell = {
  threadId: string;
  title: string;
  status: string;
  projectId: string;
  relationship: string;
  link: string;
  createdBy: string;
  creationSource: string;
  linkedPullRequest: unknown;
  snoozed: boolean;
};
type Read = {
  thread: Shell;
  items: {
    position: number;
    kind: string;
    role: string | null;
    text: string;
    truncated: boolean;
    createdBy: string;
    creationSource: string;
  }[];
  earlierPosition: number | null;
  nextPosition: number | null;
  hasMore: boolean;
  truncatedItems: number;
};

describe("MCP thread tools", () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start();
  });
  afterAll(async () => lab.stop());

  it("creates 1–20 threads in one call: prompts start, others stay idle, per-entry providers, no lineage", async () => {
    const parent = await lab.liveAgent({ instance: "alpha", runtimeMode: "auto-accept-edits" });
    const created = await mustCall<{
      replayed: boolean;
      threads: { index: number; runId: string | null; thread: Shell }[];
    }>(parent.client, "create_threads", {
      clientRequestId: "batch-1",
      threads: [
        { prompt: "@@reply first", title: "First" },
        { title: "Idle one" },
        { prompt: "@@reply third", target: { providerInstanceId: "beta" } },
      ],
    });
    expect(created.threads).toHaveLength(3);
    expect(created.threads[1]!.runId).toBeNull();
    expect(created.threads[1]!.thread.status).toBe("idle");
    const third = lab.host.store.get("thread", created.threads[2]!.thread.threadId)!;
    expect(third).toMatchObject({
      providerInstanceId: "beta",
      runtimeMode: "auto-accept-edits",
      projectId: lab.projectId,
    });
    expect(third.lineage.relationship).toBe("root");
    // Later work on a created thread does not change what a retry of the call answers.
    await lab.host.threads.send({
      threadId: created.threads[0]!.thread.threadId,
      text: "@@reply later",
      mode: "queue",
      createdBy: "user",
      creationSource: "cli",
    });
    const again = await mustCall<{ replayed: boolean; threads: { runId: string | null; thread: Shell }[] }>(
      parent.client,
      "create_threads",
      {
        clientRequestId: "batch-1",
        threads: [
          { prompt: "@@reply first", title: "First" },
          { title: "Idle one" },
          { prompt: "@@reply third", target: { providerInstanceId: "beta" } },
        ],
      },
    );
    expect(again.replayed).toBe(true);
    expect(again.threads.map((t) => t.thread.threadId)).toEqual(created.threads.map((t) => t.thread.threadId));
    expect(again.threads.map((t) => t.runId)).toEqual(created.threads.map((t) => t.runId));
    expect(await callTool(parent.client, "create_threads", { threads: [] })).toMatchObject({
      ok: false,
      code: "invalid_request",
    });
    expect(
      await callTool(parent.client, "create_threads", { threads: Array.from({ length: 21 }, () => ({})) }),
    ).toMatchObject({ ok: false, code: "invalid_request" });
    const bad = await callTool(parent.client, "create_threads", {
      threads: [{}, { target: { providerInstanceId: "gamma" } }],
    });
    expect(bad).toMatchObject({
      ok: false,
      code: "provider_unavailable",
      message: expect.stringContaining("threads[1]"),
    });
    parent.release();
  });

  it("lists one project's threads newest first with filters and offset paging; other projects with projectId; deleted never", async () => {
    const otherDir = mkdtempSync(join(tmpdir(), "switchyard-other-"));
    try {
      const other = await lab.host.projects.add(otherDir, "other");
      for (let i = 0; i < 5; i += 1)
        await lab.host.threads.createThread({
          projectId: other.id,
          providerInstanceId: "alpha",
          title: `other ${i}`,
          createdBy: "user",
          creationSource: "cli",
        });
      const gone = (
        await lab.host.threads.createThread({
          projectId: other.id,
          providerInstanceId: "alpha",
          title: "deleted one",
          createdBy: "user",
          creationSource: "cli",
        })
      ).thread;
      await lab.host.engine.apply(async (ctx) =>
        ctx.put("thread", { ...(await ctx.require("thread", gone.id)), deletedAt: ctx.now }),
      );
      const client = await lab.client(["orchestration:read"]);
      const page1 = await mustCall<{ threads: Shell[]; total: number; hasMore: boolean; nextOffset: number | null }>(
        client,
        "t3_thread_list",
        { projectId: other.id, limit: 2 },
      );
      expect(page1).toMatchObject({ total: 5, hasMore: true, nextOffset: 2 });
      expect(page1.threads.map((t) => t.title)).toEqual(["other 4", "other 3"]);
      const page3 = await mustCall<{ threads: Shell[]; hasMore: boolean }>(client, "t3_thread_list", {
        projectId: other.id,
        limit: 2,
        offset: 4,
      });
      expect(page3).toMatchObject({ hasMore: false });
      expect(page3.threads.map((t) => t.title)).toEqual(["other 0"]);
      const filtered = await mustCall<{ threads: Shell[] }>(client, "t3_thread_list", {
        projectId: other.id,
        title: "OTHER 3",
      });
      expect(filtered.threads.map((t) => t.title)).toEqual(["other 3"]);
      const idle = await mustCall<{ total: number }>(client, "t3_thread_list", {
        projectId: other.id,
        runStatus: ["idle"],
      });
      expect(idle.total).toBe(5);
      const none = await mustCall<{ total: number }>(client, "t3_thread_list", {
        projectId: other.id,
        runStatus: ["running"],
      });
      expect(none.total).toBe(0);
      // Every status a shell can have is a filter value, "starting" too.
      const starting = await mustCall<{ total: number }>(client, "t3_thread_list", {
        projectId: other.id,
        runStatus: ["starting", "idle"],
      });
      expect(starting.total).toBe(5);
      expect(await callTool(client, "t3_thread_list", { projectId: other.id, runStatus: ["sleeping"] })).toMatchObject({
        ok: false,
        code: "invalid_request",
      });
      expect(await callTool(client, "t3_thread_list", {})).toMatchObject({ ok: false, code: "invalid_request" });
      // An agent lists its own project by default, and another with projectId.
      const agent = await lab.liveAgent();
      const own = await mustCall<{ projectId: string }>(agent.client, "t3_thread_list", {});
      expect(own.projectId).toBe(lab.projectId);
      const theirs = await mustCall<{ total: number }>(agent.client, "t3_thread_list", { projectId: other.id });
      expect(theirs.total).toBe(5);
      expect(await callTool(agent.client, "t3_thread_read", { threadId: gone.id })).toMatchObject({
        ok: false,
        code: "thread_not_found",
      });
      agent.release();
    } finally {
      rmSync(otherDir, { recursive: true, force: true });
    }
  });

  it("lists sub-agent threads only when asked", async () => {
    const parent = await lab.liveAgent();
    const task = await mustCall<{ childThreadId: string }>(parent.client, "delegate_task", {
      task: "@@reply sub",
      mode: "wait",
    });
    const without = await mustCall<{ threads: Shell[] }>(parent.client, "t3_thread_list", { limit: 100 });
    expect(without.threads.some((t) => t.threadId === task.childThreadId)).toBe(false);
    const withSubs = await mustCall<{ threads: Shell[] }>(parent.client, "t3_thread_list", {
      limit: 100,
      includeSubagents: true,
    });
    expect(withSubs.threads.find((t) => t.threadId === task.childThreadId)?.relationship).toBe("subagent");
    parent.release();
  });

  it("reads newest first for agents and oldest first for clients, pages both ways, and bounds the size", async () => {
    const { thread } = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "alpha",
      title: "long",
      createdBy: "user",
      creationSource: "cli",
    });
    for (let i = 1; i <= 6; i += 1) {
      await lab.host.threads.send({
        threadId: thread.id,
        text: `@@reply ${`answer ${i} `.repeat(i === 6 ? 2_000 : 3)}`,
        mode: "auto",
        createdBy: "user",
        creationSource: "cli",
      });
      await lab.host.threads.waitForRun({ threadId: thread.id, timeoutMs: 10_000 });
    }
    const agent = await lab.liveAgent();
    const newest = await mustCall<Read>(agent.client, "t3_thread_read", { threadId: thread.id, limit: 4 });
    expect(newest.items).toHaveLength(4);
    expect(newest.items.map((i) => i.position)).toEqual([9, 10, 11, 12]);
    expect(newest.earlierPosition).toBe(9);
    const older = await mustCall<Read>(agent.client, "t3_thread_read", {
      threadId: thread.id,
      beforePosition: newest.earlierPosition!,
      limit: 4,
    });
    expect(older.items.map((i) => i.position)).toEqual([5, 6, 7, 8]);
    const client = await lab.client(["orchestration:read"]);
    const oldest = await mustCall<Read>(client, "t3_thread_read", { threadId: thread.id, limit: 4 });
    expect(oldest.items.map((i) => i.position)).toEqual([1, 2, 3, 4]);
    expect(oldest).toMatchObject({ hasMore: true, nextPosition: 4 });
    const next = await mustCall<Read>(client, "t3_thread_read", {
      threadId: thread.id,
      afterPosition: oldest.nextPosition!,
      limit: 4,
    });
    expect(next.items.map((i) => i.position)).toEqual([5, 6, 7, 8]);
    const fromStart = await mustCall<Read>(agent.client, "t3_thread_read", {
      threadId: thread.id,
      afterPosition: -1,
      limit: 2,
    });
    expect(fromStart.items.map((i) => i.position)).toEqual([1, 2]);
    // Provenance: user messages sent by the CLI, answers from the provider.
    expect(oldest.items[0]).toMatchObject({
      kind: "user_message",
      role: "user",
      createdBy: "user",
      creationSource: "cli",
    });
    expect(oldest.items[1]).toMatchObject({
      kind: "assistant_message",
      role: "assistant",
      createdBy: "provider",
      creationSource: "provider",
    });
    // The last answer is 20k characters: bounded, flagged, and the whole result fits the budget.
    const big = await callTool<Read>(agent.client, "t3_thread_read", { threadId: thread.id, limit: 50 });
    expect(big.ok).toBe(true);
    if (big.ok) {
      expect(big.value.truncatedItems).toBeGreaterThan(0);
      expect(big.value.items.find((i) => i.position === 12)?.truncated).toBe(true);
      expect(JSON.stringify(big.value).length).toBeLessThanOrEqual(30_000);
    }
    const tight = await mustCall<Read>(agent.client, "t3_thread_read", { threadId: thread.id, maxChars: 3_000 });
    expect(JSON.stringify(tight).length).toBeLessThanOrEqual(3_000);
    expect(tight.earlierPosition).not.toBeNull();
    agent.release();
  });

  it("shows tool calls, requests and sub-agents only in the activity view", async () => {
    const parent = await lab.liveAgent();
    await mustCall(parent.client, "delegate_task", { task: "@@reply seen", mode: "wait" });
    const messages = await mustCall<Read>(parent.client, "t3_thread_read", {
      threadId: parent.threadId,
      view: "messages",
    });
    expect(messages.items.map((i) => i.kind)).toEqual(["user_message"]);
    const activity = await mustCall<Read>(parent.client, "t3_thread_read", {
      threadId: parent.threadId,
      view: "activity",
    });
    expect(activity.items.map((i) => i.kind)).toContain("subagent");
    parent.release();
  });

  it("sends in every mode and reports what was asked and what was done, including degradations", async () => {
    const agent = await lab.liveAgent({ instance: "alpha", runtimeMode: "full-access" });
    const send = (threadId: string, message: string, mode: string, clientRequestId?: string) =>
      callTool<{ delivery: string; asked: string; action: string; degraded: boolean; reason: string; runId: string }>(
        agent.client,
        "t3_thread_send",
        { threadId, message, mode, ...(clientRequestId ? { clientRequestId } : {}) },
      );

    // An idle thread: auto starts it; steer and restart have no turn to act on.
    const idle = (
      await lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId: "beta",
        runtimeMode: "auto-accept-edits",
        createdBy: "user",
        creationSource: "cli",
      })
    ).thread;
    expect(await send(idle.id, "@@reply started", "steer")).toMatchObject({ ok: false, code: "thread_not_sendable" });
    const started = await send(idle.id, "@@gate beta-hold @@reply started", "auto", "s1");
    expect(started).toMatchObject({ ok: true, value: { delivery: "started", asked: "auto" } });
    expect(await send(idle.id, "@@gate beta-hold @@reply started", "auto", "s1")).toMatchObject({
      ok: true,
      value: { delivery: "started" },
    });
    await lab.waitForLiveTurn(idle.id);
    // beta cannot steer natively: queue waits; steer interrupts and restarts (degraded), as auto
    // does (contract-surface.test.ts).
    expect(await send(idle.id, "@@reply queued", "queue")).toMatchObject({
      ok: true,
      value: { delivery: "queued", action: "queue", degraded: false },
    });
    const degraded = await send(idle.id, "@@reply after restart", "steer");
    expect(degraded).toMatchObject({ ok: true, value: { delivery: "restarted", action: "restart", degraded: true } });
    const run = await lab.host.threads.waitForRun({
      threadId: idle.id,
      runId: (degraded as { value: { runId: string } }).value.runId,
      timeoutMs: 10_000,
    });
    expect(run.run).toMatchObject({ status: "completed", summary: "after restart", attemptCount: 2 });

    // alpha steers natively.
    const live = (
      await lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId: "alpha",
        runtimeMode: "full-access",
        prompt: "@@gate alpha-hold @@reply base",
        createdBy: "user",
        creationSource: "cli",
      })
    ).thread;
    await lab.waitForLiveTurn(live.id);
    expect(await send(live.id, "extra context", "steer")).toMatchObject({
      ok: true,
      value: { delivery: "steered", degraded: false },
    });
    expect(await send(live.id, "more", "auto")).toMatchObject({ ok: true, value: { delivery: "steered" } });
    expect(await send(live.id, "@@reply later", "queue")).toMatchObject({ ok: true, value: { delivery: "queued" } });
    const restarted = await send(live.id, "@@reply restarted", "restart");
    expect(restarted).toMatchObject({ ok: true, value: { delivery: "restarted", degraded: false } });
    const restartedRun = await lab.host.threads.waitForRun({
      threadId: live.id,
      runId: (restarted as { value: { runId: string } }).value.runId,
      timeoutMs: 10_000,
    });
    expect(restartedRun.run?.summary).toBe("restarted");
    lab.release("alpha-hold");
    lab.release("beta-hold");
    agent.release();
  });

  it("stops and queues first on a provider that can interrupt but not restart", async () => {
    const stopOnly = await McpLab.start({
      providers: ({ gateDir }) => [
        { id: "alpha", driver: "scripted", options: { gateDir } },
        {
          id: "stopper",
          driver: "scripted",
          options: {
            gateDir,
            capabilities: {
              turns: { interrupt: true, terminalStatusQuality: "strong" },
              tools: { mcp: { http: true } },
              runtimeModes: ["approval-required", "auto-accept-edits", "full-access"],
            },
          },
        },
      ],
    });
    try {
      const agent = await stopOnly.liveAgent();
      const thread = (
        await stopOnly.host.threads.createThread({
          projectId: stopOnly.projectId,
          providerInstanceId: "stopper",
          prompt: "@@gate stop-hold @@reply never",
          createdBy: "user",
          creationSource: "cli",
        })
      ).thread;
      await stopOnly.waitForLiveTurn(thread.id);
      await stopOnly.host.threads.send({
        threadId: thread.id,
        text: "@@reply queued before",
        mode: "queue",
        createdBy: "user",
        creationSource: "cli",
      });
      const result = await mustCall<{ delivery: string; degraded: boolean; runId: string }>(
        agent.client,
        "t3_thread_send",
        { threadId: thread.id, message: "@@reply jumped the queue", mode: "restart" },
      );
      expect(result).toMatchObject({ delivery: "interrupted_and_queued", degraded: true });
      const done = await stopOnly.host.threads.waitForRun({
        threadId: thread.id,
        runId: result.runId,
        timeoutMs: 10_000,
      });
      expect(done.run?.summary).toBe("jumped the queue");
      const runs = stopOnly.host.store.select("run", "thread_id = ?", [thread.id], "ORDER BY ordinal");
      expect(runs.map((r) => r.status)).toEqual([
        "interrupted",
        expect.stringMatching(/queued|starting|running|completed/),
        "completed",
      ]);
      expect(
        await callTool(agent.client, "t3_thread_send", { threadId: thread.id, message: "x", mode: "steer" }),
      ).toMatchObject({ ok: false, code: "thread_not_sendable" });
      stopOnly.release("stop-hold");
      agent.release();
    } finally {
      await stopOnly.stop();
    }
  });

  it("waits for runs and interrupts them", async () => {
    const agent = await lab.liveAgent();
    const idle = (
      await lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId: "alpha",
        createdBy: "user",
        creationSource: "cli",
      })
    ).thread;
    expect(await mustCall(agent.client, "t3_thread_wait", { threadId: idle.id })).toMatchObject({
      status: "idle",
      waitTimedOut: false,
      runId: null,
    });
    expect(await mustCall(agent.client, "t3_thread_interrupt", { threadId: idle.id })).toMatchObject({
      status: "no_active_run",
    });
    const busy = (
      await lab.host.threads.createThread({
        projectId: lab.projectId,
        providerInstanceId: "alpha",
        prompt: "@@gate wait-hold @@reply waited",
        runtimeMode: "full-access",
        createdBy: "user",
        creationSource: "cli",
      })
    ).thread;
    const timedOut = await mustCall(agent.client, "t3_thread_wait", { threadId: busy.id, timeoutMs: 200 });
    expect(timedOut).toMatchObject({ waitTimedOut: true, status: expect.stringMatching(/starting|running/) });
    await lab.waitForLiveTurn(busy.id);
    const interrupted = await mustCall<{ status: string; runId: string }>(agent.client, "t3_thread_interrupt", {
      threadId: busy.id,
    });
    expect(interrupted.status).toBe("interrupt_requested");
    expect(await mustCall(agent.client, "t3_thread_wait", { threadId: busy.id })).toMatchObject({
      status: "interrupted",
      waitTimedOut: false,
    });
    expect(
      await mustCall(agent.client, "t3_thread_interrupt", { threadId: busy.id, runId: interrupted.runId }),
    ).toMatchObject({ status: "already_terminal" });
    expect(await callTool(agent.client, "t3_thread_interrupt", { threadId: busy.id, runId: "run:nope" })).toMatchObject(
      { ok: false, code: "run_not_found" },
    );
    expect(await callTool(agent.client, "t3_thread_wait", { threadId: "thread:nope" })).toMatchObject({
      ok: false,
      code: "thread_not_found",
    });
    const minimal = await McpLab.start({
      providers: ({ gateDir }) => [
        { id: "alpha", driver: "scripted", options: { gateDir } },
        {
          id: "rigid",
          driver: "scripted",
          options: { gateDir, capabilities: { turns: { terminalStatusQuality: "strong" } } },
        },
      ],
    });
    try {
      const a = await minimal.liveAgent();
      const rigid = (
        await minimal.host.threads.createThread({
          projectId: minimal.projectId,
          providerInstanceId: "rigid",
          prompt: "@@gate rigid-hold @@reply ok",
          createdBy: "user",
          creationSource: "cli",
        })
      ).thread;
      await minimal.waitForLiveTurn(rigid.id);
      expect(await callTool(a.client, "t3_thread_interrupt", { threadId: rigid.id })).toMatchObject({
        ok: false,
        code: "thread_not_interruptible",
      });
      minimal.release("rigid-hold");
      a.release();
    } finally {
      await minimal.stop();
    }
    lab.release("wait-hold");
    agent.release();
  });

  it("renames, regenerates titles, links pull requests, and replays receipts by clientRequestId", async () => {
    const agent = await lab.liveAgent({ title: "original" });
    const renamed = await mustCall<{ commandId: string; sequence: number; title: string; replayed: boolean }>(
      agent.client,
      "t3_thread_update",
      { action: "rename", title: "Renamed", clientRequestId: "r1" },
    );
    expect(renamed).toMatchObject({ title: "Renamed", replayed: false });
    expect(renamed.sequence).toBeGreaterThan(0);
    const replay = await mustCall<{ commandId: string; sequence: number; replayed: boolean }>(
      agent.client,
      "t3_thread_update",
      { action: "rename", title: "Renamed", clientRequestId: "r1" },
    );
    expect(replay).toMatchObject({ commandId: renamed.commandId, sequence: renamed.sequence, replayed: true });
    expect(
      await callTool(agent.client, "t3_thread_update", { action: "rename", title: "Other", clientRequestId: "r1" }),
    ).toMatchObject({ ok: false, code: "invalid_request" });
    expect(await callTool(agent.client, "t3_thread_update", { action: "rename" })).toMatchObject({
      ok: false,
      code: "invalid_request",
    });
    expect(await callTool(agent.client, "t3_thread_update", { action: "regenerate_title", title: "x" })).toMatchObject({
      ok: false,
      code: "invalid_request",
    });
    const regenerated = await mustCall<{ titleRegenerationPending: boolean }>(agent.client, "t3_thread_update", {
      action: "regenerate_title",
    });
    expect(regenerated.titleRegenerationPending).toBe(true);
    const settled = await lab.host.waiter.waitFor(
      () =>
        lab.host.store.get("thread", agent.threadId)!.titleRegenerationPending
          ? null
          : lab.host.store.get("thread", agent.threadId),
      { timeoutMs: 5_000 },
    );
    expect(settled?.title).toContain("@@gate");
    const linked = await mustCall<{ linkedPullRequest: { url: string; number: number } }>(
      agent.client,
      "link_pull_request",
      { url: "https://github.com/acme/app/pull/42" },
    );
    expect(linked.linkedPullRequest).toMatchObject({ url: "https://github.com/acme/app/pull/42", number: 42 });
    const read = await mustCall<Read>(agent.client, "t3_thread_read", { threadId: agent.threadId });
    expect(read.thread.linkedPullRequest).toMatchObject({ number: 42 });
    expect(await callTool(agent.client, "link_pull_request", { url: "https://example.com/not-a-pr" })).toMatchObject({
      ok: false,
      code: "invalid_request",
    });
    expect(await mustCall(agent.client, "unlink_pull_request", {})).toMatchObject({ linkedPullRequest: null });
    agent.release();
  });

  it("launches threads in the project root, a new git worktree, an existing worktree, or scratch, never broader than the caller", async () => {
    const repo = mkdtempSync(join(tmpdir(), "switchyard-repo-"));
    try {
      const git = (...args: string[]) =>
        execFileSync("git", args, {
          cwd: repo,
          env: {
            ...process.env,
            GIT_AUTHOR_NAME: "t",
            GIT_AUTHOR_EMAIL: "t@t",
            GIT_COMMITTER_NAME: "t",
            GIT_COMMITTER_EMAIL: "t@t",
          },
        })
          .toString()
          .trim();
      git("init", "-q", "-b", "main");
      writeFileSync(join(repo, "README.md"), "hi\n");
      git("add", ".");
      git("commit", "-qm", "init");
      const project = await lab.host.projects.add(repo, "repo");
      const agent = await lab.liveAgent({ projectId: project.id, runtimeMode: "auto-accept-edits" });
      type Launch = {
        thread: Shell & { cwd: string; branch: string | null; worktreePath: string | null };
        runId: string;
      };
      const root = await mustCall<Launch>(agent.client, "t3_thread_launch", { message: "@@reply at root" });
      expect(root.thread).toMatchObject({ cwd: project.rootPath, branch: "main", worktreePath: null });
      const worktree = await mustCall<Launch>(agent.client, "t3_thread_launch", {
        message: "@@reply in worktree",
        workspaceStrategy: "worktree",
        baseRef: "main",
        startFromOrigin: false,
        branch: "feature/x",
      });
      expect(worktree.thread.branch).toBe("feature/x");
      expect(worktree.thread.worktreePath).not.toBeNull();
      expect(git("worktree", "list")).toContain(worktree.thread.worktreePath!);
      const done = await lab.host.threads.waitForRun({ threadId: worktree.thread.threadId, timeoutMs: 10_000 });
      expect(done.run?.status).toBe("completed");
      const existing = await mustCall<Launch>(agent.client, "t3_thread_launch", {
        message: "@@reply reuse",
        workspaceStrategy: "existing_worktree",
        worktreePath: worktree.thread.worktreePath!,
      });
      expect(existing.thread).toMatchObject({ cwd: worktree.thread.worktreePath, branch: "feature/x" });
      const fromOrigin = await callTool(agent.client, "t3_thread_launch", {
        message: "x",
        workspaceStrategy: "worktree",
        baseRef: "main",
      });
      expect(fromOrigin).toMatchObject({
        ok: false,
        code: "invalid_request",
        message: expect.stringContaining("origin/main"),
      });
      const notAWorktree = mkdtempSync(join(tmpdir(), "switchyard-nowt-"));
      expect(
        await callTool(agent.client, "t3_thread_launch", {
          message: "x",
          workspaceStrategy: "existing_worktree",
          worktreePath: notAWorktree,
        }),
      ).toMatchObject({ ok: false, code: "invalid_request" });
      rmSync(notAWorktree, { recursive: true, force: true });
      const scratch = await mustCall<Launch>(agent.client, "t3_thread_launch", {
        message: "@@reply scratch",
        scratch: true,
      });
      expect(scratch.thread.projectId).toBe("project_scratch");
      expect(scratch.thread.cwd).toContain(join(lab.t.home, "scratch"));
      expect(
        await callTool(agent.client, "t3_thread_launch", { message: "x", runtimeMode: "full-access" }),
      ).toMatchObject({ ok: false, code: "runtime_mode_escalation_denied" });
      mkdirSync(join(repo, "unused"), { recursive: true });
      agent.release();
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});
