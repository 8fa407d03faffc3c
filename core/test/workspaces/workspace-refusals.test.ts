import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import { acpAgentInstance, GROK_PLUGIN_DIR } from "../support/acp-agent-instance.js";
import { ApiClient } from "../support/api-client.js";
import { makeGitRepo, type GitRepo } from "../support/git-repo.js";
import { callTool, mustCall } from "../support/mcp-client.js";
import { defaultProviders, McpLab } from "../support/mcp-lab.js";

type Workspace = { status: string; path: string; branch: string | null; strategy: string };
type Task = { taskId: string; childThreadId: string; changes?: Workspace | null };
type Decision = { outcome: { outcome: string; files: string[]; message: string | null } | null };
type Capabilities = {
  projects: { projectId: string; workspaces?: string[]; defaultWorkspace?: string }[];
  features: { workspaces?: boolean };
};

/** The id `switchyard project add` gives a folder. */
function projectIdFor(folder: string): string {
  return `project_${createHash("sha256").update(realpathSync(folder)).digest("hex").slice(0, 16)}`;
}

// Who may take a child's changes back, and what each workspace strategy refuses: every
// refusal is typed, names what is wrong, and leaves the parent's tree as it was.
describe("workspaces: choices, refusals and who may apply", () => {
  let lab: McpLab;
  let repo: GitRepo;
  let defaulted: GitRepo;
  let plain: string;
  let projectId: string;

  beforeAll(async () => {
    repo = makeGitRepo({ "shared.txt": "base\n" });
    defaulted = makeGitRepo({ "notes.txt": "base\n" });
    plain = mkdtempSync(join(tmpdir(), "switchyard-plain-"));
    lab = await McpLab.start({
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR, GROK_PLUGIN_DIR],
      providers: (dirs) => [...defaultProviders(dirs), acpAgentInstance("acp", dirs)],
      workspaces: {
        projectDefaults: { [projectIdFor(defaulted.path)]: "worktree", [realpathSync(plain)]: "worktree" },
      },
    });
    projectId = (await lab.host.projects.add(repo.path, "repo")).id;
    await lab.host.projects.add(defaulted.path, "defaulted");
    await lab.host.projects.add(plain, "plain");
  }, 60_000);
  afterAll(async () => {
    await lab?.stop();
    repo?.cleanup();
    defaulted?.cleanup();
    rmSync(plain, { recursive: true, force: true });
  }, 60_000);

  /** Delegates a task that writes a file, and waits for the child's run to end. */
  async function child(
    client: Parameters<typeof mustCall>[0],
    args: Record<string, unknown>,
    content = "@write shared.txt changed\n@say done",
  ): Promise<Task> {
    const task = await mustCall<Task>(client, "delegate_task", {
      task: content,
      target: { providerInstanceId: "acp" },
      ...args,
    });
    const done = await lab.host.threads.waitForRun({ threadId: task.childThreadId, timeoutMs: 60_000 });
    expect(done.run?.status, JSON.stringify(done.run?.error)).toBe("completed");
    return task;
  }

  it("lists each project's strategies; shared stays the default; a project default and scratch apply; a folder without git has no worktrees", async () => {
    const parent = await lab.liveAgent({ projectId });
    const capabilities = await mustCall<Capabilities>(parent.client, "orchestrator_capabilities", {});
    expect(capabilities.features.workspaces).toBe(true);
    const listed = (id: string) => capabilities.projects.find((project) => project.projectId === id);
    expect(listed(projectId)).toMatchObject({
      workspaces: ["shared", "worktree", "scratch", "existing"],
      defaultWorkspace: "shared",
    });
    expect(listed(projectIdFor(plain))).toMatchObject({
      workspaces: ["shared", "scratch"],
      defaultWorkspace: "worktree",
    });
    expect(listed(projectIdFor(defaulted.path))).toMatchObject({ defaultWorkspace: "worktree" });

    // Without workspace: the parent's own workspace, as seed 000 says; it has no change set.
    const shared = await child(parent.client, { clientRequestId: "shared" }, "@say nothing written");
    expect(lab.host.store.get("thread", shared.childThreadId)).toMatchObject({
      cwd: repo.path,
      workspaceStrategy: "root",
    });
    expect(shared.changes ?? null).toBeNull();
    expect(await callTool(parent.client, "read_changes", { threadId: shared.childThreadId })).toMatchObject({
      ok: false,
      code: "invalid_request",
      details: { reason: "shared_workspace" },
    });

    // A project whose default is worktree gives one without asking.
    const inDefaulted = await child(
      parent.client,
      { projectId: projectIdFor(defaulted.path), clientRequestId: "defaulted" },
      "@write notes.txt by default\n@say done",
    );
    expect(lab.host.store.get("thread", inDefaulted.childThreadId)).toMatchObject({ workspaceStrategy: "worktree" });
    expect(defaulted.read("notes.txt")).toBe("base\n");

    // Explicit worktree on a folder without git: refused, naming what the project supports;
    // its default of worktree falls back to shared with a note.
    const refused = await callTool(parent.client, "delegate_task", {
      task: "x",
      projectId: projectIdFor(plain),
      workspace: "worktree",
      target: { providerInstanceId: "acp" },
    });
    expect(refused).toMatchObject({
      ok: false,
      code: "invalid_request",
      details: { supported: ["shared", "scratch"] },
    });
    expect(refused.ok === false && refused.message).toContain("not a git repository");
    const fallback = await child(
      parent.client,
      { projectId: projectIdFor(plain), clientRequestId: "plain-default" },
      "@say fine",
    );
    expect(lab.host.store.get("thread", fallback.childThreadId)).toMatchObject({
      cwd: realpathSync(plain),
      workspaceStrategy: "root",
    });

    // scratch: an empty folder of its own, outside the project; nothing to apply.
    const scratch = await child(
      parent.client,
      { workspace: "scratch", clientRequestId: "scratch" },
      "@write scratch.txt hi\n@say done",
    );
    const scratchThread = lab.host.store.get("thread", scratch.childThreadId)!;
    expect(scratchThread.workspaceStrategy).toBe("scratch");
    expect(scratchThread.cwd.startsWith(join(lab.t.home, "worktrees"))).toBe(true);
    expect(readdirSync(scratchThread.cwd)).toEqual(["scratch.txt"]);
    expect(existsSync(join(repo.path, "scratch.txt"))).toBe(false);
    expect(await callTool(parent.client, "apply_changes", { threadId: scratch.childThreadId })).toMatchObject({
      ok: false,
      code: "invalid_request",
    });

    // A child in a worktree cannot write into the parent's workspace through its session's file system.
    const escape = await child(
      parent.client,
      { workspace: "worktree", clientRequestId: "escape" },
      `@write ${join(repo.path, "escape.txt")} from outside\n@say tried`,
    );
    const escaped = await mustCall<{ summary: string }>(parent.client, "task_status", { taskId: escape.taskId });
    expect(escaped.summary).toContain("write error");
    expect(existsSync(join(repo.path, "escape.txt"))).toBe(false);

    // Bad choices are refused before anything is created.
    const before = lab.host.store.count("thread", "1 = 1");
    expect(
      await callTool(parent.client, "delegate_task", {
        task: "x",
        workspace: { strategy: "worktree", baseRef: "no-such-branch" },
      }),
    ).toMatchObject({ ok: false, code: "invalid_request", message: expect.stringContaining("no-such-branch") });
    expect(
      await callTool(parent.client, "delegate_task", { task: "x", workspace: { strategy: "shared", path: "/tmp" } }),
    ).toMatchObject({ ok: false, code: "invalid_request" });
    expect(
      await callTool(parent.client, "delegate_task", { task: "x", workspace: { strategy: "existing" } }),
    ).toMatchObject({ ok: false, code: "invalid_request", message: expect.stringContaining("path") });
    expect(
      await callTool(parent.client, "delegate_task", {
        task: "x",
        workspace: { strategy: "existing", path: repo.path },
      }),
    ).toMatchObject({ ok: false, code: "invalid_request", message: expect.stringContaining("parent's own workspace") });
    expect(
      await callTool(parent.client, "delegate_task", {
        task: "x",
        workspace: { strategy: "worktree", branch: "main" },
      }),
    ).toMatchObject({ ok: false, code: "invalid_request", message: expect.stringContaining("already exists") });
    expect(
      await callTool(parent.client, "create_threads", {
        threads: [{ prompt: "x", workspace: "worktree" }],
        projectId: projectIdFor(plain),
      }),
    ).toMatchObject({
      ok: false,
      code: "invalid_request",
      message: expect.stringContaining("threads[0]"),
    });
    expect(lab.host.store.count("thread", "1 = 1")).toBe(before);
    parent.release();
  }, 180_000);

  it("refuses apply to anyone but the parent, to approval-required modes and while the child works; an existing worktree is never removed", async () => {
    const parent = await lab.liveAgent({ projectId, runtimeMode: "full-access" });
    const task = await child(
      parent.client,
      { workspace: "worktree", clientRequestId: "guarded" },
      "@write guarded.txt from the guarded child\n@say done",
    );
    const workspace = lab.host.store.get("workspace", `workspace:${task.childThreadId}`)!;

    const stranger = await lab.liveAgent({ projectId, runtimeMode: "full-access" });
    expect(await callTool(stranger.client, "apply_changes", { threadId: task.childThreadId })).toMatchObject({
      ok: false,
      code: "invalid_request",
      message: expect.stringContaining("not to yours"),
    });
    expect(await callTool(stranger.client, "discard_changes", { threadId: task.childThreadId })).toMatchObject({
      ok: false,
      code: "invalid_request",
    });

    // An approval-required parent could not write these files without asking: neither may it apply them.
    const careful = await lab.liveAgent({ projectId, runtimeMode: "approval-required" });
    const carefulTask = await child(careful.client, { workspace: "worktree", clientRequestId: "careful" });
    expect(await callTool(careful.client, "apply_changes", { threadId: carefulTask.childThreadId })).toMatchObject({
      ok: false,
      code: "runtime_mode_escalation_denied",
    });

    // Clients: operate on the project and a ceiling that allows edits without asking (a person's web UI token).
    const api = new ApiClient(
      lab.server.apiUrl,
      lab.registry.issueClientToken({
        ttlMs: 60_000,
        capabilities: ["orchestration:operate"],
        projects: [projectId],
        ceiling: { runtimeMode: "approval-required", interactionMode: "default" },
      }).token,
    );
    const refusedByApi = await api.post(`/threads/${encodeURIComponent(carefulTask.childThreadId)}/changes/apply`, {});
    expect(refusedByApi.status).toBe(403);
    expect(refusedByApi.body.error.code).toBe("runtime_mode_escalation_denied");
    const elsewhere = new ApiClient(
      lab.server.apiUrl,
      lab.registry.issueClientToken({
        ttlMs: 60_000,
        capabilities: ["orchestration:operate"],
        projects: [projectIdFor(plain)],
      }).token,
    );
    expect(
      (await elsewhere.get(`/threads/${encodeURIComponent(carefulTask.childThreadId)}/changes`)).body.error.code,
    ).toBe("thread_not_found");
    const person = new ApiClient(
      lab.server.apiUrl,
      lab.registry.issueClientToken({
        ttlMs: 60_000,
        capabilities: ["orchestration:operate"],
        projects: [projectId],
        ceiling: { runtimeMode: "auto-accept-edits", interactionMode: "default" },
      }).token,
    );
    const changes = await person.get(`/threads/${encodeURIComponent(carefulTask.childThreadId)}/changes`);
    expect(changes.status).toBe(200);
    expect(changes.body.files).toEqual([{ path: "shared.txt", status: "M", insertions: 1, deletions: 1 }]);
    const listed = await person.get("/workspaces", { projectId });
    expect(listed.body.workspaces.map((entry: { threadId: string }) => entry.threadId)).toContain(
      carefulTask.childThreadId,
    );
    const applied = await person.post(
      `/threads/${encodeURIComponent(carefulTask.childThreadId)}/changes/apply`,
      {},
      { "Idempotency-Key": "person-apply" },
    );
    expect(applied.status, applied.text).toBe(200);
    expect(applied.body.outcome).toMatchObject({ outcome: "applied" });
    // Into the careful parent's workspace (the project folder), not the client's.
    expect(repo.read("shared.txt")).toBe("changed");

    // Uncommitted work of the parent (a new file of its own) where the apply writes: a conflict, nothing touched.
    repo.write("guarded.txt", "the parent's own file\n");
    const headBefore = repo.head();
    const blocked = await mustCall<Decision>(parent.client, "apply_changes", { threadId: task.childThreadId });
    expect(blocked.outcome).toMatchObject({
      outcome: "conflict",
      files: ["guarded.txt"],
      message: expect.stringContaining("uncommitted"),
    });
    expect(repo.read("guarded.txt")).toBe("the parent's own file\n");
    expect(repo.head()).toBe(headBefore);
    rmSync(join(repo.path, "guarded.txt"));

    // A child that works again may not be applied under its feet.
    await lab.host.threads.send({
      threadId: task.childThreadId,
      text: "@gate child-busy\n@say again",
      mode: "queue",
      createdBy: "user",
      creationSource: "cli",
    });
    await lab.waitForLiveTurn(task.childThreadId);
    expect(await callTool(parent.client, "apply_changes", { threadId: task.childThreadId })).toMatchObject({
      ok: false,
      code: "invalid_request",
      details: { reason: "child_working" },
    });
    lab.release("child-busy");
    await lab.host.threads.waitForRun({ threadId: task.childThreadId, timeoutMs: 30_000 });
    expect(
      (await mustCall<Decision>(parent.client, "apply_changes", { threadId: task.childThreadId })).outcome,
    ).toMatchObject({ outcome: "applied" });
    expect(repo.read("guarded.txt")).toBe("from the guarded child");
    expect(repo.status()).toBe("");

    // existing: a worktree Switchyard did not make is worked in, but never removed.
    const mine = join(mkdtempSync(join(tmpdir(), "switchyard-mine-")), "wt");
    repo.git("worktree", "add", "-q", "-b", "mine", mine, "HEAD");
    const reuse = await child(
      parent.client,
      { workspace: { strategy: "existing", path: mine }, clientRequestId: "existing" },
      "@write other.txt from the existing worktree\n@say done",
    );
    expect(lab.host.store.get("thread", reuse.childThreadId)).toMatchObject({
      cwd: realpathSync(mine),
      workspaceStrategy: "existing_worktree",
      branch: "mine",
    });
    expect(await callTool(parent.client, "discard_changes", { threadId: reuse.childThreadId })).toMatchObject({
      ok: false,
      code: "invalid_request",
      details: { reason: "not_owned" },
    });
    expect(existsSync(join(mine, "other.txt"))).toBe(true);
    expect(workspace.owned).toBe(true);
    rmSync(join(mine, ".."), { recursive: true, force: true });
    parent.release();
    stranger.release();
    careful.release();
  }, 240_000);

  it("a project that is a folder of a larger repository: the child works in that folder of its worktree; a cherry-pick applies once", async () => {
    const mono = makeGitRepo({ "README.md": "the monorepo\n" });
    try {
      mkdirSync(join(mono.path, "app"));
      mono.write("app/app.txt", "app v1\n");
      mono.git("add", ".");
      mono.git("commit", "-qm", "the app");
      const appProject = (await lab.host.projects.add(join(mono.path, "app"), "app")).id;
      const parent = await lab.liveAgent({ projectId: appProject, runtimeMode: "full-access" });
      const task = await child(
        parent.client,
        { workspace: "worktree", clientRequestId: "mono" },
        "@write app.txt app v2\n@say done",
      );
      const workspace = lab.host.store.get("workspace", `workspace:${task.childThreadId}`)!;
      expect(lab.host.store.get("thread", task.childThreadId)!.cwd).toBe(join(workspace.path, "app"));
      expect(existsSync(join(workspace.path, "README.md"))).toBe(true);
      const picked = await mustCall<Decision>(parent.client, "apply_changes", {
        threadId: task.childThreadId,
        method: "cherry-pick",
      });
      expect(picked.outcome).toMatchObject({ outcome: "applied" });
      expect(mono.read("app/app.txt")).toBe("app v2");
      expect(mono.status()).toBe("");
      const head = mono.head();
      expect(
        (
          await mustCall<Decision>(parent.client, "apply_changes", {
            threadId: task.childThreadId,
            method: "cherry-pick",
          })
        ).outcome,
      ).toMatchObject({ outcome: "nothing_to_apply" });
      expect(mono.head()).toBe(head);
      parent.release();
    } finally {
      mono.cleanup();
    }
  }, 120_000);

  it("refuses a workspaces folder inside the project", async () => {
    const inside = await McpLab.start({ workspaces: { root: join(repo.path, "nested-worktrees") } });
    try {
      const project = await inside.host.projects.add(repo.path, "repo");
      const parent = await inside.liveAgent({ projectId: project.id });
      expect(await callTool(parent.client, "delegate_task", { task: "x", workspace: "worktree" })).toMatchObject({
        ok: false,
        code: "invalid_request",
        message: expect.stringContaining("workspaces.root"),
      });
      parent.release();
    } finally {
      await inside.stop();
    }
  }, 60_000);

  it("fails the child's first turn, saying why, when its worktree cannot be made; nothing starts elsewhere", async () => {
    const blocker = join(mkdtempSync(join(tmpdir(), "switchyard-blocked-")), "a-file");
    writeFileSync(blocker, "not a folder");
    const blocked = await McpLab.start({
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR, GROK_PLUGIN_DIR],
      providers: (dirs) => [...defaultProviders(dirs), acpAgentInstance("acp", dirs)],
      workspaces: { root: join(blocker, "worktrees") },
    });
    try {
      const project = await blocked.host.projects.add(repo.path, "repo");
      const parent = await blocked.liveAgent({ projectId: project.id });
      const task = await mustCall<{ taskId: string; childThreadId: string }>(parent.client, "delegate_task", {
        task: "@write x.txt never\n@say never",
        target: { providerInstanceId: "acp" },
        workspace: "worktree",
        mode: "wait",
        timeoutMs: 30_000,
      });
      const status = await mustCall<{ status: string; summary: string; changes: { status: string; error: string } }>(
        parent.client,
        "task_status",
        { taskId: task.taskId },
      );
      expect(status).toMatchObject({ status: "failed", changes: { status: "failed" } });
      expect(status.summary).toContain("Could not make the worktree workspace");
      expect(status.changes.error).toContain("Could not make the worktree workspace");
      expect(blocked.host.store.select("run", "thread_id = ?", [task.childThreadId])[0]).toMatchObject({
        status: "failed",
        error: { code: "workspace_failed" },
      });
      expect(existsSync(join(repo.path, "x.txt"))).toBe(false);
      parent.release();
    } finally {
      await blocked.stop();
      rmSync(join(blocker, ".."), { recursive: true, force: true });
    }
  }, 60_000);
});
