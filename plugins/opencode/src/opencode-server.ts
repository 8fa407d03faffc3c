import { randomBytes } from "node:crypto";
import { createOpencodeClient } from "@opencode-ai/sdk/v2";
import { LocalServerProcess, SwitchyardError, type PluginLogger, type ProcessHelpers } from "@switchyard/sdk";
import { IGNORED_EVENT_TYPES, LISTENING_LINE, type Event, type OpencodeClient } from "./opencode-wire.js";

/** The basic-auth user of every server the plugin starts. */
const SERVER_USERNAME = "switchyard";

/** What starting one server needs. */
export interface OpenCodeServerLaunch {
  readonly command: string;
  /** The agent's working directory (OpenCode's project directory for every request). */
  readonly cwd: string;
  /** The complete environment (see `serverEnvironment`). */
  readonly env: Readonly<Record<string, string>>;
  readonly processes: ProcessHelpers;
  readonly logger: PluginLogger;
  readonly startupTimeoutMs: number;
}

/**
 * One `opencode serve` on a free loopback port, with an SDK client bound to the agent's
 * directory and the server's `/event` stream. The stream is read once, in order; when it ends
 * while the server was not being stopped, the server is stopped too (events missed during a
 * reconnect could hide a turn's end), and the owner hears why.
 */
export class OpenCodeServer {
  readonly client: OpencodeClient;
  readonly #abort = new AbortController();
  #lost: ((reason: string) => void) | null = null;

  private constructor(
    readonly process: LocalServerProcess,
    readonly cwd: string,
    password: string,
    private readonly logger: PluginLogger,
  ) {
    const authorization = `Basic ${Buffer.from(`${SERVER_USERNAME}:${password}`).toString("base64")}`;
    this.client = createOpencodeClient({
      baseUrl: process.url,
      directory: cwd,
      headers: { Authorization: authorization },
    });
  }

  /**
   * Starts the server; resolves once it listens. Every server gets its own random password
   * (HTTP basic auth, in its environment only): loopback is open to every local user, and the
   * server runs commands and holds a session's Switchyard credential.
   */
  static async start(launch: OpenCodeServerLaunch): Promise<OpenCodeServer> {
    const password = randomBytes(24).toString("base64url");
    const serverProcess = await LocalServerProcess.start({
      label: "opencode serve",
      logger: launch.logger,
      processes: launch.processes,
      command: launch.command,
      args: (port) => ["serve", "--hostname", "127.0.0.1", "--port", String(port)],
      spawn: {
        cwd: launch.cwd,
        env: { ...launch.env, OPENCODE_SERVER_USERNAME: SERVER_USERNAME, OPENCODE_SERVER_PASSWORD: password },
        extendEnv: false,
      },
      listening: LISTENING_LINE,
      startupTimeoutMs: launch.startupTimeoutMs,
    });
    return new OpenCodeServer(serverProcess, launch.cwd, password, launch.logger);
  }

  /**
   * Reads the event stream, calling `onEvent` for every event but the noise, in order. Resolves
   * once the stream is connected (OpenCode's `server.connected`), so nothing sent afterwards is
   * missed. `onLost` is called once if the stream or the server ends unasked.
   */
  async subscribe(onEvent: (event: Event) => void, onLost: (reason: string) => void, timeoutMs: number): Promise<void> {
    this.#lost = onLost;
    this.process.onExit((exit) => {
      if (!this.process.stopping)
        this.#lose(
          this.process.output.describe(
            `opencode serve exited (code ${exit.exitCode ?? "none"}, signal ${exit.signal ?? "none"}).`,
          ),
        );
    });
    const subscription = await this.client.event.subscribe({}, { signal: this.#abort.signal, sseMaxRetryAttempts: 1 });
    let markConnected!: () => void;
    const connected = new Promise<void>((resolve) => (markConnected = resolve));
    void (async () => {
      try {
        for await (const event of subscription.stream) {
          if (event.type === "server.connected") markConnected();
          if (IGNORED_EVENT_TYPES.has(event.type)) continue;
          try {
            onEvent(event as Event);
          } catch (error) {
            this.logger.error("Handling an OpenCode event failed", {
              type: event.type,
              error: error instanceof Error ? error.message : String(error),
            });
          }
        }
      } catch (error) {
        if (!this.#abort.signal.aborted)
          this.logger.debug("the OpenCode event stream failed", {
            error: error instanceof Error ? error.message : String(error),
          });
      }
      if (this.#abort.signal.aborted) return;
      // A dying server drops the stream first: give its exit a moment to be the reason.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.process.exited, new Promise<void>((resolve) => (timer = setTimeout(resolve, 2_000)))]);
      clearTimeout(timer);
      if (this.process.running)
        this.#lose(this.process.output.describe("The OpenCode event stream ended while the server was running."));
    })();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      connected,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new SwitchyardError(
                "provider_unavailable",
                this.process.output.describe(`opencode serve did not open its event stream within ${timeoutMs} ms.`),
              ),
            ),
          timeoutMs,
        );
      }),
    ]).finally(() => clearTimeout(timer));
  }

  #lose(reason: string): void {
    const lost = this.#lost;
    this.#lost = null;
    if (lost === null) return;
    lost(reason);
    void this.stop();
  }

  /** Stops reading events and stops the server (SIGTERM, SIGKILL after 3 s). */
  async stop(): Promise<void> {
    this.#lost = null;
    this.#abort.abort();
    await this.process.stop();
  }
}
