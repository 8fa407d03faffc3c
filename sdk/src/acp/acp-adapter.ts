import type {
  CreateInstanceInput,
  OrchestrationAdapter,
  PluginContext,
  ProviderDriver,
  ProviderInstanceDescriptor,
} from "@switchyard/spec";
import { defineDriver } from "../define.js";
import { defineAdapter } from "../harness/index.js";
import { spawnAcpChannel } from "./acp-connection.js";
import type { AcpChannelFactory, AcpFlavor } from "./acp-flavor.js";
import { AcpAgentNegotiation, staticAcpCapabilities } from "./acp-negotiation.js";
import { probeAcpAgent } from "./acp-probe.js";
import { AcpProviderSession } from "./acp-session.js";

/** Options for {@link createAcpDriver} and {@link createAcpAdapter}. @public */
export interface AcpAdapterOptions {
  /**
   * Starts the agent. Default: `context.process.spawn` (own process group) with ACP over stdio.
   * Inject one to run an agent in-process or over another transport.
   */
  readonly channelFactory?: AcpChannelFactory;
}

/**
 * The OrchestrationAdapter of one ACP provider instance, on the kit's adapter shell. Each
 * session runs its own agent process; what the agent advertises at `initialize` (in a probe
 * or a session) refines `capabilities()`.
 * @public
 */
export function createAcpAdapter<TOptions>(
  flavor: AcpFlavor<TOptions>,
  instance: ProviderInstanceDescriptor,
  options: TOptions,
  context: PluginContext,
  adapterOptions: AcpAdapterOptions = {},
): OrchestrationAdapter {
  const channelFactory = adapterOptions.channelFactory ?? spawnAcpChannel;
  const negotiation = new AcpAgentNegotiation(flavor, options, instance, context.logger);
  return defineAdapter({
    instance,
    driverKind: flavor.driverKind,
    capabilities: () => negotiation.capabilities(),
    probe: (probeOptions) =>
      probeAcpAgent({ flavor, instance, options, context, channelFactory, negotiation }, probeOptions),
    createSession: (input, onClosed) =>
      new AcpProviderSession(
        {
          flavor,
          instance,
          options,
          context,
          channelFactory,
          capabilitiesFor: (agent) => negotiation.capabilitiesFor(agent),
          onNegotiated: (agent) => negotiation.learn(agent),
          onClosed,
        },
        input,
      ),
  });
}

/** Turns a flavor into a Switchyard driver. @public */
export function createAcpDriver<TOptions>(
  flavor: AcpFlavor<TOptions>,
  adapterOptions: AcpAdapterOptions = {},
): ProviderDriver<TOptions> {
  return defineDriver<TOptions>({
    driverKind: flavor.driverKind,
    displayName: flavor.displayName,
    ...(flavor.optionsSchema !== undefined ? { optionsSchema: flavor.optionsSchema } : {}),
    capabilities: staticAcpCapabilities(flavor),
    create: ({ instance, options, context }: CreateInstanceInput<TOptions>) =>
      createAcpAdapter(flavor, instance, options, context, adapterOptions),
  });
}
