import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk/unstable";
import {
  hasErrorCode,
  withStderrTail,
  type PluginContext,
  type ProbeOptions,
  type ProviderInstanceDescriptor,
  type ProviderStatus,
} from "@switchyard/spec";
import { owningPackage, type HarnessSearch, type HarnessSpec } from "../harness/find-harness.js";
import { withHarnessVerdict } from "../harness/harness-version.js";
import { sessionModelsOf } from "./acp-capabilities.js";
import {
  REFUSING_HANDLERS,
  authenticateAgent,
  connectClient,
  describeError,
  initializeAgent,
  launchEnv,
  openNewSession,
  spawnAcpChannel,
  withTimeout,
} from "./acp-connection.js";
import type { AcpChannel, AcpChannelFactory, AcpFlavor, AcpLaunchCommand } from "./acp-flavor.js";
import type { AcpAgentNegotiation } from "./acp-negotiation.js";

/** What a probe of an ACP instance needs. @public */
export interface AcpProbeDeps<TOptions> {
  readonly flavor: AcpFlavor<TOptions>;
  readonly instance: ProviderInstanceDescriptor;
  readonly options: TOptions;
  readonly context: PluginContext;
  readonly channelFactory: AcpChannelFactory;
  /** Learns what the agent answered (refines the instance's capabilities and models). */
  readonly negotiation: AcpAgentNegotiation<TOptions>;
}

/**
 * `full` (default): starts the agent, sends `initialize` (and, with `readinessProbe:
 * "session"`, authenticates and opens a disposable `session/new`), then stops it. Never sends
 * a prompt, so it never starts a model turn. `inspect`: resolves the launch command and finds
 * the executable, starting nothing; whether it is logged in stays unknown. A flavor whose
 * `resolveLaunch` throws (nothing to run) is reported not installed, with the error's message.
 * @public
 */
export async function probeAcpAgent<TOptions>(
  deps: AcpProbeDeps<TOptions>,
  probeOptions: ProbeOptions = {},
): Promise<ProviderStatus> {
  const launched: LaunchSeen = { executable: null };
  const status = await probeStatus(deps, probeOptions, launched);
  const harness =
    typeof deps.flavor.harness === "function" ? deps.flavor.harness({ options: deps.options }) : deps.flavor.harness;
  return harness === undefined ? status : withHarnessVerdict(launchedHarness(harness, launched.executable), status);
}

/** The executable a probe found for the agent, once it resolved the launch. */
interface LaunchSeen {
  executable: string | null;
}

/**
 * What the flavor says about the agent's program, as a search that found it where the instance's
 * launch points (the package it belongs to, when it is an npm bin): the version the agent
 * reports at `initialize` is then checked against the tested range.
 */
function launchedHarness(spec: HarnessSpec, executable: string | null): HarnessSearch {
  if (executable === null) return { spec, found: null, searched: [] };
  const owner = path.isAbsolute(executable) ? owningPackage(executable, spec.packages) : null;
  return {
    spec,
    found: {
      source: "configured",
      command: executable,
      packageDir: owner?.dir ?? null,
      packageName: owner?.name ?? null,
      packageVersion: owner?.version ?? null,
    },
    searched: [{ source: "configured", what: `${spec.displayName} as the instance launches it`, found: executable }],
  };
}

