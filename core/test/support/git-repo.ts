import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A real git repository in a temporary folder, with a committer identity of its own. */
export interface GitRepo {
  readonly path: string;
  git(...args: string[]): string;
  /** git in another folder of the same repository (a worktree). */
  gitIn(cwd: string, ...args: string[]): string;
  read(file: string): string;
  write(file: string, content: string): void;
  head(): string;
  /** `git status --porcelain` (all untracked files): empty when the tree is clean. */
  status(cwd?: string): string;
  branches(): string[];
  cleanup(): void;
}

/** A repository on `main` with one commit holding `files`. */
export function makeGitRepo(files: Readonly<Record<string, string>> = { "README.md": "hello\n" }): GitRepo {
  const path = mkdtempSync(join(tmpdir(), "switchyard-repo-"));
  const gitIn = (cwd: string, ...args: string[]) =>
    execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
  const git = (...args: string[]) => gitIn(path, ...args);
  git("init", "-q", "-b", "main");
  git("config", "user.name", "Test User");
  git("config", "user.email", "test@example.com");
  for (const [file, content] of Object.entries(files)) writeFileSync(join(path, file), content);
  git("add", ".");
  git("commit", "-qm", "initial");
  return {
    path,
    git,
    gitIn,
    read: (file) => readFileSync(join(path, file), "utf8"),
    write: (file, content) => writeFileSync(join(path, file), content),
    head: () => git("rev-parse", "HEAD"),
    status: (cwd = path) => gitIn(cwd, "status", "--porcelain", "--untracked-files=all"),
    branches: () =>
      git("branch", "--format=%(refname:short)")
        .split("\n")
        .filter((line) => line !== ""),
    cleanup: () => rmSync(path, { recursive: true, force: true }),
  };
}

/**
 * Installs a `reference-transaction` hook that, while `<armed>` exists, stops the update of
 * refs/heads/main just before it commits (state `prepared`): it writes its pid to `<reached>`
 * and waits for `<release>`. So a test can kill the server while an apply has written the
 * parent's tree but not yet moved its branch.
 */
export function holdMainRefUpdates(repo: GitRepo, files: { armed: string; reached: string; release: string }): void {
  const hook = join(repo.path, ".git", "hooks", "reference-transaction");
  writeFileSync(
    hook,
    [
      "#!/bin/sh",
      '[ "$1" = "prepared" ] || exit 0',
      `[ -f "${files.armed}" ] || exit 0`,
      'grep -q " refs/heads/main$" || exit 0',
      `rm -f "${files.armed}"`,
      `echo $$ > "${files.reached}"`,
      `while [ ! -f "${files.release}" ]; do sleep 0.05; done`,
      "exit 0",
      "",
    ].join("\n"),
  );
  chmodSync(hook, 0o755);
}
