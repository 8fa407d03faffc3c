import * as acp from "@agentclientprotocol/sdk/unstable";
import {
  SwitchyardError,
  UnsupportedCapabilityError,
  withStderrTail,
  type OpenSessionInput,
  type PluginContext,
  type PluginLogger,
  type ProviderInstanceDescriptor,
} from "@switchyard/spec";
import {
  authenticateAgent,
  connectClient,
  describeError,
  initializeAgent,
  launchEnv,
  openNewSession,
  withTimeout,
  type AcpClientHandlers,
} from "./acp-connection.js";
import type { AcpChannel, AcpChannelFactory, AcpFlavor } from "./acp-flavor.js";
import type { AcpSessionSetupResponse } from "./acp-session-settings.js";

/** One agent process with its ACP connection, initialized and authenticated. */
export interface AcpAgentRuntime {
  /** Counts the agents of a session; a respawn starts the next, and late messages of an old one are dropped. */
  readonly generation: number;
  readonly channel: AcpChannel;
  readonly connection: acp.ClientConnection;
  /** The `initialize` answer, as the flavor adjusted it. */
  readonly init: acp.InitializeResponse;
}

/** What starting an agent for a session needs. */
export interface AcpAgentLaunch<TOptions> {
  readonly flavor: AcpFlavor<TOptions>;
  readonly instance: ProviderInstanceDescriptor;
  readonly options: TOptions;
  readonly context: PluginContext;
  readonly channelFactory: AcpChannelFactory;
  readonly cwd: string;
  readonly timeoutMs: number;
  /** The session's logger. */
  readonly logger: PluginLogger;
  /** The session's profile settings (harness home, environment), as the host gave them. */
  readonly session?: Pick<OpenSessionInput, "environment" | "harnessHome">;
}

/**
 * Starts the agent, connects the client handlers and sends `initialize` and `authenticate`.
 * When a step fails the agent is stopped and the error carries its stderr tail. `onConnected`
 * sees the agent as soon as it is connected, so the session can stop a starting agent and
 * notice one that dies during setup; it throws to give up on it.
 */
export async function startAgent<TOptions>(
  launch: AcpAgentLaunch<TOptions>,
  generation: number,
  handlers: AcpClientHandlers,
  onConnected: (channel: AcpChannel, connection: acp.ClientConnection) => void,
): Promise<AcpAgentRuntime> {
  const { flavor, instance, options, context } = launch;
  const command = await flavor.resolveLaunch({
    instance,
    options,
    cwd: launch.cwd,
    purpose: "session",
    context,
    ...(launch.session?.harnessHome != null ? { harnessHome: launch.session.harnessHome } : {}),
  });
  const channel = await launch.channelFactory(command, {
    cwd: launch.cwd,
    env: launchEnv(instance.environment, command, launch.session?.environment),
    label: `${flavor.driverKind} acp agent`,
    context,
  });
  const connection = connectClient(channel.stream, handlers);
  try {
    onConnected(channel, connection);
    launch.logger.info("ACP agent started", { pid: channel.pid, command: command.command });
    let init: acp.InitializeResponse;
    try {
      init = await initializeAgent(connection, context.hostVersion, launch.timeoutMs);
    } catch (error) {
      throw startFailure("initialize", error, channel);
    }
    init = flavor.hooks?.adjustInitialize?.(init, { options }) ?? init;
    const methodId = flavor.authMethodId?.({ options, authMethods: init.authMethods ?? [] });
    await authenticateAgent(connection, init, methodId, launch.timeoutMs);
    return { generation, channel, connection, init };
  } catch (error) {
    connection.close();
    await channel.kill().catch(() => undefined);
    throw error;
  }
}

