/**
 * The harness kit: the parts every provider session needs, written once. A session built on it
 * reports the same items for the same interrupt, the same resolution for the same dismissal,
 * and the same error text (with the harness's stderr) for the same crash, whatever the provider.
 */
export { LineSplitter } from "./line-splitter.js";
export { JsonLinesChannel, type JsonLinesChannelOptions, type ProcessExit } from "./json-lines-channel.js";
export {
  JsonRpcPeer,
  JsonRpcRequestError,
  type IncomingNotification,
  type IncomingRequest,
  type JsonRpcPeerOptions,
} from "./json-rpc-peer.js";
export { EventSink } from "./event-sink.js";
export { RuntimeRequestBook, type OpenRuntimeRequest, type RuntimeRequestOutcome } from "./runtime-request-book.js";
export { TurnLedger, addUsage, type ToolCallStart, type TurnUsage } from "./turn-ledger.js";
export {
  NativeSubagentBook,
  UNFINISHED_SUBAGENT_SUMMARY,
  type NativeSubagentEnding,
  type NativeSubagentFacts,
} from "./native-subagent-book.js";
export { defineAdapter, type AdapterDefinition, type StartableSession } from "./define-adapter.js";
export { harnessEnvironment, HOST_ONLY_ENV_PREFIX, type HarnessEnvironmentInput } from "./harness-environment.js";
export { parseMcpToolName, type McpToolName } from "./mcp-tool-name.js";
export {
  LocalServerProcess,
  ServerOutputTail,
  freeLoopbackPort,
  SERVER_KILL_GRACE_MS,
  type LocalServerOptions,
} from "./local-server-process.js";
export {
  findHarness,
  globalNpmRoots,
  owningPackage,
  describeSearched,
  harnessNotFoundMessage,
  type FoundHarness,
  type HarnessSearch,
  type HarnessSearchInput,
  type HarnessSpec,
} from "./find-harness.js";
export {
  harnessVersionVerdict,
  harnessReport,
  withHarnessVerdict,
  harnessNotFoundStatus,
  type HarnessVersionVerdict,
} from "./harness-version.js";
export { importHarnessPackage, packageEntry } from "./harness-module.js";
export { sessionEnvironment, toolRuleMatches, toolRuleVerdict, type ToolRuleVerdict } from "./profile-session.js";
