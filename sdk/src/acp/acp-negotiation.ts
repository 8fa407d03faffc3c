import {
  NO_CAPABILITIES,
  mergeCapabilities,
  type ModelDescriptor,
  type PluginLogger,
  type ProviderCapabilities,
  type ProviderInstanceDescriptor,
} from "@switchyard/spec";
import { ACP_BASE_CAPABILITIES, advertisedModels, negotiateAcpCapabilities } from "./acp-capabilities.js";
import { modeMappingOf, type AcpAgentDescription, type AcpFlavor } from "./acp-flavor.js";

/** The flavor's static declaration over the ACP base: what instances claim before negotiation. @public */
export function staticAcpCapabilities<TOptions>(flavor: AcpFlavor<TOptions>): ProviderCapabilities {
  const base = mergeCapabilities(NO_CAPABILITIES, ACP_BASE_CAPABILITIES).capabilities;
  return mergeCapabilities(base, flavor.capabilities).capabilities;
}

/**
 * What one provider instance has learned about its agent (the latest `initialize` and session
 * setup, from a probe or a session), and the capabilities and models that follow from it.
 * Before any agent has been seen, the flavor's static declaration holds.
 * @public
 */
export class AcpAgentNegotiation<TOptions> {
  #agent: AcpAgentDescription | null = null;

  constructor(
    private readonly flavor: AcpFlavor<TOptions>,
    private readonly options: TOptions,
    private readonly instance: ProviderInstanceDescriptor,
    private readonly logger: PluginLogger,
  ) {}

  /** The latest description, or null before any agent answered. */
  get agent(): AcpAgentDescription | null {
    return this.#agent;
  }

  /** A session (or a session probe) described its agent. */
  learn(agent: AcpAgentDescription): void {
    this.#agent = agent;
  }

  /** An `initialize`-only probe: keeps what an earlier session reported about modes and models. */
  learnInitialize(initialize: AcpAgentDescription["initialize"]): void {
    this.#agent = { ...this.#agent, initialize };
  }

  /** The static declaration until an agent has been seen; then what it negotiated. */
  capabilities(): ProviderCapabilities {
    return this.#agent === null ? staticAcpCapabilities(this.flavor) : this.capabilitiesFor(this.#agent);
  }

  /** The record for one agent description (a session's own agent). */
  capabilitiesFor(agent: AcpAgentDescription): ProviderCapabilities {
    let overlay = negotiateAcpCapabilities(agent, modeMappingOf(this.flavor, this.options));
    if (this.flavor.hooks?.refineCapabilities) overlay = this.flavor.hooks.refineCapabilities(overlay, agent);
    const { capabilities, warnings } = mergeCapabilities(staticAcpCapabilities(this.flavor), overlay);
    if (warnings.length > 0) this.logger.warn("ACP capability negotiation adjusted", { warnings });
    return capabilities;
  }

  /** The flavor's models, then the agent's, then the instance's custom ones, each id once. */
  models(): ModelDescriptor[] {
    const own = this.flavor.models ?? [];
    const fromAgent = advertisedModels(this.#agent).filter(
      (model) => !own.some((candidate) => candidate.id === model.id),
    );
    const custom = this.instance.customModels
      .filter((id) => !own.some((model) => model.id === id) && !fromAgent.some((model) => model.id === id))
      .map((id) => ({ id }));
    return [...own, ...fromAgent, ...custom];
  }
}
