import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import type { HarnessBinary } from "./harness-binary.js";
import { LineSplitter } from "./jsonl.js";

/** How a harness process ended. */
export interface HarnessExit {
  /** Exit code, or null when killed by a signal. */
  code: number | null;
  /** The signal that ended it, if any. */
  signal: NodeJS.Signals | null;
  /** Everything it wrote on stdout. */
  stdout: string;
  /** Everything it wrote on stderr. */
  stderr: string;
}

/** Options for {@link spawnHarness}. */
export interface SpawnHarnessOptions {
  /** Working directory (use a home's clean `cwd`). */
  cwd: string;
  /**
   * The complete environment (a harness home's `env`); the parent's environment is NOT
   * inherited, so real credentials and config never leak into a harness.
   */
  env: Record<string, string>;
  /**
   * `"ignore"` (default) gives the harness a closed stdin (`codex exec` otherwise waits for EOF);
   * `"pipe"` keeps it open for JSONL protocols (`pi --mode rpc`, ACP agents).
   */
  stdin?: "ignore" | "pipe";
  /** Also kill the rest of the process group when the main process exits (default true). */
  killGroupOnExit?: boolean;
}

const live = new Set<HarnessProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Detached children survive their parent; make sure a crashing test run takes them along.
  process.once("exit", () => {
    for (const proc of live) proc.signalGroup("SIGKILL");
  });
}

/**
 * A harness running in its own process group (`detached`), so that killing it also kills
 * whatever it spawned (npm wrappers, MCP stdio servers, shells). Output is accumulated and
 * also available line by line.
 */
export class HarnessProcess {
  /** The Node child process. */
  readonly child: ChildProcess;
  /** Its pid, which is also its process group id. */
  readonly pid: number;
  /** Resolves when the main process exits (never rejects). */
  readonly exited: Promise<HarnessExit>;
  #stdout = "";
  #stderr = "";
  #exit: HarnessExit | undefined;
  readonly #lineListeners = new Set<(line: string) => void>();

