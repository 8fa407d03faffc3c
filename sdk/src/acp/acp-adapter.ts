import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk/unstable";
import {
  hasErrorCode,
  NO_CAPABILITIES,
  SPECIFICATION_VERSION,
  mergeCapabilities,
  type CreateInstanceInput,
  type ModelDescriptor,
  type OpenSessionInput,
  type OrchestrationAdapter,
  type PluginContext,
  type ProbeOptions,
  type ProviderCapabilities,
  type ProviderDriver,
  type ProviderInstanceDescriptor,
  type ProviderSession,
  type ProviderStatus,
  withStderrTail,
} from "@switchyard/spec";
import { defineDriver } from "../define.js";
import { ACP_BASE_CAPABILITIES, advertisedModels, negotiateAcpCapabilities, sessionModelsOf } from "./acp-capabilities.js";
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
import { modeMappingOf, type AcpAgentDescription, type AcpChannel, type AcpChannelFactory, type AcpFlavor, type AcpLaunchCommand } from "./acp-flavor.js";
import { AcpProviderSession } from "./acp-session.js";

/** Options for {@link createAcpDriver} and {@link AcpOrchestrationAdapter}. */
export interface AcpAdapterOptions {
  /**
   * Starts the agent. Default: `context.process.spawn` (own process group) with ACP over stdio.
   * Inject one to run an agent in-process or over another transport.
   */
  readonly channelFactory?: AcpChannelFactory;
}

/** The flavor's static declaration over the ACP base: what instances claim before negotiation. */
export function staticAcpCapabilities<TOptions>(flavor: AcpFlavor<TOptions>): ProviderCapabilities {
  const base = mergeCapabilities(NO_CAPABILITIES, ACP_BASE_CAPABILITIES).capabilities;
  return mergeCapabilities(base, flavor.capabilities).capabilities;
}

/**
 * The OrchestrationAdapter of one ACP provider instance. Each session runs its own agent
 * process; what the agent advertises at `initialize` refines `capabilities()`.
 */
export class AcpOrchestrationAdapter<TOptions> implements OrchestrationAdapter {
  readonly specificationVersion = SPECIFICATION_VERSION;
  readonly instanceId: string;
  readonly driverKind: string;
  private agent: AcpAgentDescription | null = null;
  private readonly sessions = new Set<AcpProviderSession<TOptions>>();
  private readonly channelFactory: AcpChannelFactory;

  constructor(
    private readonly flavor: AcpFlavor<TOptions>,
    private readonly instance: ProviderInstanceDescriptor,
    private readonly options: TOptions,
    private readonly context: PluginContext,
    adapterOptions: AcpAdapterOptions = {},
  ) {
    this.instanceId = instance.id;
    this.driverKind = flavor.driverKind;
    this.channelFactory = adapterOptions.channelFactory ?? spawnAcpChannel;
  }

  /** The static declaration until an agent has been seen; then what it negotiated. */
  capabilities(): ProviderCapabilities {
    return this.agent === null ? staticAcpCapabilities(this.flavor) : this.capabilitiesFor(this.agent);
  }

  /** The record for one agent description (used by sessions for their own agent). */
  capabilitiesFor(agent: AcpAgentDescription): ProviderCapabilities {
    let overlay = negotiateAcpCapabilities(agent, modeMappingOf(this.flavor, this.options));
    if (this.flavor.hooks?.refineCapabilities) overlay = this.flavor.hooks.refineCapabilities(overlay, agent);
    const { capabilities, warnings } = mergeCapabilities(staticAcpCapabilities(this.flavor), overlay);
    if (warnings.length > 0) this.context.logger.warn("ACP capability negotiation adjusted", { warnings });
    return capabilities;
  }

  private models(): ModelDescriptor[] {
    const own = this.flavor.models ?? [];
    const fromAgent = advertisedModels(this.agent).filter((model) => !own.some((candidate) => candidate.id === model.id));
    const custom = this.instance.customModels
      .filter((id) => !own.some((model) => model.id === id) && !fromAgent.some((model) => model.id === id))
      .map((id) => ({ id }));
    return [...own, ...fromAgent, ...custom];
  }

