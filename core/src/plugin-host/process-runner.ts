import { constants as fsConstants } from "node:fs";
import { access } from "node:fs/promises";
import { delimiter, isAbsolute, join } from "node:path";
import { execa } from "execa";
import { StderrTail, type ManagedProcess, type ProcessHelpers, type SpawnOptions } from "../spec/index.js";
import { type Logger, LoggerToken } from "../logging/logger.js";
import { inject, injectable } from "tsyringe";
import { token } from "../util/di-token.js";
import { processStartTime } from "../util/process-start-time.js";
import { HarnessProcessTrees } from "./harness-process-trees.js";
import { currentProcessOwner } from "./process-owner.js";

/** Remembers harness processes so a restarted host can stop the ones a crash left behind. */
export interface HarnessProcessRegistry {
  started(pid: number, label: string): void;
  exited(pid: number): void;
}

/** DI token: where harness processes are remembered (the store's harness process log, which the composition root hands in). */
export const HarnessProcessRegistryToken = token<HarnessProcessRegistry>("HarnessProcessRegistry");

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/** How long what a harness left running gets to end after SIGTERM once the harness has exited. */
const LEFTOVER_GRACE_MS = 2_000;

/**
 * Starts harnesses in their own process group (execa, `detached`), so stopping one stops the
 * npm wrapper and the native binary behind it together, and never our own process; and with a
 * process-tree mark in their environment (`HarnessProcessTrees`), so stopping one also stops
 * every process it started that left the group (setsid, a double fork, nohup). Nothing a
 * harness started outlives it: when the harness exits, on its own or stopped, what is left of
 * its tree gets SIGTERM, then SIGKILL, before `exited` settles.
 */
@injectable()
export class ProcessRunner implements ProcessHelpers {
  private readonly trees: HarnessProcessTrees;

  constructor(
    @inject(LoggerToken) private readonly logger: Logger,
    @inject(HarnessProcessRegistryToken) private readonly registry: HarnessProcessRegistry | null = null,
    @inject(HarnessProcessTrees) trees: HarnessProcessTrees | null = null,
  ) {
    this.trees = trees ?? new HarnessProcessTrees(logger, null);
  }

  /** `env` with a new process-tree mark, after the marks this host inherited (a host run inside a harness). */
  private marked(env: SpawnOptions["env"]): { mark: string; env: Record<string, string | undefined> } {
    const { mark, value } = this.trees.newMark(process.env[this.trees.variable]);
    return { mark, env: { ...env, [this.trees.variable]: value } };
  }

  spawn(command: string, args: readonly string[], options: SpawnOptions): ManagedProcess {
    const { mark, env } = this.marked(options.env);
    const child = execa(command, [...args], {
      cwd: options.cwd,
      env: env as Record<string, string>,
      extendEnv: options.extendEnv ?? true,
      stdin: options.stdin ?? "pipe",
      stdout: "pipe",
      stderr: "pipe",
      detached: true,
      buffer: false,
      reject: false,
      cleanup: true,
      // Never let a shell see arguments (tokens never go in argv anyway).
      shell: false,
    });
    // Every harness's stderr is drained into a tail from the start, so a plugin's error can say
    // what the harness said, and an unread stderr pipe never fills up and stalls the harness.
    const tail = new StderrTail({ ...(options.extendEnv === false ? {} : process.env), ...options.env });
    child.stderr!.on("data", (chunk: string | Buffer) => tail.push(chunk));
    const stderrTail = () => tail.text();
    const pid = child.pid;
    if (pid === undefined) {
      // execa reports spawn errors (ENOENT) through the promise; surface them the same way.
      const exited = child.then((result) => ({ exitCode: result.exitCode ?? null, signal: result.signal ?? null }));
      return {
        pid: -1,
        stdin: child.stdin,
        stdout: child.stdout!,
        stderr: child.stderr!,
        exited,
        stderrTail,
        kill: async () => {
          await exited;
        },
      };
    }
    this.registry?.started(pid, options.label);
    this.trees.track(mark, pid, currentProcessOwner());
    const log = this.logger.child({ pid, process: options.label });
    log.debug("harness process started", { command });
    // The leader's exit, not the end of its output: a process it left behind may hold its pipes.
    const leftoversEnded = new Promise<void>((resolve) => {
      child.once("exit", () => void this.endLeftovers(mark, pid, log).finally(resolve));
    });
    const exited = child.then(async (result) => {
      await leftoversEnded;
      this.registry?.exited(pid);
      const outcome = { exitCode: result.exitCode ?? null, signal: result.signal ?? null };
      log.debug("harness process exited", outcome);
      if (result.failed && result.exitCode === undefined && result.signal === undefined) {
        log.warn("harness process failed to start", { error: result.shortMessage });
      }
      return outcome;
    });
    let done = false;
    void exited.then(() => {
      done = true;
    });
    return {
      pid,
      stdin: child.stdin,
      stdout: child.stdout!,
      stderr: child.stderr!,
      exited,
      stderrTail,
      kill: async (signal: NodeJS.Signals = "SIGTERM", graceMs = 3000) => {
        if (done) return;
        killGroup(pid, signal);
        this.trees.signalTree(mark, signal);
        const timer = setTimeout(() => {
          killGroup(pid, "SIGKILL");
          this.trees.killTree(mark);
        }, graceMs);
        try {
          await exited;
        } finally {
          clearTimeout(timer);
        }
        // The leader is gone; make sure nothing else in its group lingers.
        killGroup(pid, "SIGKILL");
      },
    };
  }

