/**
 * @switchyard/plugin-codex: Codex as two drivers.
 * - `codex`: `codex app-server` (JSON-RPC over stdio; native steer, interrupt, fork, resume,
 *   approvals, per-thread MCP injection).
 * - `codex-exec`: `@openai/codex-sdk` (one `codex exec` per turn; interrupt by abort, resume by
 *   thread id; the shared policy covers steering and forks).
 */
import { definePlugin } from "@switchyard/sdk";
import { createCodexDriver, createCodexExecDriver } from "./codex-adapter.js";

export { createCodexDriver, createCodexExecDriver } from "./codex-adapter.js";
export { CodexAppServerSession } from "./app-server/codex-session.js";
export { CodexExecSession } from "./exec/codex-exec-session.js";
export { CODEX_APP_SERVER_CAPABILITIES, CODEX_EXEC_CAPABILITIES } from "./codex-capabilities.js";
export {
  codexOptionsSchema,
  codexExecOptionsSchema,
  type CodexOptions,
  type CodexExecOptions,
  type CodexConfigValue,
} from "./shared/codex-options.js";
export {
  codexMcpServers,
  codexThreadMcpConfig,
  directServerName,
  type CodexMcpServerConfig,
} from "./shared/codex-mcp-config.js";
export { MCP_TOKEN_ENV_VAR } from "./shared/codex-environment.js";
export { appServerModeSettings, execModeSettings } from "./shared/codex-runtime-modes.js";
export {
  CODEX_HARNESS,
  codexFromPackage,
  findCodex,
  installedCodexBinary,
  resolveCodexBinary,
  type CodexBinary,
  type CodexLookup,
} from "./shared/codex-binary.js";
export { CODEX_SDK_HARNESS, findCodexSdk, loadCodexSdk, type CodexSdk } from "./exec/codex-sdk.js";
export { CODEX_WIRE_VERSION } from "./codex-wire.js";

export default definePlugin({ drivers: [createCodexDriver(), createCodexExecDriver()] });
