import { createServer } from "node:net";
import {
  SwitchyardError,
  type ManagedProcess,
  type PluginLogger,
  type ProcessHelpers,
  type SpawnOptions,
} from "@switchyard/spec";
import { LineSplitter } from "./line-splitter.js";
import type { ProcessExit } from "./json-lines-channel.js";

/** How long a stopped server may take to exit after SIGTERM before its group gets SIGKILL. @public */
export const SERVER_KILL_GRACE_MS = 3_000;

/** How much of a server's output errors carry. */
const OUTPUT_TAIL_CHARS = 4_000;

/** Variable names whose values are credentials: never repeated in an error. */
const SECRET_NAME = /TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH/i;

/**
 * The end of what a server wrote, stdout and stderr together: servers print their listening
 * line and warnings on one and their crash reasons on the other. The values of the
 * credential-named variables it was started with are scrubbed from it.
 * @public
 */
export class ServerOutputTail {
  #text = "";
  readonly #secrets: readonly string[];

  constructor(env: Readonly<Record<string, string | undefined>> = {}) {
    this.#secrets = Object.entries(env)
      .filter(([name, value]) => value !== undefined && value.length >= 6 && SECRET_NAME.test(name))
      .map(([, value]) => value!)
      .sort((a, b) => b.length - a.length);
  }

  /** Appends a chunk, keeping only the newest characters. */
  push(chunk: Buffer | string): void {
    this.#text = (this.#text + (typeof chunk === "string" ? chunk : chunk.toString("utf8"))).slice(
      -OUTPUT_TAIL_CHARS * 2,
    );
  }

  /** The kept text, trimmed and scrubbed; empty when the server wrote nothing. */
  get text(): string {
    let text = this.#text;
    for (const secret of this.#secrets) text = text.split(secret).join("[redacted]");
    return text.trim().slice(-OUTPUT_TAIL_CHARS);
  }

  /** `message` followed by the tail, when there is one. */
  describe(message: string): string {
    const tail = this.text;
    return tail === "" ? message : `${message}\nIts output ended with:\n${tail}`;
  }
}

/** A free TCP port on 127.0.0.1, found by letting the kernel pick one and releasing it. @public */
export async function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      probe.close(() => (port > 0 ? resolve(port) : reject(new Error("the kernel gave no port"))));
    });
  });
}

/** Options of {@link LocalServerProcess.start}. @public */
export interface LocalServerOptions {
  /** Names the harness in errors and logs (`opencode serve`). */
  readonly label: string;
  readonly logger: PluginLogger;
  /** The host's process helpers (the server gets its own process group, recorded by the host). */
  readonly processes: ProcessHelpers;
  readonly command: string;
  /** The arguments for a port: the helper picks a free loopback port and passes it here. */
  readonly args: (port: number) => readonly string[];
  /** Working directory and environment (never secrets in `args`). */
  readonly spawn: Omit<SpawnOptions, "label" | "stdin">;
  /**
   * Matches the line the server prints once it accepts connections. Its first group is the base
   * URL (`http://127.0.0.1:4096`); without a group the URL is `http://127.0.0.1:<port>`.
   */
  readonly listening: RegExp;
  /** How long the server may take to print that line. */
  readonly startupTimeoutMs: number;
  /** Output that means the port was taken between picking and binding: start again on another. */
  readonly addressInUse?: RegExp;
  /** How many times to try another port after `addressInUse` (default 2). */
  readonly portRetries?: number;
  /** How long SIGTERM may take before SIGKILL (default {@link SERVER_KILL_GRACE_MS}). */
  readonly killGraceMs?: number;
}

const DEFAULT_ADDRESS_IN_USE = /EADDRINUSE|address already in use|port .* (?:is )?in use/i;

/**
 * A harness that serves HTTP on a loopback port (`opencode serve`, an app server): started on a
 * free port in its own process group, ready once it printed its listening line, stopped with
 * SIGTERM and, when it does not exit within the grace period, SIGKILL to the whole group (a
 * server once survived SIGTERM holding its port) and every process it started, detached ones
 * too (the host's `ManagedProcess.kill`). Its output tail goes into every error.
 * @public
 */
export class LocalServerProcess {
  readonly #process: ManagedProcess;
  readonly #output: ServerOutputTail;
  readonly #killGraceMs: number;
  #exit: ProcessExit | null = null;
  #stopping = false;
  readonly #exitListeners = new Set<(exit: ProcessExit) => void>();
  /** Settles once the process exited. */
  readonly exited: Promise<ProcessExit>;