  /**
   * After a harness exited: what is left of its tree (its group, and what left the group) gets
   * SIGTERM, a short grace, then SIGKILL until none is left.
   */
  private async endLeftovers(mark: string, leader: number, log: Logger): Promise<void> {
    try {
      if (this.trees.processesOf(mark).length === 0 && !groupExists(leader)) return;
      killGroup(leader, "SIGTERM");
      const signalled = this.trees.signalTree(mark, "SIGTERM");
      const deadline = Date.now() + LEFTOVER_GRACE_MS;
      // Marked processes only: a zombie left in the group (an init that reaps slowly) is no work.
      while (Date.now() < deadline && this.trees.processesOf(mark).length > 0) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      killGroup(leader, "SIGKILL");
      const killed = this.trees.killTree(mark);
      if (signalled + killed > 0)
        log.info("stopped processes the harness left running", { terminated: signalled, killed });
    } finally {
      this.trees.forget(mark);
    }
  }

  async run(
    command: string,
    args: readonly string[],
    options: SpawnOptions & { readonly timeoutMs?: number },
  ): Promise<{ exitCode: number | null; stdout: string; stderr: string; failed: boolean }> {
    const { mark, env } = this.marked(options.env);
    const result = await execa(command, [...args], {
      cwd: options.cwd,
      env: env as Record<string, string>,
      extendEnv: options.extendEnv ?? true,
      stdin: "ignore",
      reject: false,
      timeout: options.timeoutMs ?? 15_000,
      killSignal: "SIGKILL",
      detached: true,
      cleanup: true,
    });
    // A version probe leaves nothing running either.
    this.trees.killTree(mark);
    return {
      exitCode: result.exitCode ?? null,
      stdout: String(result.stdout ?? ""),
      stderr: String(result.stderr ?? ""),
      failed: result.failed,
    };
  }

  async which(command: string, env?: Readonly<Record<string, string | undefined>>): Promise<string | null> {
    const executable = async (file: string) => {
      try {
        await access(file, fsConstants.X_OK);
        return true;
      } catch {
        return false;
      }
    };
    if (isAbsolute(command) || command.includes("/")) return (await executable(command)) ? command : null;
    const path = env?.PATH ?? process.env.PATH ?? "";
    for (const dir of path.split(delimiter)) {
      if (dir === "") continue;
      const candidate = join(dir, command);
      if (await executable(candidate)) return candidate;
    }
    return null;
  }
}

/** True while some process still belongs to the process group `pgid`. */
function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Stops harness process groups a previous host left behind (after a crash). A harness's leader
 * often dies with the host while its tools (a shell command's children) live on in its group,
 * so a group is stopped when its leader is the recorded process (same kernel start time), or
 * when the leader is gone but the group is not: no other process can hold the leader's pid
 * while the group exists, so that group is the harness's own. A live pid with another start
 * time was reused after the group ended and is left alone.
 */
export function reapOrphanedHarnesses(
  processes: readonly { pid: number; procStart: string | null }[],
  logger: Logger,
): number {
  let reaped = 0;
  for (const { pid, procStart } of processes) {
    if (isAlive(pid)) {
      if (procStart === null || processStartTime(pid) !== procStart) continue;
    } else if (!groupExists(pid)) {
      continue;
    }
    killGroup(pid, "SIGKILL");
    reaped += 1;
    logger.warn("stopped a harness process left over from a previous run", { pid });
  }
  return reaped;
}
