import {
  SwitchyardError,
  type OpenSessionInput,
  type PluginContext,
  type PluginLogger,
  type ProviderInstanceDescriptor,
  type RuntimeMode,
} from "@switchyard/sdk";
import type { OpenCodeBinary } from "./opencode-binary.js";
import {
  MCP_TOKEN_ENV,
  PROVIDER_SESSION_ENV,
  instanceDirectories,
  mcpServerKeys,
  readUserConfig,
  serverConfig,
  serverEnvironment,
  userConfigPath,
} from "./opencode-config.js";
import { callOpenCode } from "./opencode-rest.js";
import { OpenCodeServer } from "./opencode-server.js";
import type { OpenCodeOptions } from "./opencode-options.js";
import type { ServerStartGate } from "./opencode-start-gate.js";
import type { Event } from "./opencode-wire.js";

/** What starting a server needs from the adapter. */
export interface OpenCodeServerDeps {
  readonly instance: ProviderInstanceDescriptor;
  readonly options: OpenCodeOptions;
  readonly context: PluginContext;
  readonly binary: OpenCodeBinary;
  readonly gate: ServerStartGate;
}

/** What the slot asks of its session, as the session stands when a server starts. */
export interface ServerSlotOwner {
  /** The runtime mode the next server is configured for. */
  runtimeMode(): RuntimeMode;
  /** Whether the session already has an OpenCode session (diagnostics). */
  resumed(): boolean;
  closed(): boolean;
  onEvent(server: OpenCodeServer, event: Event): void;
  onLost(server: OpenCodeServer, reason: string): void;
}

/**
 * A session's `opencode serve`, one at a time: started on demand (after a retired one is gone),
 * configured with the session's MCP entry, runtime mode and profile (tool rules, extra MCP
 * servers, environment, harness home: per session, as the server is), retired on purpose (a new runtime
 * mode, an abort it ignored), forgotten when it ends unasked, stopped when the session closes.
 */
export class OpenCodeServerSlot {
  #server: OpenCodeServer | null = null;
  #starting: Promise<OpenCodeServer> | null = null;
  #retiring: Promise<void> | null = null;
  #mode: RuntimeMode | null = null;
  #keys: string[] = [];

  constructor(
    private readonly deps: OpenCodeServerDeps,
    private readonly input: OpenSessionInput,
    private readonly logger: PluginLogger,
    private readonly owner: ServerSlotOwner,
  ) {}

  /** The running server, or null (none yet, retired, or lost). */
  get current(): OpenCodeServer | null {
    return this.#server;
  }

  /** The runtime mode the running server was configured for. */
  get mode(): RuntimeMode | null {
    return this.#mode;
  }

  /** The MCP server keys of the running server's config (tools under them are Switchyard's). */
  get mcpKeys(): string[] {
    return this.#keys;
  }

  /** The running server, or a new one. */
  ensure(): Promise<OpenCodeServer> {
    if (this.#server !== null) return Promise.resolve(this.#server);
    // A retired server is gone before the next one opens the same conversation.
    const retiring = this.#retiring ?? Promise.resolve();
    this.#starting ??= retiring
      .then(() => this.#start())
      .finally(() => {
        this.#starting = null;
      });
    return this.#starting;
  }

  async #start(): Promise<OpenCodeServer> {
    const { instance, options, context, binary, gate } = this.deps;
    const dirs = instanceDirectories(context.paths.dataDir, instance.id);
    const grant = this.input.mcp;
    // A profile's harness home is this session's OpenCode config directory: its opencode.json is
    // the config, and OpenCode reads its agents, commands and plugins (OPENCODE_CONFIG_DIR).
    const home = this.input.harnessHome ?? null;
    const profileEnv = this.input.environment ?? {};
    const user = await readUserConfig(
      userConfigPath(options, instance, { ...process.env, ...instance.environment, ...profileEnv }, home),
    );
    const mode = this.owner.runtimeMode();
    const config = serverConfig(user.config, {
      runtimeMode: mode,
      grant,
      toolRules: this.input.toolRules ?? null,
      ...(this.input.mcpServers !== undefined ? { mcpServers: this.input.mcpServers } : {}),
    });
    const env = serverEnvironment(
      instance,
      {
        XDG_DATA_HOME: dirs.data,
        XDG_STATE_HOME: dirs.state,
        XDG_CACHE_HOME: dirs.cache,
        ...(home !== null ? { OPENCODE_CONFIG_DIR: home } : {}),
        OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
        [PROVIDER_SESSION_ENV]: this.input.providerSessionId,
        ...(grant !== null ? { [MCP_TOKEN_ENV]: grant.token } : {}),
      },
      process.env,
      profileEnv,
    );
    const server = await gate.run(binary.version ?? binary.command, () =>
      OpenCodeServer.start({
        command: binary.command,
        cwd: this.input.cwd,
        env,
        processes: context.process,
        logger: this.logger,
        startupTimeoutMs: options.startupTimeoutMs,
      }),
    );
    try {
      await server.subscribe(
        (event) => this.owner.onEvent(server, event),
        (reason) => this.owner.onLost(server, reason),
        options.startupTimeoutMs,
      );
      if (grant !== null) await this.#requireMcpConnected(server, grant.serverName);
    } catch (error) {
      await server.stop();
      throw error;
    }
    if (this.owner.closed()) {
      await server.stop();
      throw new SwitchyardError("session_closed", "The session was closed while opencode serve was starting.");
    }
    this.#keys = mcpServerKeys(config);
    this.#mode = mode;
    this.#server = server;
    this.logger.info("opencode serve started", {
      pid: server.process.pid,
      url: server.process.url,
      mcp: grant !== null,
      resumed: this.owner.resumed(),
    });
    return server;
  }

  /** The server reached the Switchyard MCP endpoint with the session's credential, or the start fails saying why. */
  async #requireMcpConnected(server: OpenCodeServer, serverName: string): Promise<void> {
    const status = await callOpenCode(
      "mcp.status",
      (signal) => server.client.mcp.status({}, { signal }),
      this.deps.options.requestTimeoutMs,
    );
    const entry = status[serverName];
    if (entry?.status === "connected") return;
    const why =
      entry === undefined
        ? "not configured"
        : `${entry.status}${"error" in entry && entry.error ? `: ${entry.error}` : ""}`;
    throw new SwitchyardError(
      "provider_error",
      `OpenCode could not connect to the Switchyard MCP endpoint "${serverName}" (${why}); ${entry?.status === "needs_auth" || /401/.test(why) ? "the session's credential was refused" : "check that the Switchyard server is reachable"}.`,
      { serverName, status: entry?.status ?? null },
    );
  }

  /** Stops the current server on purpose (a new runtime mode, an abort it ignored). */
  async retire(reason: string): Promise<void> {
    const server = this.#server;
    if (server === null) return;
    this.#server = null;
    this.logger.info("opencode serve stopped", { pid: server.process.pid, reason });
    const stopping = server.stop().finally(() => {
      if (this.#retiring === stopping) this.#retiring = null;
    });
    this.#retiring = stopping;
    await stopping;
  }

  /** Forgets `server` when it ended unasked; false when it was not the running one. */
  lose(server: OpenCodeServer): boolean {
    if (this.#server !== server) return false;
    this.#server = null;
    return true;
  }

  /** Stops whatever runs or is starting, and waits for a retired one to be gone. */
  async close(): Promise<void> {
    const starting = this.#starting;
    if (starting !== null) await starting.catch(() => undefined);
    const server = this.#server;
    this.#server = null;
    if (server !== null) await server.stop();
    await this.#retiring?.catch(() => undefined);
  }
}
