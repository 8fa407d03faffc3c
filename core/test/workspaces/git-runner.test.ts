import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runGit } from "../../src/services/workspaces/git-runner.js";
import { makeGitRepo, type GitRepo } from "../support/git-repo.js";

// Another git process in the same repository (the parent agent's, the user's) holds index.lock:
// the command waits, retrying, and runs once the lock is gone; past its bound it fails, typed,
// having changed nothing.
describe("runGit and locks other git processes hold", () => {
  const repos: GitRepo[] = [];
  afterEach(() => {
    for (const repo of repos.splice(0)) repo.cleanup();
  });

  it("retries while index.lock is held and succeeds once it is released", async () => {
    const repo = makeGitRepo({ "a.txt": "a\n" });
    repos.push(repo);
    repo.write("a.txt", "changed\n");
    const lock = join(repo.path, ".git", "index.lock");
    writeFileSync(lock, "");
    // The lock is there when git first runs, so the first attempt fails for certain.
    setTimeout(() => rmSync(lock), 150);
    const added = await runGit(repo.path, ["add", "a.txt"], { lockWaitMs: 10_000 });
    expect(added).toMatchObject({ ok: true });
    expect(repo.git("diff", "--cached", "--name-only")).toBe("a.txt");
  });

  it("gives up after its bound with orchestration_error naming the lock, and changes nothing", async () => {
    const repo = makeGitRepo({ "a.txt": "a\n" });
    repos.push(repo);
    repo.write("a.txt", "changed\n");
    const lock = join(repo.path, ".git", "index.lock");
    writeFileSync(lock, "");
    await expect(runGit(repo.path, ["add", "a.txt"], { lockWaitMs: 300 })).rejects.toMatchObject({
      code: "orchestration_error",
      details: { reason: "repository_locked", lock },
    });
    expect(existsSync(lock)).toBe(true);
    rmSync(lock);
    expect(repo.git("diff", "--cached", "--name-only")).toBe("");
  });

  it("does not retry what is not a lock", async () => {
    const repo = makeGitRepo();
    repos.push(repo);
    expect(
      await runGit(repo.path, ["rev-parse", "--verify", "--quiet", "no-such-ref"], { lockWaitMs: 10_000 }),
    ).toMatchObject({ ok: false });
  });
});
