/**
 * @switchyard/plugin-acp-registry: any agent of the ACP Registry as a Switchyard provider, the
 * generic flavor of the sdk's shared ACP adapter. Each instance names a registry agent; the
 * agent is installed by an operator (`switchyard registry install <id>`, a command group this
 * plugin contributes) into the shared registry cache and launched from there (or from a local
 * command override).
 */
import { definePlugin } from "@switchyard/sdk";
import { createAcpRegistryDriver } from "./acp-registry-adapter.js";
import { registryCommands } from "./acp-registry-commands.js";

export {
  AcpRegistryCatalogs,
  IGNORABLE_AGENT_CAPABILITIES,
  acpRegistryOptionsSchema,
  createAcpRegistryDriver,
  createAcpRegistryFlavor,
  withoutIgnoredCapabilities,
  type AcpRegistryOptions,
  type IgnorableAgentCapability,
} from "./acp-registry-adapter.js";
export { ACP_REGISTRY_CAPABILITIES } from "./acp-registry-capabilities.js";
export { ACP_REGISTRY_URL_ENV, acpRegistryCacheDir, resolveRegistryUrl, toAcpLaunch } from "./acp-registry-wire.js";

export { registryCommands } from "./acp-registry-commands.js";

export default definePlugin({ drivers: [createAcpRegistryDriver()], commands: [registryCommands] });
