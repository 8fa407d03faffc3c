import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import { TOKENS } from "../../src/host/tokens.js";
import { createLogger } from "../../src/logging/logger.js";
import { WorkspaceJanitor } from "../../src/services/workspaces/workspace-janitor.js";
import { acpAgentInstance, GROK_PLUGIN_DIR } from "../support/acp-agent-instance.js";
import { makeGitRepo, type GitRepo } from "../support/git-repo.js";
import { JumpClock } from "../support/jump-clock.js";
import { mustCall } from "../support/mcp-client.js";
import { until } from "../support/until.js";
import { defaultProviders, McpLab } from "../support/mcp-lab.js";

type Decision = {
  pending: boolean;
  outcome: { outcome: string } | null;
  workspace: { path: string; branch: string | null; status: string };
};

const HOUR = 60 * 60 * 1000;

// Locks another git process holds are waited out (bounded), never broken through; retention
// removes only what was decided and settled, and prune removes what nobody owns, nothing else.
describe("workspace hygiene: repository locks, retention and prune", () => {
  let lab: McpLab;
  let repo: GitRepo;
  let projectId: string;
  const clock = new JumpClock();
  const logLines: string[] = [];

  beforeAll(async () => {
    lab = await McpLab.start({
      logger: createLogger({
        level: "warn",
        format: "json",
        destination: { write: (line: string) => void logLines.push(line) },
      }),
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR, GROK_PLUGIN_DIR],
      providers: (dirs) => [...defaultProviders(dirs), acpAgentInstance("acp", dirs)],
      workspaces: { retentionMs: HOUR, lockWaitMs: 400 },
      overrides: (container) => container.register(TOKENS.Clock, { useValue: clock }),
    });
    repo = makeGitRepo({ "README.md": "hello\n" });
    projectId = (await lab.host.projects.add(repo.path, "repo")).id;
  }, 60_000);
  afterAll(async () => {
    await lab?.stop();
    repo?.cleanup();
  }, 60_000);

  async function children(parent: Awaited<ReturnType<McpLab["liveAgent"]>>, labels: readonly string[]) {
    const tasks = await Promise.all(
      labels.map((label) =>
        mustCall<{ childThreadId: string }>(parent.client, "delegate_task", {
          task: `@write ${label}.txt from ${label}\n@say done`,
          title: label,
          target: { providerInstanceId: "acp" },
          workspace: "worktree",
          clientRequestId: label,
        }),
      ),
    );
    for (const task of tasks)
      expect((await lab.host.threads.waitForRun({ threadId: task.childThreadId, timeoutMs: 60_000 })).run?.status).toBe(
        "completed",
      );
    return tasks.map((task) => task.childThreadId);
  }

  it("waits out an index.lock another git process holds: the apply is put off, never half-done, and finished once the lock is gone", async () => {
    const parent = await lab.liveAgent({ projectId, runtimeMode: "full-access" });
    const [locked] = await children(parent, ["locked"]);
    const lock = join(repo.path, ".git", "index.lock");
    const waitedOut = () =>
      logLines.filter((line) => line.includes("a change set could not be applied") && line.includes("index.lock"))
        .length;

    const before = repo.head();
    writeFileSync(lock, "");
    const call = await mustCall<Decision>(parent.client, "apply_changes", {
      threadId: locked!,
      timeoutMs: 0,
      clientRequestId: "locked",
    });
    expect(call).toMatchObject({ pending: true, outcome: null });
    // Past the lock wait (400 ms here), twice: the move is recorded and put off, nothing changed meanwhile.
    await until("the apply to meet the lock and be put off twice", () => waitedOut() >= 2, { attempts: 1_200 });
    expect(lab.host.store.get("workspace", `workspace:${locked}`)!.applying).not.toBeNull();
    expect(repo.head()).toBe(before);
    expect(existsSync(join(repo.path, "locked.txt"))).toBe(false);
    expect(readFileSync(lock, "utf8")).toBe("");
    rmSync(lock);
    const finished = await lab.host.waiter.waitFor(
      () => {
        const workspace = lab.host.store.get("workspace", `workspace:${locked}`)!;
        return workspace.outcomes.at(-1)?.outcome === "applied" ? workspace : null;
      },
      { timeoutMs: 30_000 },
    );
    expect(finished).not.toBeNull();
    expect(repo.read("locked.txt")).toBe("from locked");
    expect(repo.status()).toBe("");
    expect(
      await mustCall(parent.client, "apply_changes", { threadId: locked!, clientRequestId: "locked" }),
    ).toMatchObject({ replayed: true, outcome: { outcome: "applied" } });
    parent.release();
  }, 180_000);

  it("prunes decided workspaces of settled threads after retention (branches kept for pull requests stay) and orphans, and nothing else", async () => {
    const parent = await lab.liveAgent({ projectId, runtimeMode: "full-access" });
    const [applied, kept, undecided] = await children(parent, ["applied", "kept", "undecided"]);
    await mustCall(parent.client, "apply_changes", { threadId: applied });
    const keep = await mustCall<Decision>(parent.client, "discard_changes", { threadId: kept, keepBranch: true });
    expect(keep).toMatchObject({ outcome: { outcome: "kept" }, workspace: { status: "removed" } });
    expect(existsSync(keep.workspace.path)).toBe(false);
    expect(repo.branches()).toContain(keep.workspace.branch);
    for (const threadId of [applied!, undecided!])
      await mustCall(parent.client, "set_thread_settled", { threadId, settled: true });
    const janitor = lab.host.container.resolve(WorkspaceJanitor);
    const appliedWorkspace = lab.host.store.get("workspace", `workspace:${applied}`)!;
    const undecidedWorkspace = lab.host.store.get("workspace", `workspace:${undecided}`)!;

    // What nobody owns: a folder a removal left half-way, beside a worktree of the user's own outside the folder.
    const stray = join(lab.t.home, "worktrees", projectId, "stray-folder");
    mkdirSync(stray, { recursive: true });
    writeFileSync(join(stray, "left.txt"), "left behind");
    const users = join(mkdtempSync(join(tmpdir(), "switchyard-user-wt-")), "wt");
    repo.git("worktree", "add", "-q", "-b", "users-own", users, "HEAD");

    // Within retention only the orphan goes.
    expect(await janitor.prune({ dryRun: true })).toMatchObject({ removed: [], orphans: [stray] });
    clock.advance(HOUR + 1_000);
    const dry = await janitor.prune({ dryRun: true });
    expect(dry.removed.map((entry) => entry.threadId)).toEqual([applied]);
    expect(existsSync(appliedWorkspace.path)).toBe(true);

    const report = await janitor.prune({ dryRun: false });
    expect(report).toMatchObject({
      dryRun: false,
      removed: [{ threadId: applied, path: appliedWorkspace.path, branchKept: false }],
      orphans: [stray],
    });
    expect(existsSync(appliedWorkspace.path)).toBe(false);
    expect(repo.branches()).not.toContain(appliedWorkspace.branch);
    expect(existsSync(stray)).toBe(false);
    expect(lab.host.store.get("workspace", `workspace:${applied}`)).toMatchObject({ status: "removed" });
    // Never removed: undecided changes (whatever their thread), a kept branch, the user's own worktree, the parent's tree.
    expect(existsSync(undecidedWorkspace.path)).toBe(true);
    expect(repo.branches()).toEqual(
      expect.arrayContaining([keep.workspace.branch, undecidedWorkspace.branch, "users-own", "main"]),
    );
    expect(existsSync(join(users, "README.md"))).toBe(true);
    expect(repo.read("applied.txt")).toBe("from applied");
    expect(repo.status()).toBe("");
    expect(await janitor.prune({ dryRun: false })).toMatchObject({ removed: [], orphans: [] });
    rmSync(join(users, ".."), { recursive: true, force: true });
    parent.release();
  }, 180_000);
});