  constructor(command: string, args: readonly string[], options: SpawnHarnessOptions) {
    installExitHook();
    this.child = spawn(command, [...args], {
      cwd: options.cwd,
      env: options.env,
      stdio: [options.stdin ?? "ignore", "pipe", "pipe"],
      detached: process.platform !== "win32",
    });
    if (this.child.pid === undefined) {
      // spawn failed synchronously (ENOENT arrives as an 'error' event right after).
      this.pid = -1;
    } else {
      this.pid = this.child.pid;
    }
    live.add(this);
    const splitter = new LineSplitter();
    this.child.stdout?.on("data", (chunk: Buffer) => {
      this.#stdout += chunk.toString("utf8");
      for (const line of splitter.push(chunk)) this.#emitLine(line);
    });
    this.child.stderr?.on("data", (chunk: Buffer) => {
      this.#stderr += chunk.toString("utf8");
    });
    this.exited = new Promise<HarnessExit>((resolve) => {
      let settled = false;
      const finish = (code: number | null, signal: NodeJS.Signals | null): void => {
        if (settled) return;
        settled = true;
        for (const line of splitter.flush()) this.#emitLine(line);
        this.#exit = { code, signal, stdout: this.#stdout, stderr: this.#stderr };
        live.delete(this);
        resolve(this.#exit);
      };
      this.child.once("error", (error) => {
        this.#stderr += `spawn error: ${error.message}\n`;
        finish(null, null);
      });
      // 'exit' fires when the main process ends; 'close' only once every holder of its stdout
      // pipe is gone, which a background grandchild can postpone forever. So: on 'exit', kill the
      // rest of the group, then wait briefly for the pipes to drain before resolving.
      this.child.once("exit", (code, signal) => {
        if (options.killGroupOnExit ?? true) this.signalGroup("SIGKILL");
        const drained = setTimeout(() => {
          this.child.stdout?.destroy();
          this.child.stderr?.destroy();
          finish(code, signal);
        }, 2_000);
        this.child.once("close", () => {
          clearTimeout(drained);
          finish(code, signal);
        });
      });
    });
  }

  /** Everything written on stdout so far. */
  get stdout(): string {
    return this.#stdout;
  }

  /** Everything written on stderr so far. */
  get stderr(): string {
    return this.#stderr;
  }

  /** The exit, once it happened. */
  get exit(): HarnessExit | undefined {
    return this.#exit;
  }

  /** Calls `listener` for every stdout line from now on (split on `\n` only). Returns an unsubscribe. */
  onLine(listener: (line: string) => void): () => void {
    this.#lineListeners.add(listener);
    return () => this.#lineListeners.delete(listener);
  }

  /**
   * Resolves with the first stdout line from now on that parses as JSON and satisfies
   * `predicate` (e.g. a JSONL event); rejects after `timeoutMs` or if the process exits first.
   */
  waitForJsonLine<T = Record<string, unknown>>(predicate: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const settle = (action: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        off();
        action();
      };
      const timer = setTimeout(() => {
        settle(() =>
          reject(
            new Error(
              `No matching JSON line within ${timeoutMs} ms.\nstdout:\n${this.#stdout}\nstderr:\n${this.#stderr}`,
            ),
          ),
        );
      }, timeoutMs);
      const off = this.onLine((line) => {
        let value: T;
        try {
          value = JSON.parse(line) as T;
        } catch {
          return;
        }
        if (predicate(value)) settle(() => resolve(value));
      });
      void this.exited.then((exit) => {
        // Let the last lines be delivered before reporting the exit.
        setImmediate(() =>
          settle(() =>
            reject(
              new Error(
                `Harness exited (code ${exit.code}, signal ${exit.signal}) before a matching line.\nstdout:\n${exit.stdout}\nstderr:\n${exit.stderr}`,
              ),
            ),
          ),
        );
      });
    });
  }

  /** Writes one line to stdin (objects are JSON-encoded). Needs `stdin: "pipe"`. */
  writeLine(message: unknown): void {
    const stdin = this.child.stdin;
    if (!stdin) throw new Error('stdin is not piped: spawn with { stdin: "pipe" }');
    stdin.write(`${typeof message === "string" ? message : JSON.stringify(message)}\n`);
  }

  /** Closes stdin (Pi RPC and codex app-server exit on EOF). */
  closeStdin(): void {
    this.child.stdin?.end();
  }

  /** Sends a signal to the whole process group; ignores a group that is already gone. */
  signalGroup(signal: NodeJS.Signals): void {
    if (this.pid <= 0) return;
    try {
      if (process.platform === "win32") this.child.kill(signal);
      else process.kill(-this.pid, signal);
    } catch {
      // ESRCH: nothing left in the group
    }
  }

  /**
   * Stops the harness and everything in its process group: `signal` (default SIGTERM) first,
   * SIGKILL after `graceMs` (default 2 s) if the main process is still alive.
   */
  async kill(signal: NodeJS.Signals = "SIGTERM", graceMs = 2_000): Promise<HarnessExit> {
    if (this.#exit) {
      this.signalGroup("SIGKILL");
      return this.#exit;
    }
    this.signalGroup(signal);
    const timer = setTimeout(() => this.signalGroup("SIGKILL"), graceMs);
    const exit = await this.exited;
    clearTimeout(timer);
    return exit;
  }

  #emitLine(line: string): void {
    for (const listener of this.#lineListeners) listener(line);
  }
}

/** Starts a harness binary (from {@link resolveHarnessBinary}) or any command in its own process group. */
export function spawnHarness(
  binary: HarnessBinary | string,
  args: readonly string[],
  options: SpawnHarnessOptions,
): HarnessProcess {
  if (typeof binary === "string") return new HarnessProcess(binary, args, options);
  return new HarnessProcess(binary.command, [...binary.args, ...args], {
    ...options,
    env: { ...binary.env, ...options.env },
  });
}

/** Options for {@link runHarness}. */
export interface RunHarnessOptions extends SpawnHarnessOptions {
  /** Kill the process group and reject after this long (default 60 s). */
  timeoutMs?: number;
}

/**
 * Runs a harness to completion with stdin closed and returns its output. On timeout the process
 * group is killed and the promise rejects with the output so far.
 */
export async function runHarness(
  binary: HarnessBinary | string,
  args: readonly string[],
  options: RunHarnessOptions,
): Promise<HarnessExit> {
  const proc = spawnHarness(binary, args, options);
  const timeoutMs = options.timeoutMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  const result = await Promise.race([proc.exited, timedOut]);
  clearTimeout(timer);
  if (result === "timeout") {
    const exit = await proc.kill("SIGKILL", 0);
    throw new Error(
      `Harness timed out after ${timeoutMs} ms and was killed.\nstdout:\n${exit.stdout}\nstderr:\n${exit.stderr}`,
    );
  }
  return result;
}

/** Harness processes started through this module that have not exited yet. */
export function liveHarnessProcesses(): readonly HarnessProcess[] {
  return [...live];
}

/** Kills every harness process group still running (for `afterEach`/`afterAll`). */
export async function killAllHarnessProcesses(graceMs = 1_000): Promise<void> {
  await Promise.all([...live].map((proc) => proc.kill("SIGTERM", graceMs)));
}
