/**
 * @switchyard/sdk/acp: the shared ACP adapter. A flavor (driver kind, capabilities, launch
 * command, extensions, hooks) becomes a Switchyard driver through `createAcpDriver(flavor)`.
 * Built on `@agentclientprotocol/sdk` 2.x (`/unstable` entry, a superset of stable v1 that adds
 * `session/fork`), and on the sdk's harness kit for the turn ledger, the runtime-request book,
 * the adapter shell and the emit guard.
 */
export type {
  AcpAgentDescription,
  AcpChannel,
  AcpChannelFactory,
  AcpExtensionInput,
  AcpExtensions,
  AcpFlavor,
  AcpFlavorHooks,
  AcpLaunchCommand,
  AcpLaunchInput,
  AcpModeMapping,
  AcpRuntimeRequestOutcome,
  AcpSessionHandle,
  AcpSessionModels,
  AcpTurnView,
} from "./acp-flavor.js";
export { modeMappingOf } from "./acp-flavor.js";
export { createAcpDriver, createAcpAdapter, type AcpAdapterOptions } from "./acp-adapter.js";
export { staticAcpCapabilities, AcpAgentNegotiation } from "./acp-negotiation.js";
export { probeAcpAgent, type AcpProbeDeps } from "./acp-probe.js";
export { AcpProviderSession, type AcpSessionDeps } from "./acp-session.js";
export { AcpTurn, type AcpTurnSession } from "./acp-turn.js";
export {
  readSessionUpdate,
  toolCallStartOf,
  toolCallEndOf,
  promptEnding,
  agentExitReport,
  replayedTurns,
  noticeMessage,
  type AcpUpdate,
  type AcpUpdateContext,
  type AcpToolCallEnd,
  type AcpPromptEnding,
  type AcpAgentExit,
  type AcpReplayedTurn,
} from "./acp-events.js";
export {
  ACP_BASE_CAPABILITIES,
  negotiateAcpCapabilities,
  findConfigOption,
  selectValues,
  agentModeIds,
  planModeId,
  advertisedEfforts,
  advertisedModels,
  sessionModelsOf,
} from "./acp-capabilities.js";
export {
  ACP_CLIENT_CAPABILITIES,
  spawnAcpChannel,
  SerialQueue,
  settleInbound,
  authenticateAgent,
  openNewSession,
} from "./acp-connection.js";
export { buildAcpMcpServers, type AcpMcpInjection } from "./acp-mcp-injection.js";
export {
  ObservedSubagents,
  observedStatusOf,
  type ObservedSubagent,
  type ObservedSubagentStatus,
} from "./acp-subagents.js";
export {
  approvalKindOf,
  approvalOptions,
  automaticOutcome,
  decisionOfOptionKind,
  outcomeForDecision,
  permissionApproval,
  permissionDetail,
} from "./acp-permissions.js";
export { elicitationApproval, elicitationQuestions, elicitationResponse } from "./acp-elicitation.js";
export { ConfinedFileSystem } from "./acp-fs.js";
export { mcpServerOf, planMarkdown, toolKindOf, toolOutputText, type McpToolCallShape } from "./acp-tool-calls.js";
/** The ACP SDK (`/unstable` entry) for flavors that need its types or `RequestError`. @experimental */
export * as acpSdk from "@agentclientprotocol/sdk/unstable";