/** What a session's agent must do to reopen a conversation. */
export interface AcpSessionOpening {
  /** The request shared by `session/new|load|resume` (cwd, MCP servers, `_meta`). */
  readonly base: acp.NewSessionRequest;
  /** The conversation to reopen, or null for a new one. */
  readonly resumeCursor: string | null;
  /** A restarted agent that cannot reopen the conversation starts a new one (with a warning) instead of failing. */
  readonly respawn: boolean;
  /**
   * Collects the history a `session/load` replays: `begin` before the request (the updates
   * arrive under the cursor's session id), `end` after it, once everything received has been
   * dispatched (`loaded` false when the load failed).
   */
  readonly replay: { begin(sessionId: string): void; end(loaded: boolean): Promise<void> };
}

/** The opened ACP session. */
export interface AcpOpenedSession {
  readonly sessionId: string;
  readonly setup: AcpSessionSetupResponse;
  /** Said to the user: the conversation could not be reopened. */
  readonly warning?: string;
}

/**
 * Opens the session: `session/load` when the agent advertises `loadSession` (the replay becomes
 * the snapshot), else `session/resume`, else a new session for a respawn and
 * `unsupported_capability` otherwise; `session/new` without a cursor. A cursor the agent does
 * not know is `not_found`.
 */
export async function openAgentSession(
  runtime: AcpAgentRuntime,
  opening: AcpSessionOpening,
  flavor: Pick<AcpFlavor<unknown>, "displayName" | "driverKind">,
  timeoutMs: number,
): Promise<AcpOpenedSession> {
  const { connection, init, channel } = runtime;
  const cursor = opening.resumeCursor;
  const agentCaps = init.agentCapabilities ?? {};
  const fresh = async (): Promise<AcpOpenedSession> => {
    const created = await openNewSession(connection, opening.base, init, flavor.displayName, timeoutMs);
    return { sessionId: created.sessionId, setup: created };
  };
  if (cursor === null) return fresh();
  if (agentCaps.loadSession === true) {
    opening.replay.begin(cursor);
    let setup: acp.LoadSessionResponse;
    try {
      setup = await withTimeout(
        connection.agent.request(acp.methods.agent.session.load, { ...opening.base, sessionId: cursor }),
        timeoutMs,
        "The agent's session/load",
      );
    } catch (error) {
      await opening.replay.end(false);
      throw resumeFailure(cursor, error, channel);
    }
    await opening.replay.end(true);
    return { sessionId: cursor, setup };
  }
  if (agentCaps.sessionCapabilities?.resume !== undefined && agentCaps.sessionCapabilities.resume !== null) {
    try {
      const setup = await withTimeout(
        connection.agent.request(acp.methods.agent.session.resume, { ...opening.base, sessionId: cursor }),
        timeoutMs,
        "The agent's session/resume",
      );
      return { sessionId: cursor, setup };
    } catch (error) {
      throw resumeFailure(cursor, error, channel);
    }
  }
  if (opening.respawn) {
    return {
      ...(await fresh()),
      warning: "The agent cannot reload its session; the restarted agent begins a new conversation.",
    };
  }
  throw new UnsupportedCapabilityError(
    "sessions.resume",
    flavor.driverKind,
    `Agent "${flavor.displayName}" advertises neither loadSession nor session/resume, so session "${cursor}" cannot be reopened.`,
  );
}

/** A setup failure with the agent's stderr tail; a typed error keeps its code. */
function startFailure(step: string, error: unknown, channel: AcpChannel): SwitchyardError {
  const stderr = channel.stderrTail?.() ?? "";
  if (error instanceof SwitchyardError)
    return new SwitchyardError(
      error.code,
      withStderrTail(error.message, stderr),
      error.details === undefined ? undefined : { ...error.details },
    );
  return new SwitchyardError(
    "provider_unavailable",
    withStderrTail(`The agent failed during ${step}: ${describeError(error).message}`, stderr),
    { step },
  );
}

function resumeFailure(cursor: string, error: unknown, channel: AcpChannel): SwitchyardError {
  if (error instanceof acp.RequestError && error.code === -32002) {
    return new SwitchyardError("not_found", `The agent has no session "${cursor}" to reopen.`, {
      resumeCursor: cursor,
    });
  }
  return startFailure("session reload", error, channel);
}
