/**
 * @switchyard/core: the host. It re-exports the spec (`@switchyard/spec`, also at `@switchyard/core/spec`).
 */
import "reflect-metadata";

export * from "./spec/index.js";
export { SwitchyardHost } from "./host/switchyard-host.js";
export {
  createContainer,
  defaultBuiltinPluginsDir,
  ENGINE_REACTIONS,
  type ContainerOptions,
} from "./host/composition-root.js";
export { TOKENS } from "./host/tokens.js";
export { resolve, type Token } from "./util/di-token.js";
export { loadConfig, parseConfig } from "./config/config-loader.js";
export { SwitchyardConfigSchema, type SwitchyardConfig, type ProviderInstanceConfig } from "./config/config-schema.js";
export { pathsFor, resolveHome, type SwitchyardPaths } from "./config/paths.js";
export { createLogger, createSilentLogger, scrubSecrets, type Logger } from "./logging/logger.js";
export {
  OrchestratorFailure,
  ORCHESTRATOR_FAILURE_CODES,
  type OrchestratorFailureCode,
} from "./engine/orchestrator-failure.js";
export * as policy from "./policy/index.js";
export type * from "./store/records.js";
export type { PluginRecord } from "./plugin-host/ports.js";
export type { ProviderAvailability, ProviderInstance } from "./engine/provider-catalog.js";
export { startServer, type RunningServer } from "./transports/http/switchyard-server.js";
export {
  McpSessionRegistry,
  type CredentialCapability,
  type McpInvocationScope,
} from "./services/credentials/mcp-session-registry.js";
export { ThreadManagementService } from "./services/thread-management-service.js";
export { DelegatedTaskService } from "./services/delegation/delegated-task-service.js";
export type { DelegateTaskResult } from "./services/delegation/task-view.js";
