import { EventEmitter } from "node:events";
import { withStderrTail, type ManagedProcess, type ProcessHelpers } from "@switchyard/sdk";
import type { ClaudeSpawnOptions, SpawnedProcess } from "./claude-wire.js";

/** How long Claude Code gets between a stop signal and SIGKILL of its process group. */
const KILL_GRACE_MS = 3_000;

/** The `claude` process of one query, started through the host's process helpers. */
export interface ClaudeProcessHandle {
  /** Set once the SDK asked for the process. */
  readonly process: ManagedProcess | null;
  /** `message` with the end of what Claude Code wrote on stderr (its startup and crash reasons), secrets scrubbed by the host. */
  describe(message: string): string;
  /** The stderr tail itself (empty before the process wrote anything). */
  readonly stderrText: string;
  /** The SDK's spawn hook: starts `claude` in its own process group, recorded for orphan reaping. */
  spawn(options: ClaudeSpawnOptions): SpawnedProcess;
  /** Stops the process group (SIGTERM, then SIGKILL), if it runs. */
  stop(): Promise<void>;
}

/**
 * Starts Claude Code for the SDK through `context.process.spawn`, so the harness runs in its own
 * process group (killing it takes its tools' children along), the host records its pid (a host
 * killed with SIGKILL reaps it on the next boot), and the host keeps its stderr tail for error
 * messages.
 * The SDK builds the command line and the environment; both are passed through unchanged (the
 * session's token is in neither: it travels in the initialize request on stdin).
 */
export function claudeProcessHandle(helpers: ProcessHelpers, label: string): ClaudeProcessHandle {
  let managed: ManagedProcess | null = null;
  return {
    get process() {
      return managed;
    },
    describe: (message) => withStderrTail(message, managed?.stderrTail() ?? ""),
    get stderrText() {
      return managed?.stderrTail() ?? "";
    },
    spawn(options: ClaudeSpawnOptions): SpawnedProcess {
      const child = helpers.spawn(options.command, options.args, {
        cwd: options.cwd ?? process.cwd(),
        env: options.env,
        extendEnv: false,
        stdin: "pipe",
        label,
      });
      managed = child;
      // The host keeps the tail; the stream must still be drained.
      child.stderr.resume();
      const events = new EventEmitter();
      let exitCode: number | null = null;
      let signalCode: NodeJS.Signals | null = null;
      let killed = false;
      void child.exited.then((exit) => {
        exitCode = exit.exitCode;
        signalCode = (exit.signal as NodeJS.Signals | null) ?? null;
        events.emit("exit", exitCode, signalCode);
      });
      if (child.pid === -1)
        queueMicrotask(() => events.emit("error", new Error(`${label} could not be started (${options.command})`)));
      // The SDK aborts its forwarded signal only after stdin EOF and a grace period.
      options.signal.addEventListener("abort", () => void child.kill("SIGTERM", KILL_GRACE_MS), { once: true });
      const spawned = Object.assign(events, {
        stdin: child.stdin!,
        stdout: child.stdout,
        get killed() {
          return killed;
        },
        get exitCode() {
          return exitCode;
        },
        get signalCode() {
          return signalCode;
        },
        kill(signal: NodeJS.Signals): boolean {
          killed = true;
          void child.kill(signal, KILL_GRACE_MS);
          return true;
        },
      });
      return spawned as unknown as SpawnedProcess;
    },
    async stop(): Promise<void> {
      await managed?.kill("SIGTERM", KILL_GRACE_MS);
    },
  };
}
