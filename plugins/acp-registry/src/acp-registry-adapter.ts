import type { ProviderDriver } from "@switchyard/sdk";
import { createAcpDriver, type AcpAdapterOptions, type AcpFlavor } from "@switchyard/sdk/acp";
import { ACP_REGISTRY_CAPABILITIES, withoutIgnoredCapabilities } from "./acp-registry-capabilities.js";
import { AcpRegistryCatalogs, resolveRegistryLaunch } from "./acp-registry-launch.js";
import { acpRegistryOptionsSchema, type AcpRegistryOptions } from "./acp-registry-options.js";
import { testedRegistryAgent } from "./acp-registry-tested-agents.js";

/**
 * The generic ACP Registry flavor of the shared ACP adapter: any registry agent, with no
 * provider-specific extensions. Readiness is a disposable `session/new` (success = the agent
 * is authenticated; its models and modes are read from it).
 */
export function createAcpRegistryFlavor(
  catalogs: AcpRegistryCatalogs = new AcpRegistryCatalogs(),
): AcpFlavor<AcpRegistryOptions> {
  return {
    driverKind: "acp-registry",
    displayName: "ACP Registry agent",
    optionsSchema: acpRegistryOptionsSchema,
    capabilities: ACP_REGISTRY_CAPABILITIES,
    resolveLaunch: (input) => resolveRegistryLaunch(catalogs, input),
    authMethodId: ({ options }) => options.authMethodId,
    mcpTransport: "auto",
    // A registry agent is a black box: a stop is `session/cancel`; an agent that ignores it
    // has its turn ended after the cancel timeout rather than its process killed.
    hardInterrupt: "cancel",
    readinessProbe: "session",
    harness: ({ options }) => testedRegistryAgent(options.agentId),
    modes: ({ options }) => options.modes,
    hooks: {
      adjustInitialize: (init, { options }) => withoutIgnoredCapabilities(init, options.ignoreAgentCapabilities),
    },
  };
}

/** The `acp-registry` driver; `adapterOptions.channelFactory` replaces the process spawn (tests). */
export function createAcpRegistryDriver(adapterOptions: AcpAdapterOptions = {}): ProviderDriver<AcpRegistryOptions> {
  const driver = createAcpDriver(createAcpRegistryFlavor(new AcpRegistryCatalogs()), adapterOptions);
  return {
    ...driver,
    create: (input) => {
      // The generic driver cannot know which variable an agent reads its home from: say so
      // instead of silently ignoring the setting.
      if (input.instance.homePath !== null) {
        input.context.logger.warn(
          "homePath is not used by the acp-registry driver; set the agent's home variable in `environment` or options.env",
          {
            instanceId: input.instance.id,
            homePath: input.instance.homePath,
          },
        );
      }
      return driver.create(input);
    },
  };
}
