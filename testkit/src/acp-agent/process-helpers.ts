import { execFile, spawn } from "node:child_process";
import { access, constants, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import type { Readable } from "node:stream";
import path from "node:path";
import {
  SPEC_SEMVER,
  StderrTail,
  type ManagedProcess,
  type PluginContext,
  type PluginLogger,
  type ProcessHelpers,
  type SpawnOptions,
} from "@switchyard/spec";

/** Process helpers that record what they started, so tests can check and reap it. */
export interface RecordingProcessHelpers extends ProcessHelpers {
  /** Every process started, oldest first. */
  readonly spawned: readonly ManagedProcess[];
  /** Kills every process group started (idempotent). */
  killAll(): Promise<void>;
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

function envOf(options: {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly extendEnv?: boolean;
}): NodeJS.ProcessEnv {
  const base = options.extendEnv === false ? {} : process.env;
  const merged: NodeJS.ProcessEnv = { ...base };
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

/**
 * Real process helpers for tests, with the host's contract: each process leads its own group
 * (`detached`), and `kill` signals the whole group, escalating to SIGKILL after `graceMs`.
 */
export function createProcessGroupHelpers(): RecordingProcessHelpers {
  const spawned: ManagedProcess[] = [];

  const helpers: RecordingProcessHelpers = {
    spawned,
    spawn(command: string, args: readonly string[], options: SpawnOptions): ManagedProcess {
      const child = spawn(command, [...args], {
        cwd: options.cwd,
        env: envOf(options),
        stdio: [options.stdin ?? "pipe", "pipe", "pipe"],
        detached: true,
      });
      const exited = new Promise<{ exitCode: number | null; signal: string | null }>((resolve) => {
        child.once("exit", (exitCode, signal) => resolve({ exitCode, signal }));
        child.once("error", () => resolve({ exitCode: null, signal: null }));
      });
      let done = false;
      void exited.then(() => {
        done = true;
      });
      const pid = child.pid ?? -1;
      const tail = new StderrTail(envOf(options));
      child.stderr?.on("data", (chunk: string | Buffer) => tail.push(chunk));
      const managed: ManagedProcess = {
        pid,
        stdin: child.stdin,
        stdout: child.stdout as Readable,
        stderr: child.stderr as Readable,
        exited,
        stderrTail: () => tail.text(),
        async kill(signal: NodeJS.Signals = "SIGTERM", graceMs = 3_000): Promise<void> {
          if (pid <= 0) return;
          // Signal the group even when the leader is gone: its children may not be.
          signalGroup(pid, signal);
          if (!done) {
            const timer = new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref());
            await Promise.race([exited, timer]);
          }
          if (!done) signalGroup(pid, "SIGKILL");
          else signalGroup(pid, "SIGKILL");
          await exited;
        },
      };
      spawned.push(managed);
      return managed;
    },
    run(command, args, options) {
      return new Promise((resolve) => {
        execFile(
          command,
          [...args],
          { cwd: options.cwd, env: envOf(options), timeout: options.timeoutMs ?? 30_000, encoding: "utf8" },
          (error, stdout, stderr) => {
            const code =
              error && typeof (error as { code?: unknown }).code === "number"
                ? (error as { code: number }).code
                : error
                  ? null
                  : 0;
            resolve({ exitCode: code, stdout, stderr, failed: error !== null });
          },
        );
      });
    },
    async which(command, env) {
      const isExecutable = async (candidate: string) => {
        try {
          await access(candidate, constants.X_OK);
          return true;
        } catch {
          return false;
        }
      };
      if (command.includes("/")) return (await isExecutable(command)) ? path.resolve(command) : null;
      const searchPath = (env ?? process.env).PATH ?? "";
      for (const dir of searchPath.split(path.delimiter).filter(Boolean)) {
        const candidate = path.join(dir, command);
        if (await isExecutable(candidate)) return candidate;
      }
      return null;
    },
    async killAll() {
      await Promise.all(spawned.map((child) => child.kill("SIGKILL", 500)));
    },
  };
  return helpers;
}

/** One line a test logger received. */
export interface TestLogLine {
  readonly level: "debug" | "info" | "warn" | "error";
  readonly message: string;
  readonly fields: Record<string, unknown>;
}

/** A logger that keeps its lines in memory. */
export function createRecordingLogger(
  lines: TestLogLine[] = [],
  bindings: Record<string, unknown> = {},
): PluginLogger & { readonly lines: TestLogLine[] } {
  const log =
    (level: TestLogLine["level"]) =>
    (message: string, fields: Record<string, unknown> = {}) => {
      lines.push({ level, message, fields: { ...bindings, ...fields } });
    };
  return {
    lines,
    debug: log("debug"),
    info: log("info"),
    warn: log("warn"),
    error: log("error"),
    child: (more) => createRecordingLogger(lines, { ...bindings, ...more }),
  };
}

/** A plugin context for adapter tests: real process groups, an in-memory logger, a temp home. */
export interface AcpTestContext {
  readonly context: PluginContext;
  readonly processes: RecordingProcessHelpers;
  readonly logs: TestLogLine[];
  /** Kills every process started and removes the temp home. */
  dispose(): Promise<void>;
}

/** Creates an {@link AcpTestContext}. */
export async function createAcpTestContext(): Promise<AcpTestContext> {
  const home = await mkdtemp(path.join(os.tmpdir(), "switchyard-acp-test-"));
  const processes = createProcessGroupHelpers();
  const logger = createRecordingLogger();
  return {
    context: {
      specVersion: SPEC_SEMVER,
      hostVersion: "0.0.0-test",
      logger,
      paths: { home, cacheDir: path.join(home, "cache"), dataDir: path.join(home, "data") },
      process: processes,
    },
    processes,
    logs: logger.lines,
    dispose: async () => {
      await processes.killAll();
      await rm(home, { recursive: true, force: true });
    },
  };
}
