/**
 * @switchyard/plugin-cursor: Cursor on the Cursor Agent SDK (`@cursor/sdk`), one sidecar
 * process on Node ≥ 22.13 per provider session, built on the sdk's harness kit.
 */
import { definePlugin } from "@switchyard/sdk";
import { createCursorDriver } from "./cursor-adapter.js";

export { createCursorAdapter, createCursorDriver } from "./cursor-adapter.js";
export { CURSOR_CAPABILITIES } from "./cursor-capabilities.js";
export {
  mcpToolOf,
  subagentTitleOf,
  terminalOf,
  toolCallFailed,
  toolKindOf,
  toolNameOf,
  toolOutputOf,
  toolTitleOf,
  turnUsageOf,
} from "./cursor-events.js";
export { CursorTurn } from "./cursor-turn.js";
export { cursorMcpServers, redactedMcpServers } from "./cursor-mcp-config.js";
export { resolveCursorNode, satisfiesCursorSdk, type CursorNode, type CursorNodeResolution } from "./cursor-node.js";
export { cursorOptionsSchema, type CursorOptions } from "./cursor-options.js";
export { CURSOR_SDK_HARNESS } from "./cursor-sdk-location.js";
export { cursorCredentials, cursorModels, probeCursor, type CursorProbeInput } from "./cursor-probe.js";
export {
  cursorSdkBesidePlugin,
  locateCursorSdk,
  type CursorSdkLocation,
  type CursorSdkResolution,
  type CursorSdkSearch,
} from "./cursor-sdk-location.js";
export { CursorProviderSession, threadStoreDir, type CursorSessionDeps } from "./cursor-session.js";
export { CURSOR_SIDECAR_SCRIPT, CursorSidecar, type SidecarListener } from "./cursor-sidecar-process.js";
export * from "./cursor-wire.js";

export default definePlugin({ drivers: [createCursorDriver()] });
