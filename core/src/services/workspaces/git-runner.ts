import { execa } from "execa";
import { OrchestratorFailure } from "../../engine/orchestrator-failure.js";

/** What a git command answered. */
export interface GitResult {
  readonly ok: boolean;
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** How a git command is run: where, with what input and identity, and how long it may wait for a lock. */
export interface GitOptions {
  readonly input?: string;
  readonly env?: Readonly<Record<string, string>>;
  /** How long to keep retrying while another git process holds a lock (index.lock, a ref's lock). */
  readonly lockWaitMs: number;
}

/**
 * The messages git gives when another git process holds one of its lock files: the index
 * (`index.lock`), a ref, `packed-refs`, a worktree's admin folder. Such a failure wrote
 * nothing, so the same command can run again once the lock is gone.
 */
const LOCKED =
  /Unable to create '([^']+\.lock)': File exists|Another git process seems to be running|cannot lock ref '([^']+)'|Unable to create '([^']+)\.lock'/;

/** The lock file a failure names, or null when it is not a lock failure. */
export function lockedBy(stderr: string): string | null {
  const match = LOCKED.exec(stderr);
  if (match === null) return null;
  return match[1] ?? match[2] ?? match[3] ?? "a git lock file";
}

/**
 * Runs git in `cwd`, retrying (with a growing pause, up to `lockWaitMs` in all) while another git
 * process holds a lock, so a parent running git in the same repository at that moment delays
 * the command instead of breaking it. Past the bound it fails with `orchestration_error`
 * (`details.reason: "repository_locked"`) naming the lock, and nothing was changed.
 */
export async function runGit(cwd: string, args: readonly string[], options: GitOptions): Promise<GitResult> {
  const deadline = Date.now() + options.lockWaitMs;
  let pauseMs = 25;
  for (;;) {
    const result = await execa("git", args, {
      cwd,
      reject: false,
      stdin: options.input === undefined ? "ignore" : "pipe",
      ...(options.input !== undefined ? { input: options.input } : {}),
      // No prompt may wait for a person (credentials, an editor for a merge message).
      env: { GIT_TERMINAL_PROMPT: "0", GIT_EDITOR: "true", GIT_MERGE_AUTOEDIT: "no", ...options.env },
      stripFinalNewline: false,
      maxBuffer: 256 * 1024 * 1024,
    });
    const outcome: GitResult = {
      ok: result.exitCode === 0,
      exitCode: result.exitCode ?? -1,
      stdout: String(result.stdout),
      stderr: String(result.stderr).trim(),
    };
    if (outcome.ok) return outcome;
    const lock = lockedBy(outcome.stderr);
    if (lock === null) return outcome;
    if (Date.now() + pauseMs > deadline) {
      throw new OrchestratorFailure(
        "orchestration_error",
        `git ${args[0]} in ${cwd} waited ${options.lockWaitMs} ms for ${lock}, which another git process holds, and nothing was changed. Try again once that git command has finished (a lock left by a crashed git process has to be removed by hand).`,
        { reason: "repository_locked", lock, cwd },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
    pauseMs = Math.min(pauseMs * 2, 500);
  }
}

/** Runs git and returns its trimmed output, or fails with `orchestration_error` naming the command and git's words. */
export async function mustGit(cwd: string, args: readonly string[], options: GitOptions): Promise<string> {
  const result = await runGit(cwd, args, options);
  if (!result.ok) {
    throw new OrchestratorFailure(
      "orchestration_error",
      `git ${args.join(" ")} failed in ${cwd}: ${result.stderr || result.stdout.trim() || `exit code ${result.exitCode}`}`,
      {
        reason: "git_failed",
        cwd,
        exitCode: result.exitCode,
      },
    );
  }
  return result.stdout.trim();
}
