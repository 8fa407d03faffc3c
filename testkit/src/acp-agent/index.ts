/**
 * The scripted ACP agent: a protocol-faithful stand-in for ACP agents that cannot run here
 * (Grok's CLI), driven by a small script language in the prompt text. Reusable by any flavor.
 */
import { fileURLToPath } from "node:url";
import type { ScriptedAcpAgentOptions } from "./scripted-agent.js";

export {
  createScriptedAcpAgent,
  runScriptedAcpAgentOverStdio,
  XAI_VENDOR_EXTENSIONS,
  type ScriptedAcpAgentOptions,
  type ScriptedAgentVendorExtensions,
} from "./scripted-agent.js";
export { parseAcpAgentScript, stripInstructions, type AcpAgentScriptStep } from "./script.js";
export { scriptedAgentChannelFactory } from "./in-process.js";
export { countInScriptedAgentInput } from "./agent-input.js";
export { createEventRecorder, type AdapterEventRecorder } from "./event-recorder.js";
export { startTestMcpServer, type TestMcpCall, type TestMcpServer } from "./mcp-test-server.js";
export {
  createAcpTestContext,
  createProcessGroupHelpers,
  createRecordingLogger,
  type AcpTestContext,
  type RecordingProcessHelpers,
  type TestLogLine,
} from "./process-helpers.js";

/**
 * The runnable agent (`node <this> --config <json>`). Always the compiled file in `dist/`,
 * whether this module is loaded from `src/` (vitest) or `dist/`: both sit two levels below
 * the package root. Build the testkit before running tests that spawn it.
 */
export const SCRIPTED_ACP_AGENT_BIN = fileURLToPath(new URL("../../dist/acp-agent/bin.js", import.meta.url));

/** The launch command for the scripted agent as a child process of this Node. */
export function scriptedAgentCommand(options: ScriptedAcpAgentOptions = {}): { command: string; args: string[] } {
  return { command: process.execPath, args: [SCRIPTED_ACP_AGENT_BIN, "--config", JSON.stringify(options)] };
}
