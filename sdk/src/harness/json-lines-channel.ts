import { SwitchyardError, withStderrTail, type ManagedProcess, type PluginLogger } from "@switchyard/spec";
import { LineSplitter } from "./line-splitter.js";

/** How a harness process ended. @public */
export interface ProcessExit {
  readonly exitCode: number | null;
  readonly signal: string | null;
}

/** Options of {@link JsonLinesChannel}. @public */
export interface JsonLinesChannelOptions {
  /** Names the harness in errors and logs (`codex app-server`, `pi`). */
  readonly label: string;
  readonly logger: PluginLogger;
  /** Every JSON value the harness writes, synchronously and in arrival order. */
  readonly onMessage: (message: unknown) => void;
}

/**
 * One JSON value per line over a harness process's stdio. Lines are dispatched synchronously in
 * arrival order, so a response and the events written after it are never reordered. Writes after
 * the process died fail with `session_closed` (never an EPIPE crash), and the error of a dead
 * process carries the tail of its stderr.
 * @public
 */
export class JsonLinesChannel {
  readonly #process: ManagedProcess;
  readonly #options: JsonLinesChannelOptions;
  readonly #splitter = new LineSplitter();
  #closedError: SwitchyardError | null = null;
  #exit: ProcessExit | null = null;
  readonly #closedListeners = new Set<(error: SwitchyardError) => void>();
  /** Settles with the exit once the process has exited. */
  readonly exited: Promise<ProcessExit>;

  constructor(process: ManagedProcess, options: JsonLinesChannelOptions) {
    this.#process = process;
    this.#options = options;
    process.stdout.on("data", (chunk: Buffer | string) => {
      for (const line of this.#splitter.push(chunk)) this.#dispatch(line);
    });
    // A dead harness makes writes fail with EPIPE; the exit path reports it.
    process.stdin?.on("error", (error: Error) =>
      options.logger.debug(`${options.label} stdin error`, { error: error.message }),
    );
    this.exited = process.exited.then((exit) => {
      this.#exit = exit;
      for (const line of this.#splitter.flush()) this.#dispatch(line);
      this.close(
        new SwitchyardError(
          "session_closed",
          withStderrTail(
            `${options.label} exited (code ${exit.exitCode ?? "none"}, signal ${exit.signal ?? "none"}).`,
            process.stderrTail(),
          ),
          {
            exitCode: exit.exitCode,
            signal: exit.signal,
          },
        ),
      );
      return exit;
    });
  }

  /** The harness's process id. */
  get pid(): number {
    return this.#process.pid;
  }

  /** The managed process (for signals). */
  get process(): ManagedProcess {
    return this.#process;
  }

  /** The tail of the harness's stderr, scrubbed of secrets (the host's process helpers keep it). */
  get stderr(): string {
    return this.#process.stderrTail();
  }

  /** True once the process exited or the channel was closed. */
  get closed(): boolean {
    return this.#closedError !== null;
  }

  /** Why the channel closed, or null while open. */
  get closedError(): SwitchyardError | null {
    return this.#closedError;
  }

  /** Calls `listener` once when the channel closes (at once when it already has). */
  onClosed(listener: (error: SwitchyardError) => void): void {
    if (this.#closedError !== null) listener(this.#closedError);
    else this.#closedListeners.add(listener);
  }

  /** Writes one value as a line; throws `session_closed` once the harness is gone. */
  send(message: unknown): void {
    if (this.#closedError !== null) throw this.#closedError;
    const stdin = this.#process.stdin;
    if (stdin === null || stdin.destroyed || !stdin.writable) {
      throw new SwitchyardError(
        "session_closed",
        withStderrTail(`${this.#options.label} has no open stdin.`, this.#process.stderrTail()),
      );
    }
    stdin.write(`${JSON.stringify(message)}\n`);
  }

  /** Stops reading and tells listeners; does not kill the process. */
  close(
    error: SwitchyardError = new SwitchyardError("session_closed", `The ${this.#options.label} channel was closed.`),
  ): void {
    if (this.#closedError !== null) return;
    this.#closedError = error;
    for (const listener of [...this.#closedListeners]) {
      try {
        listener(error);
      } catch (thrown) {
        this.#options.logger.error(`A ${this.#options.label} close listener threw`, {
          error: thrown instanceof Error ? thrown.message : String(thrown),
        });
      }
    }
    this.#closedListeners.clear();
  }

  /**
   * Ends the harness: closes stdin (most harnesses exit at once), then SIGTERM to its process
   * group after `graceMs` and SIGKILL after `killAfterMs`, so a tool's children never outlive it.
   */
  async stop(graceMs = 2_000, killAfterMs = 2_000): Promise<void> {
    if (this.#exit === null) {
      try {
        this.#process.stdin?.end();
      } catch {
        // already closed
      }
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.exited, new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
      clearTimeout(timer);
    }
    await this.#process.kill("SIGTERM", killAfterMs).catch(() => undefined);
  }

  #dispatch(line: string): void {
    if (line.trim() === "" || this.#closedError !== null) return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      this.#options.logger.debug(`${this.#options.label} wrote a non-JSON line`, { line: line.slice(0, 200) });
      return;
    }
    try {
      this.#options.onMessage(message);
    } catch (error) {
      this.#options.logger.error(`Handling a ${this.#options.label} message failed`, {
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
}
