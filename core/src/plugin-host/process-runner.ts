import { constants as fsConstants } from "node:fs";
import { access } from "node:fs/promises";
import { delimiter, isAbsolute, join } from "node:path";
import { execa } from "execa";
import { StderrTail, type ManagedProcess, type ProcessHelpers, type SpawnOptions } from "../spec/index.js";
import type { Logger } from "../logging/logger.js";
import { inject, injectable } from "tsyringe";
import { TOKENS } from "../di/tokens.js";
import { processStartTime } from "../util/process-start-time.js";

/** Remembers harness processes so a restarted host can stop the ones a crash left behind. */
export interface HarnessProcessRegistry {
  started(pid: number, label: string): void;
  exited(pid: number): void;
}

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

/**
 * Starts harnesses in their own process group (execa, `detached`), so stopping one stops the
 * npm wrapper and the native binary behind it together, and never our own process.
 */
@injectable()
export class ProcessRunner implements ProcessHelpers {
  constructor(
    @inject(TOKENS.Logger) private readonly logger: Logger,
    @inject(TOKENS.HarnessProcessLog) private readonly registry: HarnessProcessRegistry | null = null,
  ) {}

  spawn(command: string, args: readonly string[], options: SpawnOptions): ManagedProcess {
    const child = execa(command, [...args], {
      cwd: options.cwd,
      env: options.env as Record<string, string> | undefined,
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
    const log = this.logger.child({ pid, process: options.label });
    log.debug("harness process started", { command });
    const exited = child.then((result) => {
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
        const timer = setTimeout(() => killGroup(pid, "SIGKILL"), graceMs);
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

  async run(
    command: string,
    args: readonly string[],
    options: SpawnOptions & { readonly timeoutMs?: number },
  ): Promise<{ exitCode: number | null; stdout: string; stderr: string; failed: boolean }> {
    const result = await execa(command, [...args], {
      cwd: options.cwd,
      env: options.env as Record<string, string> | undefined,
      extendEnv: options.extendEnv ?? true,
      stdin: "ignore",
      reject: false,
      timeout: options.timeoutMs ?? 15_000,
      killSignal: "SIGKILL",
      detached: true,
      cleanup: true,
    });
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
export function reapOrphanedHarnesses(processes: readonly { pid: number; procStart: string | null }[], logger: Logger): number {
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