  private constructor(
    process: ManagedProcess,
    output: ServerOutputTail,
    /** The base URL it listens on. */
    readonly url: string,
    /** The port it listens on. */
    readonly port: number,
    killGraceMs: number,
    private readonly logger: PluginLogger,
  ) {
    this.#process = process;
    this.#output = output;
    this.#killGraceMs = killGraceMs;
    this.exited = process.exited.then((exit) => {
      this.#exit = exit;
      for (const listener of [...this.#exitListeners]) {
        try {
          listener(exit);
        } catch (error) {
          this.logger.error("A server exit listener threw", {
            error: error instanceof Error ? error.message : String(error),
          });
        }
      }
      this.#exitListeners.clear();
      return exit;
    });
  }

  /**
   * Starts the server and resolves once it listens. Fails with `provider_unavailable` (carrying
   * the output tail) when it exits first or stays silent past `startupTimeoutMs`; the process is
   * stopped then, so a half-started server never lingers.
   */
  static async start(options: LocalServerOptions): Promise<LocalServerProcess> {
    const retries = options.portRetries ?? 2;
    for (let attempt = 0; ; attempt++) {
      const port = await freeLoopbackPort();
      try {
        return await LocalServerProcess.#startOn(options, port);
      } catch (error) {
        const portTaken =
          error instanceof SwitchyardError &&
          (options.addressInUse ?? DEFAULT_ADDRESS_IN_USE).test(String(error.details?.["output"] ?? ""));
        if (!portTaken || attempt >= retries) throw error;
        options.logger.debug(`${options.label}: port ${port} was taken meanwhile; trying another`);
      }
    }
  }

  static async #startOn(options: LocalServerOptions, port: number): Promise<LocalServerProcess> {
    const managed = options.processes.spawn(options.command, options.args(port), {
      ...options.spawn,
      stdin: "ignore",
      label: options.label,
    });
    const output = new ServerOutputTail(options.spawn.env);
    const lines = new LineSplitter();
    let onLine: ((line: string) => void) | null = null;
    managed.stdout.on("data", (chunk: Buffer | string) => {
      output.push(chunk);
      for (const line of lines.push(chunk)) onLine?.(line);
    });
    managed.stderr.on("data", (chunk: Buffer | string) => output.push(chunk));
    const killGraceMs = options.killGraceMs ?? SERVER_KILL_GRACE_MS;
    let timer: NodeJS.Timeout | undefined;
    try {
      const url = await new Promise<string>((resolve, reject) => {
        onLine = (line) => {
          const match = options.listening.exec(line);
          if (match !== null) resolve(match[1] ?? `http://127.0.0.1:${port}`);
        };
        timer = setTimeout(
          () =>
            reject(
              new SwitchyardError(
                "provider_unavailable",
                output.describe(`${options.label} did not start listening within ${options.startupTimeoutMs} ms.`),
                { output: output.text },
              ),
            ),
          options.startupTimeoutMs,
        );
        void managed.exited.then((exit) =>
          reject(
            new SwitchyardError(
              "provider_unavailable",
              output.describe(
                `${options.label} exited before it listened (code ${exit.exitCode ?? "none"}, signal ${exit.signal ?? "none"}).`,
              ),
              { exitCode: exit.exitCode, signal: exit.signal, output: output.text },
            ),
          ),
        );
      });
      onLine = null;
      return new LocalServerProcess(managed, output, url, port, killGraceMs, options.logger);
    } catch (error) {
      await managed.kill("SIGTERM", killGraceMs).catch(() => undefined);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The server's process id (its process group's too). */
  get pid(): number {
    return this.#process.pid;
  }

  /** The tail of what the server wrote (stdout and stderr). */
  get output(): ServerOutputTail {
    return this.#output;
  }

  /** True until the process exited. */
  get running(): boolean {
    return this.#exit === null;
  }

  /** True once {@link stop} was called: an exit after that was asked for. */
  get stopping(): boolean {
    return this.#stopping;
  }

  /** Calls `listener` once when the process exits (at once when it already has). */
  onExit(listener: (exit: ProcessExit) => void): void {
    if (this.#exit !== null) listener(this.#exit);
    else this.#exitListeners.add(listener);
  }

  /** SIGTERM to the process tree, then SIGKILL after the grace period; resolves once it and its tree are gone. */
  async stop(): Promise<ProcessExit> {
    this.#stopping = true;
    if (this.#exit === null) await this.#process.kill("SIGTERM", this.#killGraceMs).catch(() => undefined);
    return this.exited;
  }
}
