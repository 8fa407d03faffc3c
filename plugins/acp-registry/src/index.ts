/**
 * @switchyard/plugin-acp-registry: any agent of the ACP Registry as a Switchyard provider, the
 * generic flavor of the sdk's shared ACP adapter. Each instance names a registry agent; the
 * agent is installed by an operator (`switchyard registry install <id>`, a command group this
 * plugin contributes, or the web UI's Registry page through the HTTP API routes it contributes)
 * into the shared registry cache and launched from there (or from a local command override).
 */
import { definePlugin } from "@switchyard/sdk";
import { createAcpRegistryDriver } from "./acp-registry-adapter.js";
import { registryCommands } from "./acp-registry-commands.js";
import { registryRoutes } from "./acp-registry-routes.js";

export { createAcpRegistryDriver, createAcpRegistryFlavor } from "./acp-registry-adapter.js";
export { AcpRegistryCatalogs } from "./acp-registry-launch.js";
export {
  IGNORABLE_AGENT_CAPABILITIES,
  acpRegistryOptionsSchema,
  type AcpRegistryOptions,
  type IgnorableAgentCapability,
} from "./acp-registry-options.js";
export { ACP_REGISTRY_CAPABILITIES, withoutIgnoredCapabilities } from "./acp-registry-capabilities.js";
export {
  CODEX_ACP_HARNESS,
  GEMINI_CLI_ACP_HARNESS,
  TESTED_REGISTRY_AGENTS,
  testedRegistryAgent,
} from "./acp-registry-tested-agents.js";
export { ACP_REGISTRY_URL_ENV, acpRegistryCacheDir, resolveRegistryUrl, toAcpLaunch } from "./acp-registry-wire.js";

export { registryCommands } from "./acp-registry-commands.js";
export { registryRoutes, JOB_WAIT_MS } from "./acp-registry-routes.js";
export { InstallJobs, type InstallJobPhase, type InstallJobView } from "./acp-registry-install-jobs.js";

export default definePlugin({
  drivers: [createAcpRegistryDriver()],
  commands: [registryCommands],
  routes: registryRoutes,
});
