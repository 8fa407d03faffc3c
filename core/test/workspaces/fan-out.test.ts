import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import { acpAgentInstance, GROK_PLUGIN_DIR } from "../support/acp-agent-instance.js";
import { makeGitRepo, type GitRepo } from "../support/git-repo.js";
import { callTool, mustCall } from "../support/mcp-client.js";
import { defaultProviders, McpLab } from "../support/mcp-lab.js";

type Workspace = {
  status: string;
  path: string;
  branch: string | null;
  hasChanges: boolean | null;
  disposition: string | null;
  lastOutcome: { outcome: string } | null;
};
type Task = { taskId: string; childThreadId: string; changes?: Workspace | null };
type ChangeSet = {
  diff: string;
  files: { path: string; status: string }[];
  commits: { subject: string }[];
  uncommitted: boolean;
  workspace: Workspace;
  nextOffset: number | null;
  totalChars: number;
};
type Decision = {
  outcome: { outcome: string; files: string[]; commit: string | null } | null;
  pending: boolean;
  replayed: boolean;
  workspace: Workspace;
};

// Three children on a real ACP agent (the testkit's scripted agent through the Grok plugin) each
// get a git worktree of a real repository and write the same file differently; the parent (an
// agent in a live turn, over the real MCP endpoint) reads each change set, applies one, meets a
// conflict applying another, and discards the third.
describe("a parent fans out children into their own worktrees and takes their changes back", () => {
  let lab: McpLab;
  let repo: GitRepo;
  let projectId: string;

  beforeAll(async () => {
    lab = await McpLab.start({
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR, GROK_PLUGIN_DIR],
      providers: (dirs) => [...defaultProviders(dirs), acpAgentInstance("acp", dirs)],
      workspaces: { retentionMs: 0 },
    });
    repo = makeGitRepo({ "shared.txt": "the original line\n", "README.md": "hello\n" });
    projectId = (await lab.host.projects.add(repo.path, "repo")).id;
  }, 60_000);
  afterAll(async () => {
    await lab?.stop();
    repo?.cleanup();
  }, 60_000);

  const childTask = (label: string) => `@write shared.txt ${label} rewrote this line\n@say ${label} is done`;

  it("gives each child a worktree outside the parent's tree; diffs, apply, a conflict that changes nothing, discard", async () => {
    const parent = await lab.liveAgent({ projectId, runtimeMode: "full-access" });
    const start = repo.head();
    const tasks = await Promise.all(
      ["a", "b", "c"].map((label) =>
        mustCall<Task>(parent.client, "delegate_task", {
          task: childTask(label),
          title: `child ${label}`,
          target: { providerInstanceId: "acp" },
          workspace: "worktree",
          clientRequestId: `fan-out-${label}`,
        }),
      ),
    );
    for (const task of tasks) {
      const thread = lab.host.store.get("thread", task.childThreadId)!;
      expect(thread.workspaceStrategy).toBe("worktree");
      expect(thread.cwd.startsWith(repo.path)).toBe(false);
      expect(thread.cwd.startsWith(join(lab.t.home, "worktrees"))).toBe(true);
      const done = await lab.host.threads.waitForRun({ threadId: task.childThreadId, timeoutMs: 60_000 });
      expect(done.run?.status, JSON.stringify(done.run?.error)).toBe("completed");
    }
    // The children never wrote into the parent's workspace.
    expect(repo.read("shared.txt")).toBe("the original line\n");
    expect(repo.status()).toBe("");
    expect(repo.head()).toBe(start);

    const changes: Record<string, ChangeSet> = {};
    for (const [index, label] of ["a", "b", "c"].entries()) {
      const read = await mustCall<ChangeSet>(parent.client, "read_changes", { threadId: tasks[index]!.childThreadId });
      expect(read.files).toEqual([{ path: "shared.txt", status: "M", insertions: 1, deletions: 1 }]);
      expect(read.diff).toContain("-the original line");
      expect(read.diff).toContain(`+${label} rewrote this line`);
      expect(read.commits.map((commit) => commit.subject)).toEqual([`child ${label}`]);
      expect(read.uncommitted).toBe(false);
      expect(readFileSync(join(read.workspace.path, "shared.txt"), "utf8")).toBe(`${label} rewrote this line`);
      changes[label] = read;
    }
    // A page at a time: a small page ends at nextOffset and the pages make up the whole diff.
    const first = await mustCall<ChangeSet & { offset: number }>(parent.client, "read_changes", {
      threadId: tasks[0]!.childThreadId,
      maxChars: 1_000,
      path: "shared.txt",
    });
    expect(first.totalChars).toBe(changes["a"]!.totalChars);
    await lab.host.drainEffects();
    const status = await mustCall<Task>(parent.client, "task_status", { taskId: tasks[0]!.taskId });
    expect(status.changes).toMatchObject({ status: "ready", hasChanges: true, disposition: null });
    const read = await mustCall<{ changes?: Workspace }>(parent.client, "t3_thread_read", {
      threadId: tasks[1]!.childThreadId,
    });
    expect(read.changes).toMatchObject({ hasChanges: true, branch: changes["b"]!.workspace.branch });

    const applied = await mustCall<Decision>(parent.client, "apply_changes", {
      threadId: tasks[0]!.childThreadId,
      clientRequestId: "apply-a",
    });
    expect(applied).toMatchObject({
      pending: false,
      replayed: false,
      outcome: { outcome: "applied" },
      workspace: { disposition: "applied" },
    });
    expect(repo.read("shared.txt")).toBe("a rewrote this line");
    expect(repo.status()).toBe("");
    const afterA = repo.head();
    expect(repo.git("log", "--format=%s", `${start}..HEAD`)).toBe("child a");
    // The same request answers the same outcome; a new one finds nothing new to apply.
    expect(
      await mustCall<Decision>(parent.client, "apply_changes", {
        threadId: tasks[0]!.childThreadId,
        clientRequestId: "apply-a",
      }),
    ).toMatchObject({ replayed: true, outcome: { outcome: "applied", commit: afterA } });
    expect(
      await mustCall<Decision>(parent.client, "apply_changes", { threadId: tasks[0]!.childThreadId }),
    ).toMatchObject({ outcome: { outcome: "nothing_to_apply" } });
    expect(repo.head()).toBe(afterA);

    const conflict = await mustCall<Decision>(parent.client, "apply_changes", { threadId: tasks[1]!.childThreadId });
    expect(conflict.outcome).toMatchObject({ outcome: "conflict", files: ["shared.txt"], commit: null });
    expect(repo.head()).toBe(afterA);
    expect(repo.read("shared.txt")).toBe("a rewrote this line");
    expect(repo.status()).toBe("");
    // cherry-pick conflicts the same way, and changes nothing either.
    expect(
      (
        await mustCall<Decision>(parent.client, "apply_changes", {
          threadId: tasks[1]!.childThreadId,
          method: "cherry-pick",
        })
      ).outcome,
    ).toMatchObject({ outcome: "conflict", files: ["shared.txt"] });
    expect(repo.head()).toBe(afterA);
    expect(repo.status()).toBe("");
    expect(repo.git("worktree", "list").split("\n")).toHaveLength(4);

    const branchC = changes["c"]!.workspace.branch!;
    expect(repo.branches()).toContain(branchC);
    const discarded = await mustCall<Decision>(parent.client, "discard_changes", { threadId: tasks[2]!.childThreadId });
    expect(discarded).toMatchObject({
      pending: false,
      outcome: { outcome: "discarded" },
      workspace: { status: "removed", disposition: "discarded" },
    });
    expect(repo.branches()).not.toContain(branchC);
    expect(existsSync(changes["c"]!.workspace.path)).toBe(false);
    expect(await callTool(parent.client, "apply_changes", { threadId: tasks[2]!.childThreadId })).toMatchObject({
      ok: false,
      code: "invalid_request",
      details: { reason: "removed" },
    });
    // Its conversation has no folder to go on in.
    expect(
      await callTool(parent.client, "t3_thread_send", { threadId: tasks[2]!.childThreadId, message: "one more thing" }),
    ).toMatchObject({
      ok: false,
      code: "thread_not_sendable",
      details: { reason: "workspace_removed" },
    });

    // Settling the applied child removes its worktree and branch once retention (0 here) passed.
    const branchA = changes["a"]!.workspace.branch!;
    await mustCall(parent.client, "set_thread_settled", { threadId: tasks[0]!.childThreadId, settled: true });
    const removed = await lab.host.waiter.waitFor(
      () =>
        lab.host.store.get("workspace", `workspace:${tasks[0]!.childThreadId}`)?.status === "removed" ? true : null,
      { timeoutMs: 20_000 },
    );
    expect(removed).toBe(true);
    expect(existsSync(changes["a"]!.workspace.path)).toBe(false);
    expect(repo.branches()).not.toContain(branchA);
    // The undecided child's worktree stays, whatever happens to its thread.
    expect(existsSync(changes["b"]!.workspace.path)).toBe(true);
    expect(repo.read("shared.txt")).toBe("a rewrote this line");
    parent.release();
  }, 180_000);
});
