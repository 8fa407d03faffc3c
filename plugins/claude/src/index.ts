/**
 * @switchyard/plugin-claude: Claude on the Claude Agent SDK (`@anthropic-ai/claude-agent-sdk`),
 * one streaming-input `query()` per provider session, built on the sdk's harness kit.
 */
import { definePlugin } from "@switchyard/sdk";
import { createClaudeDriver } from "./claude-adapter.js";

export { createClaudeAdapter, createClaudeDriver } from "./claude-adapter.js";
export { CLAUDE_CAPABILITIES } from "./claude-capabilities.js";
export { claudeMcpOptions, type ClaudeMcpOptions } from "./claude-mcp-config.js";
export { claudeOptionsSchema, type ClaudeOptions } from "./claude-options.js";
export {
  COMMAND_ASK_SETTINGS,
  approvalKindOf,
  approvalRequestOf,
  bypassPermissionsAvailable,
  claudeModeSettings,
  permissionResultOf,
  ROOT_FULL_ACCESS_WARNING,
  type ClaudeModeSettings,
} from "./claude-permissions.js";
export {
  claudeAuthentication,
  claudeModels,
  credentialsOnDisk,
  probeClaude,
  type ClaudeProbeInput,
} from "./claude-probe.js";
export {
  CLAUDE_CODE_HARNESS,
  CLAUDE_SDK_HARNESS,
  bundledClaude,
  findClaude,
  findClaudeSdk,
  type ClaudeBinary,
  type ClaudeLookup,
} from "./claude-binary.js";
export { ClaudeProviderSession } from "./claude-session.js";
export { snapshotOf } from "./claude-transcripts.js";
export { ClaudeTurn, terminalOf, toolKindOf, toolTitleOf, turnUsageOf } from "./claude-turn.js";
export * from "./claude-wire.js";

export default definePlugin({ drivers: [createClaudeDriver()] });
