/**
 * The fake Cursor backend: a protocol-faithful stand-in for Cursor's agent backend, which the
 * real `@cursor/sdk` talks to over Connect RPC + protobuf (`CURSOR_BACKEND_URL`).
 */
export { FakeCursorBackend, type FakeCursorBackendOptions, type FakeCursorRequest } from "./fake-cursor-backend.js";
export type { FakeCursorRunRecord, FakeCursorSteer, FakeCursorToolCall, FakeCursorUsage } from "./fake-cursor-run.js";
export type { SteerAnswer, McpStateServerJson } from "./cursor-wire-json.js";
export { parsedShellCommand } from "./cursor-wire-json.js";
export {
  CURSOR_SDK_VERSION,
  findInstalledCursorSdk,
  loadCursorWireSchemas,
  type CursorWireSchemas,
  type InstalledCursorSdk,
} from "./cursor-sdk-schemas.js";
