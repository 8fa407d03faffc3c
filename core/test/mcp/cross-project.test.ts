import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DelegateTaskResult } from "../../src/services/delegation/task-view.js";
import { McpLab } from "../support/mcp-lab.js";
import { callTool, connectMcp, mustCall } from "../support/mcp-client.js";

type Shell = { threadId: string; projectId: string; cwd: string; branch: string | null; worktreePath: string | null };

/** A git repository with one commit, so it can be a project that gets worktrees. */
function gitRepo(): string {
  const repo = mkdtempSync(join(tmpdir(), "switchyard-reach-repo-"));
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
    });
  git("init", "-q", "-b", "main");
  writeFileSync(join(repo, "README.md"), "other\n");
  git("add", ".");
  git("commit", "-qm", "init");
  return repo;
}

/**
 * Reach across projects on one server: an agent in one project delegates to, launches, lists,
 * reads and sends in another, as its scope allows (agents: `reach.agentProjects`, default every
 * project; clients: their token's projects), and is refused, typed and with nothing created,
 * where it does not.
 */
describe("threads and delegation in other projects (real MCP endpoint)", () => {
  describe("agents may use every project by default", () => {
    let lab: McpLab;
    let repo: string;
    let otherId: string;
    beforeAll(async () => {
      lab = await McpLab.start();
      repo = gitRepo();
      otherId = (await lab.host.projects.add(repo, "other")).id;
    });
    afterAll(async () => {
      await lab.stop();
      rmSync(repo, { recursive: true, force: true });
    });

    it("lists the projects it may target, and delegates a child into another project's root that reports back to the parent", async () => {
      const parent = await lab.liveAgent();
      const caps = await mustCall<{ projectId: string; projects: { projectId: string; name: string }[] }>(
        parent.client,
        "orchestrator_capabilities",
        {},
      );
      expect(caps.projectId).toBe(lab.projectId);
      // The other project is a git repository, so it has worktrees; the lab's folder is not.
      expect(caps.projects).toEqual([
        { projectId: lab.projectId, name: "main", workspaces: ["shared", "scratch"], defaultWorkspace: "shared" },
        {
          projectId: otherId,
          name: "other",
          workspaces: ["shared", "worktree", "scratch", "existing"],
          defaultWorkspace: "shared",
        },
      ]);
      const result = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
        task: "@@reply done over there",
        projectId: otherId,
        mode: "wait",
        clientRequestId: "cross-1",
      });
      expect(result).toMatchObject({ status: "completed", workState: "result_available", summary: "done over there" });
      const child = lab.host.store.get("thread", result.childThreadId)!;
      expect(child).toMatchObject({
        projectId: otherId,
        cwd: (await lab.host.projects.get(otherId))!.rootPath,
        branch: null,
        worktreePath: null,
        workspaceStrategy: "root",
      });
      expect(child.lineage).toMatchObject({ relationship: "subagent", parentThreadId: parent.threadId, depth: 1 });
      // The parent's item names the child, wherever it works.
      const item = lab.host.store.select("item", "thread_id = ? AND kind = 'subagent'", [parent.threadId])[0]!;
      expect(item.data).toMatchObject({ taskId: result.taskId, childThreadId: child.id });
      // The same key again is the same task; the same key with another project is a conflict.
      expect(
        (
          await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
            task: "@@reply done over there",
            projectId: otherId,
            clientRequestId: "cross-1",
          })
        ).taskId,
      ).toBe(result.taskId);
      expect(
        await callTool(parent.client, "delegate_task", { task: "@@reply done over there", clientRequestId: "cross-1" }),
      ).toMatchObject({ ok: false, code: "invalid_request" });
      // Naming its own project keeps the parent's workspace, as omitting it does.
      const home = await mustCall<DelegateTaskResult>(parent.client, "delegate_task", {
        task: "@@reply at home",
        projectId: lab.projectId,
        mode: "wait",
      });
      expect(lab.host.store.get("thread", home.childThreadId)).toMatchObject({
        projectId: lab.projectId,
        cwd: lab.host.store.get("thread", parent.threadId)!.cwd,
      });
      parent.release();
    });

    it("refuses an unknown project with invalid_request and creates nothing", async () => {
      const parent = await lab.liveAgent();
      const threadsBefore = lab.host.store.count("thread", "1 = 1", []);
      const tasksBefore = lab.host.store.count("delegatedTask", "1 = 1", []);
      const refused = await callTool(parent.client, "delegate_task", {
        task: "@@reply never",
        projectId: "project_nope",
        mode: "async",
      });
      expect(refused).toMatchObject({ ok: false, code: "invalid_request", details: { projectId: "project_nope" } });
      expect(
        await callTool(parent.client, "t3_thread_launch", { message: "x", projectId: "project_nope" }),
      ).toMatchObject({ ok: false, code: "invalid_request" });
      expect(
        await callTool(parent.client, "create_threads", { projectId: "project_nope", threads: [{}] }),
      ).toMatchObject({ ok: false, code: "invalid_request" });
      expect(lab.host.store.count("thread", "1 = 1", [])).toBe(threadsBefore);
      expect(lab.host.store.count("delegatedTask", "1 = 1", [])).toBe(tasksBefore);
      parent.release();
    });

    it("creates, launches (root and a new worktree), lists, reads and sends in another project", async () => {
      const agent = await lab.liveAgent({ runtimeMode: "auto-accept-edits" });
      const created = await mustCall<{ threads: { thread: Shell; runId: string | null }[] }>(
        agent.client,
        "create_threads",
        { projectId: otherId, threads: [{ title: "Over there", prompt: "@@reply created" }] },
      );
      const made = created.threads[0]!.thread;
      expect(made).toMatchObject({ projectId: otherId, cwd: (await lab.host.projects.get(otherId))!.rootPath });
      const root = await mustCall<{ thread: Shell }>(agent.client, "t3_thread_launch", {
        message: "@@reply launched",
        projectId: otherId,
      });
      expect(root.thread).toMatchObject({
        projectId: otherId,
        cwd: (await lab.host.projects.get(otherId))!.rootPath,
        branch: "main",
      });
      const worktree = await mustCall<{ thread: Shell }>(agent.client, "t3_thread_launch", {
        message: "@@reply in a worktree",
        projectId: otherId,
        workspaceStrategy: "worktree",
        baseRef: "main",
        startFromOrigin: false,
        branch: "reach/x",
      });
      expect(worktree.thread).toMatchObject({ projectId: otherId, branch: "reach/x" });
      expect(execFileSync("git", ["worktree", "list"], { cwd: repo }).toString()).toContain(
        worktree.thread.worktreePath!,
      );
      const listed = await mustCall<{ projectId: string; threads: Shell[] }>(agent.client, "t3_thread_list", {
        projectId: otherId,
        limit: 50,
      });
      expect(listed.projectId).toBe(otherId);
      expect(listed.threads.map((t) => t.threadId)).toEqual(
        expect.arrayContaining([made.threadId, root.thread.threadId, worktree.thread.threadId]),
      );
      expect((await lab.host.threads.waitForRun({ threadId: made.threadId, timeoutMs: 10_000 })).run?.status).toBe(
        "completed",
      );
      const read = await mustCall<{ thread: Shell }>(agent.client, "t3_thread_read", { threadId: made.threadId });
      expect(read.thread).toMatchObject({ threadId: made.threadId, projectId: otherId });
      const sent = await mustCall<{ threadId: string; runId: string }>(agent.client, "t3_thread_send", {
        threadId: made.threadId,
        message: "@@reply again",
      });
      expect(lab.host.store.get("run", sent.runId)).toMatchObject({ threadId: made.threadId });
      agent.release();
    });

    it("holds a client token scoped to one project to it for the same calls", async () => {
      const over = (
        await lab.host.threads.createThread({
          projectId: otherId,
          providerInstanceId: "alpha",
          runtimeMode: "auto-accept-edits",
          createdBy: "user",
          creationSource: "cli",
        })
      ).thread.id;
      const { token } = lab.registry.issueClientToken({
        ttlMs: 3_600_000,
        capabilities: ["orchestration:operate"],
        projects: [lab.projectId],
        ceiling: { runtimeMode: "full-access", interactionMode: "default" },
      });
      const client = await connectMcp(lab.server.mcpUrl, token);
      try {
        expect(
          (await mustCall<{ projects: { projectId: string }[] }>(client, "orchestrator_capabilities", {})).projects.map(
            (p) => p.projectId,
          ),
        ).toEqual([lab.projectId]);
        expect(
          await callTool(client, "create_threads", {
            projectId: otherId,
            threads: [{ target: { providerInstanceId: "alpha" } }],
          }),
        ).toMatchObject({ ok: false, code: "capability_denied", details: { projectId: otherId } });
        expect(
          await callTool(client, "t3_thread_launch", {
            message: "x",
            projectId: otherId,
            target: { providerInstanceId: "alpha" },
          }),
        ).toMatchObject({ ok: false, code: "capability_denied" });
        expect(await callTool(client, "t3_thread_list", { projectId: otherId })).toMatchObject({
          ok: false,
          code: "capability_denied",
        });
        expect(await callTool(client, "t3_thread_read", { threadId: over })).toMatchObject({
          ok: false,
          code: "thread_not_found",
        });
        expect(await callTool(client, "t3_thread_send", { threadId: over, message: "@@reply x" })).toMatchObject({
          ok: false,
          code: "thread_not_found",
        });
        // A client's session delegates from its attached thread, only into its own project.
        expect(
          await callTool(client, "delegate_task", {
            task: "x",
            projectId: otherId,
            target: { providerInstanceId: "alpha" },
          }),
        ).toMatchObject({ ok: false, code: "capability_denied" });
        const inScope = await mustCall<{ childThreadId: string }>(client, "delegate_task", {
          task: "@@reply x",
          projectId: lab.projectId,
          target: { providerInstanceId: "alpha" },
        });
        expect(lab.host.store.get("thread", inScope.childThreadId)!.projectId).toBe(lab.projectId);
      } finally {
        await client.close();
      }
      expect(lab.host.store.select("run", "thread_id = ?", [over])).toHaveLength(0);
    });
  });

  describe('with reach.agentProjects "own"', () => {
    let lab: McpLab;
    let folder: string;
    let otherId: string;
    let overThere: string;
    beforeAll(async () => {
      lab = await McpLab.start({ reach: { agentProjects: "own" } });
      folder = mkdtempSync(join(tmpdir(), "switchyard-reach-own-"));
      otherId = (await lab.host.projects.add(folder, "other")).id;
      overThere = (
        await lab.host.threads.createThread({
          projectId: otherId,
          providerInstanceId: "alpha",
          runtimeMode: "auto-accept-edits",
          createdBy: "user",
          creationSource: "cli",
        })
      ).thread.id;
    });
    afterAll(async () => {
      await lab.stop();
      rmSync(folder, { recursive: true, force: true });
    });

    it("lists only the agent's own project and refuses every call into another one, creating nothing", async () => {
      const agent = await lab.liveAgent();
      expect(
        (
          await mustCall<{ projects: { projectId: string }[] }>(agent.client, "orchestrator_capabilities", {})
        ).projects.map((p) => p.projectId),
      ).toEqual([lab.projectId]);
      const threadsBefore = lab.host.store.count("thread", "1 = 1", []);
      const denied = await callTool(agent.client, "delegate_task", { task: "@@reply never", projectId: otherId });
      expect(denied).toMatchObject({
        ok: false,
        code: "capability_denied",
        details: { projectId: otherId, allowedProjects: [lab.projectId] },
      });
      if (!denied.ok) expect(denied.message).toContain("reach.agentProjects");
      expect(await callTool(agent.client, "create_threads", { projectId: otherId, threads: [{}] })).toMatchObject({
        ok: false,
        code: "capability_denied",
      });
      expect(await callTool(agent.client, "t3_thread_launch", { message: "x", projectId: otherId })).toMatchObject({
        ok: false,
        code: "capability_denied",
      });
      expect(await callTool(agent.client, "t3_thread_list", { projectId: otherId })).toMatchObject({
        ok: false,
        code: "capability_denied",
      });
      expect(await callTool(agent.client, "t3_thread_read", { threadId: overThere })).toMatchObject({
        ok: false,
        code: "thread_not_found",
      });
      expect(
        await callTool(agent.client, "t3_thread_send", { threadId: overThere, message: "@@reply x" }),
      ).toMatchObject({ ok: false, code: "thread_not_found" });
      expect(lab.host.store.count("thread", "1 = 1", [])).toBe(threadsBefore);
      expect(lab.host.store.count("delegatedTask", "1 = 1", [])).toBe(0);
      expect(lab.host.store.select("run", "thread_id = ?", [overThere])).toHaveLength(0);
      // Its own project still works.
      const own = await mustCall<DelegateTaskResult>(agent.client, "delegate_task", {
        task: "@@reply at home",
        projectId: lab.projectId,
        mode: "wait",
      });
      expect(own).toMatchObject({ status: "completed", summary: "at home" });
      agent.release();
    });
  });
});