  /**
   * `full` (default): starts the agent, sends `initialize` (and, with `readinessProbe:
   * "session"`, authenticates and opens a disposable `session/new`), then stops it. Never sends
   * a prompt, so it never starts a model turn. `inspect`: resolves the launch command and finds
   * the executable, starting nothing; whether it is logged in stays unknown. A flavor whose
   * `resolveLaunch` throws (nothing to run) is reported not installed, with the error's message.
   */
  async probe(options: ProbeOptions = {}): Promise<ProviderStatus> {
    const depth = options.depth ?? "full";
    let launch: AcpLaunchCommand;
    try {
      launch = await this.flavor.resolveLaunch({ instance: this.instance, options: this.options, cwd: null, purpose: "probe", depth, context: this.context });
    } catch (error) {
      return { installed: false, executable: false, authenticated: false, models: this.models(), message: describeError(error).message };
    }
    const env = launchEnv(this.instance.environment, launch);
    if (this.channelFactory === spawnAcpChannel) {
      const found = await this.context.process.which(launch.command, { ...process.env, ...env });
      if (found === null) {
        return {
          installed: false,
          executable: false,
          authenticated: false,
          models: this.models(),
          message: `"${launch.command}" was not found. Install ${this.flavor.displayName}, or set the command in the instance options.`,
        };
      }
    }
    if (depth === "inspect") return { installed: true, executable: true, authenticated: "unknown", models: this.models() };
    const sessionProbe = this.flavor.readinessProbe === "session";
    // A disposable session gets an empty directory of its own, removed afterwards.
    const cwd = sessionProbe ? await mkdtemp(path.join(os.tmpdir(), "switchyard-acp-probe-")) : os.tmpdir();
    let channel: AcpChannel | undefined;
    let connection: acp.ClientConnection | undefined;
    try {
      try {
        channel = await this.channelFactory(launch, { cwd, env, label: `${this.flavor.driverKind} acp probe`, context: this.context });
      } catch (error) {
        return { installed: true, executable: false, authenticated: false, models: this.models(), message: describeError(error).message };
      }
      connection = connectClient(channel.stream, REFUSING_HANDLERS);
      const timeout = this.flavor.setupTimeoutMs ?? 30_000;
      let init: acp.InitializeResponse;
      try {
        init = await initializeAgent(connection, this.context.hostVersion, timeout);
      } catch (error) {
        return this.notStarted("The agent did not answer initialize", error, channel);
      }
      init = this.flavor.hooks?.adjustInitialize?.(init, { options: this.options }) ?? init;
      const version = init.agentInfo?.version ? { version: init.agentInfo.version } : {};
      const authMethods = init.authMethods ?? [];
      if (!sessionProbe) {
        // Keep what an earlier session reported about modes and models; this probe opens none.
        this.agent = { ...this.agent, initialize: init };
        return {
          installed: true,
          executable: true,
          authenticated: authMethods.length === 0 ? true : "unknown",
          ...version,
          models: this.models(),
          ...(authMethods.length > 0
            ? { message: `The agent offers auth methods (${authMethods.map((m) => m.id).join(", ")}); whether it is logged in shows when a session opens.` }
            : {}),
        };
      }
      this.agent = { ...this.agent, initialize: init };
      try {
        const methodId = this.flavor.authMethodId?.({ options: this.options, authMethods });
        await authenticateAgent(connection, init, methodId, timeout);
        const session = await openNewSession(connection, { cwd, mcpServers: [] }, init, this.flavor.displayName, timeout);
        this.agent = { initialize: init, modes: session.modes ?? null, configOptions: session.configOptions ?? null, models: sessionModelsOf(session) };
        if (init.agentCapabilities?.sessionCapabilities?.close != null) {
          await withTimeout(connection.agent.request(acp.methods.agent.session.close, { sessionId: session.sessionId }), timeout, "The agent's session/close").catch(
            () => undefined,
          );
        }
        return { installed: true, executable: true, authenticated: true, ...version, models: this.models() };
      } catch (error) {
        const described = describeError(error);
        const authProblem = hasErrorCode(error, "provider_unavailable");
        const stderr = channel.stderrTail?.();
        return {
          installed: true,
          // The agent answered initialize; a refused session/new for another reason still
          // means it cannot run sessions here.
          executable: authProblem,
          authenticated: false,
          ...version,
          models: this.models(),
          message: withStderrTail(authProblem ? described.message : `The agent started but could not open a session: ${described.message}`, stderr),
        };
      }
    } finally {
      connection?.close();
      await channel?.kill().catch(() => undefined);
      if (sessionProbe) await rm(cwd, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  private notStarted(what: string, error: unknown, channel: AcpChannel): ProviderStatus {
    const stderr = channel.stderrTail?.();
    return {
      installed: true,
      executable: false,
      authenticated: false,
      models: this.models(),
      message: withStderrTail(`${what}: ${describeError(error).message}`, stderr),
    };
  }

  async openSession(input: OpenSessionInput): Promise<ProviderSession> {
    const session: AcpProviderSession<TOptions> = new AcpProviderSession(
      {
        flavor: this.flavor,
        instance: this.instance,
        options: this.options,
        context: this.context,
        channelFactory: this.channelFactory,
        capabilitiesFor: (agent) => this.capabilitiesFor(agent),
        onNegotiated: (agent) => {
          this.agent = agent;
        },
        onClosed: () => {
          this.sessions.delete(session);
        },
      },
      input,
    );
    try {
      await session.start();
    } catch (error) {
      await session.close();
      throw error;
    }
    this.sessions.add(session);
    return session;
  }

  async dispose(): Promise<void> {
    await Promise.all([...this.sessions].map((session) => session.close()));
  }
}

/** Turns a flavor into a Switchyard driver. */
export function createAcpDriver<TOptions>(flavor: AcpFlavor<TOptions>, adapterOptions: AcpAdapterOptions = {}): ProviderDriver<TOptions> {
  return defineDriver<TOptions>({
    driverKind: flavor.driverKind,
    displayName: flavor.displayName,
    ...(flavor.optionsSchema !== undefined ? { optionsSchema: flavor.optionsSchema } : {}),
    capabilities: staticAcpCapabilities(flavor),
    create: ({ instance, options, context }: CreateInstanceInput<TOptions>) =>
      new AcpOrchestrationAdapter(flavor, instance, options, context, adapterOptions),
  });
}
