import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { makeGitRepo, type GitRepo } from "../support/git-repo.js";
import { readRow, ServeProcess, waitForRow, writeHomeConfig } from "../support/serve-process.js";

/**
 * `threads new --workspace`, `worktrees list|prune` and doctor's workspaces line, against a real
 * `serve` on a home, beside it as a person at a terminal runs them.
 */
describe("switchyard threads new --workspace, worktrees list|prune, doctor (real serve)", () => {
  let root: string;
  let home: string;
  let repo: GitRepo;
  let serve: ServeProcess;
  const cli = (args: string[]) => runCli([...args, "--home", home], { timeoutMs: 120_000, cwd: repo.path });

  beforeAll(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "switchyard-worktrees-cli-")));
    home = join(root, "home");
    repo = makeGitRepo({ "README.md": "hello\n" });
    writeHomeConfig(home, {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [
        { id: "alpha", driver: "scripted", options: { gateDir: join(root, "gates"), stateDir: join(root, "state") } },
      ],
    });
    expect((await cli(["project", "add", repo.path])).code).toBe(0);
    serve = ServeProcess.start(home);
    await serve.ready;
  }, 120_000);
  afterAll(async () => {
    await serve?.terminate();
    repo?.cleanup();
    rmSync(root, { recursive: true, force: true });
  });

  it("starts a thread in its own worktree, lists it, prunes only what nobody owns; doctor lists them", async () => {
    const refused = await cli(["threads", "new", "@@reply x", "--workspace", "elsewhere"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--workspace "elsewhere" is not one of shared, worktree, scratch');

    const started = await cli([
      "threads",
      "new",
      "@@reply done in a worktree",
      "--workspace",
      "worktree",
      "--title",
      "cli worktree",
      "--json",
    ]);
    expect(started.code, started.stderr).toBe(0);
    const threadId = (JSON.parse(started.stdout) as { thread: { threadId: string } }).thread.threadId;
    const row = await waitForRow<{ data: string }>(
      home,
      "SELECT data FROM workspaces WHERE thread_id = ? AND status = 'ready'",
      [threadId],
    );
    const workspace = JSON.parse(row.data) as {
      path: string;
      branch: string;
      target: { threadId: string | null; path: string };
    };
    expect(workspace.path.startsWith(join(home, "worktrees"))).toBe(true);
    expect(workspace.target).toEqual({ threadId: null, path: repo.path });
    expect(repo.branches()).toContain(workspace.branch);
    expect(readRow<{ data: string }>(home, "SELECT data FROM threads WHERE id = ?", [threadId])!.data).toContain(
      '"workspaceStrategy":"worktree"',
    );

    // A folder no thread owns, as a removal cut short would leave.
    const stray = join(home, "worktrees", "stray-project", "left-over");
    mkdirSync(stray, { recursive: true });
    writeFileSync(join(stray, "file.txt"), "left behind");

    const listed = await cli(["worktrees", "list", "--json"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({
      workspaces: [{ threadId, path: workspace.path, branch: workspace.branch, disposition: null }],
      orphans: [stray],
    });
    const table = await cli(["worktrees", "list"]);
    expect(table.stdout).toContain("cli worktree");
    expect(table.stdout).toContain("1 folder(s) in the workspaces folder belong to no thread");

    const doctor = await cli(["doctor", "--json"]);
    const finding = (
      JSON.parse(doctor.stdout) as {
        findings: { area: string; status: string; data: { orphans: string[]; workspaces: unknown[] } }[];
      }
    ).findings.find((entry) => entry.area === "workspaces")!;
    expect(finding).toMatchObject({ status: "warn", data: { orphans: [stray] } });
    expect(finding.data.workspaces).toHaveLength(1);

    const dry = await cli(["worktrees", "prune", "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`Would remove ${stray} (no thread owns it)`);
    expect(existsSync(stray)).toBe(true);
    const pruned = await cli(["worktrees", "prune", "--json"]);
    expect(JSON.parse(pruned.stdout)).toEqual({ removed: [], orphans: [stray], dryRun: false });
    expect(existsSync(stray)).toBe(false);
    // The thread's worktree holds undecided work: it stays.
    expect(existsSync(workspace.path)).toBe(true);
    expect((await cli(["worktrees", "prune"])).stdout).toContain("Nothing to prune.");
  }, 180_000);

  it("threads changes|apply|discard: a person reads, applies and discards a thread's worktree from the terminal", async () => {
    const start = async (title: string) => {
      const started = await cli([
        "threads",
        "new",
        "@@reply done",
        "--workspace",
        "worktree",
        "--title",
        title,
        "--json",
        "--wait",
      ]);
      expect(started.code, started.stderr).toBe(0);
      const threadId = (JSON.parse(started.stdout) as { thread: { threadId: string } }).thread.threadId;
      const row = await waitForRow<{ data: string }>(
        home,
        "SELECT data FROM workspaces WHERE thread_id = ? AND status = 'ready'",
        [threadId],
      );
      return { threadId, path: (JSON.parse(row.data) as { path: string }).path };
    };
    // What an agent would have written in each worktree.
    const first = await start("notes one");
    writeFileSync(join(first.path, "NOTES.md"), "first notes\n");
    const second = await start("notes two");
    writeFileSync(join(second.path, "NOTES.md"), "second notes\n");

    const shown = await cli(["threads", "changes", first.threadId]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("+first notes");
    expect(shown.stderr).toContain("1 file(s), 1 commit(s)");
    expect(shown.stderr).toContain("notes one");

    const applied = await cli(["threads", "apply", first.threadId]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain(`Applied ${first.threadId}'s changes to ${repo.path}`);
    expect(repo.read("NOTES.md")).toBe("first notes\n");

    const conflict = await cli(["threads", "apply", second.threadId, "--cherry-pick"]);
    expect(conflict.code).toBe(1);
    expect(conflict.stdout).toContain("Conflict in NOTES.md: nothing was changed.");
    expect(repo.read("NOTES.md")).toBe("first notes\n");

    const discarded = await cli(["threads", "discard", second.threadId, "--keep-branch", "--json"]);
    expect(discarded.code, discarded.stderr).toBe(0);
    expect(JSON.parse(discarded.stdout)).toMatchObject({
      outcome: { outcome: "kept" },
      workspace: { status: "removed" },
    });
    expect(existsSync(second.path)).toBe(false);
  }, 180_000);
});
