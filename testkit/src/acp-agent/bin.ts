#!/usr/bin/env node
/**
 * Runs the scripted ACP agent over stdio: `node bin.js [--config '<json ScriptedAcpAgentOptions>']`.
 * The config may also come from the `SCRIPTED_ACP_AGENT_CONFIG` environment variable.
 */
import { runScriptedAcpAgentOverStdio, type ScriptedAcpAgentOptions } from "./scripted-agent.js";

function readConfig(argv: readonly string[]): ScriptedAcpAgentOptions {
  const index = argv.indexOf("--config");
  const raw = index >= 0 ? argv[index + 1] : process.env.SCRIPTED_ACP_AGENT_CONFIG;
  return raw ? (JSON.parse(raw) as ScriptedAcpAgentOptions) : {};
}

runScriptedAcpAgentOverStdio(readConfig(process.argv.slice(2))).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`scripted-acp-agent: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
