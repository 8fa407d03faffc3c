import { existsSync, rmSync, statSync, unlinkSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { mustGit, runGit, type GitOptions } from "./git-runner.js";

/** The files and commits of a change set, with its diff text. */
export interface ChangeSetDetail {
  readonly head: string | null;
  readonly files: readonly {
    readonly path: string;
    readonly status: string;
    readonly insertions: number | null;
    readonly deletions: number | null;
  }[];
  readonly commits: readonly { readonly commit: string; readonly subject: string }[];
  readonly diff: string;
  /** Changes in the folder not committed yet (the child's turn is still running, or nothing committed them). */
  readonly uncommitted: boolean;
}

/** What applying a change set onto a target would do, found without touching the target's tree. */
export type ApplyPlan =
  | { readonly kind: "nothing_to_apply"; readonly from: string }
  | { readonly kind: "conflict"; readonly from: string; readonly files: readonly string[]; readonly message: string }
  | { readonly kind: "ready"; readonly from: string; readonly to: string; readonly paths: readonly string[] };

/** The author and committer Switchyard's own commits use when the repository names nobody. */
const FALLBACK_IDENTITY = {
  GIT_AUTHOR_NAME: "Switchyard",
  GIT_AUTHOR_EMAIL: "switchyard@localhost",
  GIT_COMMITTER_NAME: "Switchyard",
  GIT_COMMITTER_EMAIL: "switchyard@localhost",
};

function lines(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
}

function nulSeparated(text: string): string[] {
  return text.split("\0").filter((part) => part !== "");
}

/**
 * The git work of workspaces: worktrees, the commits that record a child's work, change sets,
 * and applying one onto a target without touching the target's tree until the result is known.
 * Every operation can be run again after a crash and finds what the first run did.
 */
export class WorkspaceGit {
  /** When this server process began: a git lock file made before it, after a move was recorded, is one its predecessor's git left. */
  private readonly startedAtMs = Date.now();

  constructor(private readonly options: GitOptions) {}

  private git(cwd: string, args: readonly string[], extra: Partial<GitOptions> = {}) {
    return runGit(cwd, args, { ...this.options, ...extra });
  }

  private must(cwd: string, args: readonly string[], extra: Partial<GitOptions> = {}) {
    return mustGit(cwd, args, { ...this.options, ...extra });
  }

  /** True when `path` is inside a git working tree. */
  async isRepository(path: string): Promise<boolean> {
    if (!existsSync(path)) return false;
    const result = await this.git(path, ["rev-parse", "--is-inside-work-tree"]);
    return result.ok && result.stdout.trim() === "true";
  }

  /** The repository's common git directory (shared by all its worktrees), or null outside one. */
  async commonDir(path: string): Promise<string | null> {
    const result = await this.git(path, ["rev-parse", "--path-format=absolute", "--git-common-dir"]);
    return result.ok ? result.stdout.trim() : null;
  }

  /** The top folder of the working tree holding `path`, or null. */
  async topLevel(path: string): Promise<string | null> {
    const result = await this.git(path, ["rev-parse", "--show-toplevel"]);
    return result.ok ? result.stdout.trim() : null;
  }

  /** The commit a ref names, or null. */
  async commitOf(cwd: string, ref: string): Promise<string | null> {
    const result = await this.git(cwd, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]);
    return result.ok ? result.stdout.trim() : null;
  }

  /** The branch checked out in `cwd`, or null (detached). */
  async currentBranch(cwd: string): Promise<string | null> {
    const result = await this.git(cwd, ["symbolic-ref", "--quiet", "--short", "HEAD"]);
    return result.ok ? result.stdout.trim() : null;
  }

  /** The repository's own identity when it has one, else Switchyard's, for commits Switchyard makes. */
  private async identity(cwd: string): Promise<Record<string, string>> {
    const email = await this.git(cwd, ["config", "user.email"]);
    return email.ok && email.stdout.trim() !== "" ? {} : FALLBACK_IDENTITY;
  }

  /**
   * Makes a worktree at `path` on a new branch from `baseCommit`, or finds the one an earlier
   * attempt made (a crash after `git worktree add`): the same folder on the same branch.
   */
  async addWorktree(repository: string, path: string, branch: string, baseCommit: string): Promise<void> {
    if (existsSync(path)) {
      const top = await this.topLevel(path);
      const onBranch = top !== null && resolve(top) === resolve(path) ? await this.currentBranch(path) : null;
      if (onBranch === branch) return;
      throw new Error(
        `${path} exists and is not the worktree of branch ${branch}; remove it or choose another workspaces.root.`,
      );
    }
    // A worktree folder deleted by hand leaves git's record of it behind, which would refuse the path.
    await this.git(repository, ["worktree", "prune"]);
    const branchExists = (await this.commitOf(repository, `refs/heads/${branch}`)) !== null;
    const args = branchExists ? ["worktree", "add", path, branch] : ["worktree", "add", "-b", branch, path, baseCommit];
    await this.must(repository, args);
  }

  /**
   * Commits everything in the worktree (new, changed and deleted files) with `message`, when
   * anything changed; the user's hooks do not run (this records the agent's work as it is, and
   * a hook that edits or refuses would change what the agent did). Returns the new head.
   */
  async commitAll(path: string, message: string): Promise<{ committed: boolean; head: string | null }> {
    await this.must(path, ["add", "-A"]);
    const staged = await this.git(path, ["diff", "--cached", "--quiet"]);
    if (staged.ok) return { committed: false, head: await this.commitOf(path, "HEAD") };
    await this.must(path, ["commit", "-q", "--no-verify", "-F", "-"], {
      input: message,
      env: await this.identity(path),
    });
    return { committed: true, head: await this.commitOf(path, "HEAD") };
  }

  /** Whether the folder holds changes no commit has. */
  async hasUncommitted(path: string): Promise<boolean> {
    const status = await this.must(path, ["status", "--porcelain", "--untracked-files=all"]);
    return status !== "";
  }

  /** The change set of a worktree against its base: files, commits and the diff (optionally of one path). */
  async changeSet(path: string, base: string, only: string | null): Promise<ChangeSetDetail> {
    const head = await this.commitOf(path, "HEAD");
    if (head === null) return { head, files: [], commits: [], diff: "", uncommitted: await this.hasUncommitted(path) };
    const pathspec = only === null ? [] : ["--", only];
    const [nameStatus, numstat, log, diff, uncommitted] = await Promise.all([
      this.must(path, ["diff", "--no-renames", "--name-status", "-z", base, head, ...pathspec]),
      this.must(path, ["diff", "--no-renames", "--numstat", "-z", base, head, ...pathspec]),
      this.must(path, ["log", "--format=%H%x1f%s", `${base}..${head}`]),
      this.git(path, ["diff", "--no-color", "--no-ext-diff", "--no-renames", base, head, ...pathspec]).then(
        (result) => result.stdout,
      ),
      this.hasUncommitted(path),
    ]);
    const counts = new Map<string, { insertions: number | null; deletions: number | null }>();
    for (const entry of nulSeparated(numstat)) {
      const [added = "-", removed = "-", ...rest] = entry.split("\t");
      counts.set(rest.join("\t"), {
        insertions: added === "-" ? null : Number(added),
        deletions: removed === "-" ? null : Number(removed),
      });
    }
    const parts = nulSeparated(nameStatus);
    const files: { path: string; status: string; insertions: number | null; deletions: number | null }[] = [];
    for (let index = 0; index + 1 < parts.length; index += 2) {
      const file = parts[index + 1]!;
      files.push({ path: file, status: parts[index]!, ...(counts.get(file) ?? { insertions: null, deletions: null }) });
    }
    const commits = lines(log).map((line) => {
      const [commit = "", subject = ""] = line.split("\x1f");
      return { commit, subject };
    });
    return { head, files, commits, diff, uncommitted };
  }

  /**
   * What applying the commits `from..head` of a worktree onto `target` would give, worked out in
   * the object store (a merge) or in a throwaway worktree (a cherry-pick), never in the target's
   * own tree: a conflict leaves the target exactly as it was. A target with uncommitted changes
   * to a file the apply changes is a conflict too.
   */
  async planApply(input: {
    target: string;
    head: string;
    from: string;
    method: "merge" | "cherry-pick";
    message: string;
    scratch: string;
    repository: string;
  }): Promise<ApplyPlan> {
    // Paths below are the repository's (git status --porcelain, diff --name-only): work from its top.
    const target = (await this.topLevel(input.target)) ?? input.target;
    const targetHead = await this.commitOf(target, "HEAD");
    if (targetHead === null) throw new Error(`${target} has no commit to apply onto.`);
    if ((await this.git(target, ["merge-base", "--is-ancestor", input.head, targetHead])).ok)
      return { kind: "nothing_to_apply", from: targetHead };
    let to: string;
    if (input.method === "merge") {
      if ((await this.git(target, ["merge-base", "--is-ancestor", targetHead, input.head])).ok) {
        to = input.head;
      } else {
        const merged = await this.git(target, [
          "merge-tree",
          "--write-tree",
          "--name-only",
          "--no-messages",
          targetHead,
          input.head,
        ]);
        if (merged.exitCode === 1) {
          const [, ...conflicted] = lines(merged.stdout);
          return {
            kind: "conflict",
            from: targetHead,
            files: [...new Set(conflicted)],
            message: "The change set conflicts with the target's branch in these files; nothing was changed.",
          };
        }
        if (!merged.ok) throw new Error(`git merge-tree failed: ${merged.stderr}`);
        const tree = lines(merged.stdout)[0]!;
        to = await this.must(target, ["commit-tree", tree, "-p", targetHead, "-p", input.head, "-F", "-"], {
          input: input.message,
          env: await this.identity(target),
        });
      }
    } else {
      const picked = await this.cherryPick(input.repository, input.scratch, targetHead, input.from, input.head);
      if (picked.kind === "conflict")
        return {
          kind: "conflict",
          from: targetHead,
          files: picked.files,
          message: "A commit of the change set conflicts with the target's branch in these files; nothing was changed.",
        };
      to = picked.to;
    }
    // Commits copied earlier (a cherry-pick applied before) leave nothing new to bring.
    if (to === targetHead) return { kind: "nothing_to_apply", from: targetHead };
    const paths = nulSeparated(await this.must(target, ["diff", "--no-renames", "--name-only", "-z", targetHead, to]));
    const local = await this.localChanges(target);
    const touched = paths.filter((path) => local.has(path));
    if (touched.length > 0) {
      return {
        kind: "conflict",
        from: targetHead,
        files: touched,
        message:
          "The target's workspace has uncommitted changes to files the change set changes; commit or stash them and apply again. Nothing was changed.",
      };
    }
    return { kind: "ready", from: targetHead, to, paths };
  }

  /** Replays `from..head` onto `onto` in a throwaway worktree; the target's tree is never used. */
  private async cherryPick(
    repository: string,
    scratch: string,
    onto: string,
    from: string,
    head: string,
  ): Promise<{ kind: "picked"; to: string } | { kind: "conflict"; files: string[] }> {
    await this.removeWorktree(repository, scratch);
    await this.must(repository, ["worktree", "add", "--detach", scratch, onto]);
    try {
      const commits = lines(await this.must(scratch, ["rev-list", "--reverse", "--no-merges", `${from}..${head}`]));
      if (commits.length === 0) return { kind: "picked", to: onto };
      const picked = await this.git(scratch, ["cherry-pick", "--allow-empty", "--keep-redundant-commits", ...commits], {
        env: await this.identity(scratch),
      });
      if (!picked.ok) {
        const files = lines(await this.must(scratch, ["diff", "--name-only", "--diff-filter=U"]));
        if (files.length === 0) throw new Error(`git cherry-pick failed: ${picked.stderr}`);
        await this.git(scratch, ["cherry-pick", "--abort"]);
        return { kind: "conflict", files };
      }
      return { kind: "picked", to: (await this.commitOf(scratch, "HEAD"))! };
    } finally {
      await this.removeWorktree(repository, scratch);
    }
  }

  /** Paths with uncommitted changes (staged, unstaged or untracked) in a working tree. */
  private async localChanges(cwd: string): Promise<Set<string>> {
    const entries = nulSeparated(
      await this.must(cwd, ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"]),
    );
    return new Set(entries.map((entry) => entry.slice(3)));
  }

  /**
   * Moves the target from `from` to `to`: its tree first (a two-tree read-tree, what a checkout
   * does, which keeps every other local change), then its branch, compare-and-swap on `from`.
   * Returns `moved` when the target's branch is no longer at `from`.
   */
  async moveTarget(folder: string, from: string, to: string, reason: string): Promise<"done" | "moved"> {
    const target = (await this.topLevel(folder)) ?? folder;
    const head = await this.commitOf(target, "HEAD");
    if (head === to) return "done";
    if (head !== from) return "moved";
    await this.must(target, ["read-tree", "-m", "-u", from, to]);
    await this.must(target, ["update-ref", "-m", reason, "HEAD", to, from]);
    return "done";
  }

  /**
   * Finishes a move a crash cut short: the branch is still at `from`, and the tree may hold some
   * of `to`'s files, all of them, or a half-written one. The paths the move changes had no local
   * changes when it began, so they are written as `to` has them (removed where `to` has none),
   * then the branch moves. An index.lock made after the move was recorded and before this
   * server process began is the killed git process's, and is removed first; any other lock is
   * another process's, and is waited for.
   */
  async finishMove(
    folder: string,
    from: string,
    to: string,
    paths: readonly string[],
    since: string,
    reason: string,
  ): Promise<"done" | "moved"> {
    // The recorded paths are the repository's: pathspecs are read from its top.
    const target = (await this.topLevel(folder)) ?? folder;
    const head = await this.commitOf(target, "HEAD");
    if (head === to) return "done";
    if (head !== from) return "moved";
    const gitDir = await this.must(target, ["rev-parse", "--path-format=absolute", "--git-dir"]);
    const indexLock = join(gitDir, "index.lock");
    if (existsSync(indexLock)) {
      const made = statSync(indexLock).mtimeMs;
      if (made >= Date.parse(since) - 1_000 && made < this.startedAtMs) unlinkSync(indexLock);
    }
    if (paths.length > 0) {
      const present = new Set(
        nulSeparated(await this.must(target, ["ls-tree", "-r", "-z", "--name-only", to, "--", ...paths])),
      );
      const kept = paths.filter((path) => present.has(path));
      const gone = paths.filter((path) => !present.has(path));
      if (kept.length > 0)
        await this.must(target, ["checkout", to, "--pathspec-from-file=-", "--pathspec-file-nul"], {
          input: `${kept.join("\0")}\0`,
        });
      if (gone.length > 0) {
        await this.must(
          target,
          ["rm", "-q", "--cached", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul"],
          { input: `${gone.join("\0")}\0` },
        );
        for (const path of gone) rmSync(join(target, path), { force: true });
      }
    }
    await this.must(target, ["update-ref", "-m", reason, "HEAD", to, from]);
    return "done";
  }

  /** Removes a worktree (and its folder), whether git still knows it or not. */
  async removeWorktree(repository: string | null, path: string): Promise<void> {
    if (repository !== null && existsSync(repository)) {
      const listed = await this.git(repository, ["worktree", "list", "--porcelain"]);
      const known = listed.ok && lines(listed.stdout).some((line) => line === `worktree ${path}`);
      if (known) await this.must(repository, ["worktree", "remove", "--force", "--force", path]);
    }
    if (isAbsolute(path) && existsSync(path)) rmSync(path, { recursive: true, force: true });
    if (repository !== null && existsSync(repository)) await this.git(repository, ["worktree", "prune"]);
  }

  /** Deletes a branch (gone already is fine). */
  async deleteBranch(repository: string, branch: string): Promise<void> {
    if ((await this.commitOf(repository, `refs/heads/${branch}`)) === null) return;
    await this.must(repository, ["branch", "-D", branch]);
  }

  /** The worktrees git knows for a repository: path and branch. */
  async worktrees(repository: string): Promise<{ path: string; branch: string | null }[]> {
    const listed = await this.git(repository, ["worktree", "list", "--porcelain"]);
    if (!listed.ok) return [];
    const found: { path: string; branch: string | null }[] = [];
    for (const line of lines(listed.stdout)) {
      if (line.startsWith("worktree ")) found.push({ path: line.slice("worktree ".length), branch: null });
      else if (line.startsWith("branch refs/heads/") && found.length > 0)
        found[found.length - 1] = { ...found[found.length - 1]!, branch: line.slice("branch refs/heads/".length) };
    }
    return found;
  }
}
