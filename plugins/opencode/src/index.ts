/**
 * @switchyard/plugin-opencode: OpenCode (`opencode-ai`) over `opencode serve` and
 * `@opencode-ai/sdk` v2, one server per provider session so each session's MCP credential
 * stays its own.
 */
import { definePlugin } from "@switchyard/sdk";
import { createOpenCodeDriver } from "./opencode-adapter.js";

export { configuredModels, createOpenCodeAdapter, createOpenCodeDriver, modelCatalog } from "./opencode-adapter.js";
export { OPENCODE_CAPABILITIES } from "./opencode-capabilities.js";
export {
  MCP_TOKEN_ENV,
  instanceDirectories,
  permissionForMode,
  serverConfig,
  serverEnvironment,
  readUserConfig,
  userConfigPath,
} from "./opencode-config.js";
export { openCodeOptionsSchema, type OpenCodeOptions } from "./opencode-options.js";
export { openCodeMcpEntries, permissionWithRules } from "./opencode-tool-rules.js";
export { OpenCodeProviderSession, forkPoint } from "./opencode-session.js";
export {
  OPENCODE_HARNESS,
  findOpenCode,
  resolveOpenCodeBinary,
  platformPackageNames,
  type OpenCodeBinary,
  type OpenCodeLookup,
} from "./opencode-binary.js";
export { parseJsonc } from "./jsonc.js";
export * from "./opencode-wire.js";

export default definePlugin({ drivers: [createOpenCodeDriver()] });