async function probeStatus<TOptions>(
  deps: AcpProbeDeps<TOptions>,
  probeOptions: ProbeOptions,
  launched: LaunchSeen,
): Promise<ProviderStatus> {
  const { flavor, instance, options, context, channelFactory, negotiation } = deps;
  const models = () => negotiation.models();
  const depth = probeOptions.depth ?? "full";
  let launch: AcpLaunchCommand;
  try {
    launch = await flavor.resolveLaunch({ instance, options, cwd: null, purpose: "probe", depth, context });
  } catch (error) {
    return {
      installed: false,
      executable: false,
      authenticated: false,
      models: models(),
      message: describeError(error).message,
    };
  }
  const env = launchEnv(instance.environment, launch);
  launched.executable = launch.command;
  if (channelFactory === spawnAcpChannel) {
    const found = await context.process.which(launch.command, { ...process.env, ...env });
    launched.executable = found;
    if (found === null) {
      return {
        installed: false,
        executable: false,
        authenticated: false,
        models: models(),
        message: `${flavor.displayName} was not found: looked for ${launch.command.includes("/") ? launch.command : `\`${launch.command}\` on PATH`}. ${flavor.install ?? `Install ${flavor.displayName}`}, or set the command in the instance options.`,
      };
    }
  }
  if (depth === "inspect") return { installed: true, executable: true, authenticated: "unknown", models: models() };
  const sessionProbe = flavor.readinessProbe === "session";
  // A disposable session gets an empty directory of its own, removed afterwards.
  const cwd = sessionProbe ? await mkdtemp(path.join(os.tmpdir(), "switchyard-acp-probe-")) : os.tmpdir();
  let channel: AcpChannel | undefined;
  let connection: acp.ClientConnection | undefined;
  try {
    try {
      channel = await channelFactory(launch, { cwd, env, label: `${flavor.driverKind} acp probe`, context });
    } catch (error) {
      return {
        installed: true,
        executable: false,
        authenticated: false,
        models: models(),
        message: describeError(error).message,
      };
    }
    connection = connectClient(channel.stream, REFUSING_HANDLERS);
    const timeout = flavor.setupTimeoutMs ?? 30_000;
    let init: acp.InitializeResponse;
    try {
      init = await initializeAgent(connection, context.hostVersion, timeout);
    } catch (error) {
      const stderr = channel.stderrTail?.();
      return {
        installed: true,
        executable: false,
        authenticated: false,
        models: models(),
        message: withStderrTail(`The agent did not answer initialize: ${describeError(error).message}`, stderr),
      };
    }
    init = flavor.hooks?.adjustInitialize?.(init, { options }) ?? init;
    const version = init.agentInfo?.version ? { version: init.agentInfo.version } : {};
    const authMethods = init.authMethods ?? [];
    // Keep what an earlier session reported about modes and models until this probe opens one.
    negotiation.learnInitialize(init);
    if (!sessionProbe) {
      return {
        installed: true,
        executable: true,
        authenticated: authMethods.length === 0 ? true : "unknown",
        ...version,
        models: models(),
        ...(authMethods.length > 0
          ? {
              message: `The agent offers auth methods (${authMethods.map((m) => m.id).join(", ")}); whether it is logged in shows when a session opens.`,
            }
          : {}),
      };
    }
    try {
      await authenticateAgent(connection, init, flavor.authMethodId?.({ options, authMethods }), timeout);
      const session = await openNewSession(connection, { cwd, mcpServers: [] }, init, flavor.displayName, timeout);
      negotiation.learn({
        initialize: init,
        modes: session.modes ?? null,
        configOptions: session.configOptions ?? null,
        models: sessionModelsOf(session),
      });
      if (init.agentCapabilities?.sessionCapabilities?.close != null) {
        await withTimeout(
          connection.agent.request(acp.methods.agent.session.close, { sessionId: session.sessionId }),
          timeout,
          "The agent's session/close",
        ).catch(() => undefined);
      }
      return { installed: true, executable: true, authenticated: true, ...version, models: models() };
    } catch (error) {
      const described = describeError(error);
      const authProblem = hasErrorCode(error, "provider_unavailable");
      return {
        installed: true,
        // The agent answered initialize; a refused session/new for another reason still
        // means it cannot run sessions here.
        executable: authProblem,
        authenticated: false,
        ...version,
        models: models(),
        message: withStderrTail(
          authProblem ? described.message : `The agent started but could not open a session: ${described.message}`,
          channel.stderrTail?.(),
        ),
      };
    }
  } finally {
    connection?.close();
    await channel?.kill().catch(() => undefined);
    if (sessionProbe) await rm(cwd, { recursive: true, force: true }).catch(() => undefined);
  }
}
