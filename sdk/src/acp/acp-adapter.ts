import os from "node:os";
import {
  NO_CAPABILITIES,
  SPECIFICATION_VERSION,
  mergeCapabilities,
  type CreateInstanceInput,
  type ModelDescriptor,
  type OpenSessionInput,
  type OrchestrationAdapter,
  type PluginContext,
  type ProviderCapabilities,
  type ProviderDriver,
  type ProviderInstanceDescriptor,
  type ProviderSession,
  type ProviderStatus,
} from "@switchyard/core/spec";
import { defineDriver } from "../define.js";
import { ACP_BASE_CAPABILITIES, negotiateAcpCapabilities } from "./acp-capabilities.js";
import { REFUSING_HANDLERS, connectClient, describeError, initializeAgent, launchEnv, spawnAcpChannel } from "./acp-connection.js";
import type { AcpAgentDescription, AcpChannelFactory, AcpFlavor } from "./acp-flavor.js";
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
    let overlay = negotiateAcpCapabilities(agent, this.flavor.modes);
    if (this.flavor.hooks?.refineCapabilities) overlay = this.flavor.hooks.refineCapabilities(overlay, agent);
    const { capabilities, warnings } = mergeCapabilities(staticAcpCapabilities(this.flavor), overlay);
    if (warnings.length > 0) this.context.logger.warn("ACP capability negotiation adjusted", { warnings });
    return capabilities;
  }

  private models(): ModelDescriptor[] {
    const own = this.flavor.models ?? [];
    const custom = this.instance.customModels.filter((id) => !own.some((model) => model.id === id)).map((id) => ({ id }));
    const fromAgent: ModelDescriptor[] = [];
    const option = this.agent?.configOptions?.find((candidate) => candidate.category === "model" && candidate.type === "select");
    if (option && option.type === "select") {
      for (const entry of option.options) {
        const values = "group" in entry ? entry.options : [entry];
        for (const value of values) {
          if (own.some((model) => model.id === value.value)) continue;
          fromAgent.push({ id: value.value, displayName: value.name, ...(value.value === option.currentValue ? { isDefault: true } : {}) });
        }
      }
    }
    return [...own, ...fromAgent, ...custom];
  }

  /**
   * Starts the agent, sends `initialize` and stops it. Never opens a session, so it never starts
   * a model turn; `authenticated` is `true` only when the agent lists no auth methods.
   */
  async probe(): Promise<ProviderStatus> {
    const launch = await this.flavor.resolveLaunch({ instance: this.instance, options: this.options, cwd: null, purpose: "probe" });
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
    let channel;
    try {
      channel = await this.channelFactory(launch, { cwd: os.tmpdir(), env, label: `${this.flavor.driverKind} acp probe`, context: this.context });
    } catch (error) {
      return { installed: true, executable: false, authenticated: false, models: this.models(), message: describeError(error).message };
    }
    const connection = connectClient(channel.stream, REFUSING_HANDLERS);
    try {
      const init = await initializeAgent(connection, this.context.hostVersion, this.flavor.setupTimeoutMs ?? 30_000);
      // Keep what an earlier session reported about modes and models; a probe opens no session.
      this.agent = { ...this.agent, initialize: init };
      const authMethods = init.authMethods ?? [];
      return {
        installed: true,
        executable: true,
        authenticated: authMethods.length === 0 ? true : "unknown",
        ...(init.agentInfo?.version ? { version: init.agentInfo.version } : {}),
        models: this.models(),
        ...(authMethods.length > 0
          ? { message: `The agent offers auth methods (${authMethods.map((m) => m.id).join(", ")}); whether it is logged in shows when a session opens.` }
          : {}),
      };
    } catch (error) {
      const stderr = channel.stderrTail?.();
      return {
        installed: true,
        executable: false,
        authenticated: false,
        models: this.models(),
        message: `The agent did not answer initialize: ${describeError(error).message}${stderr ? ` (stderr: ${stderr.slice(-300)})` : ""}`,
      };
    } finally {
      connection.close();
      await channel.kill().catch(() => undefined);
    }
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
