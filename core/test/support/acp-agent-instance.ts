import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { scriptedAgentCommand } from "@switchyard/testkit";

/** The Grok plugin: the shared ACP adapter, which drives the testkit's scripted ACP agent over real stdio. */
export const GROK_PLUGIN_DIR = fileURLToPath(new URL("../../../plugins/grok", import.meta.url));

/**
 * A provider instance that runs the scripted ACP agent (testkit/src/acp-agent/script.ts) as a
 * real process through the Grok plugin: `@write <path> <content>` writes through the ACP
 * session's file system, which is confined to the thread's working directory.
 */
export function acpAgentInstance(id: string, dirs: { home: string; gateDir: string }): unknown {
  const { command, args } = scriptedAgentCommand({
    name: "grok",
    loadSession: true,
    stateDir: join(dirs.home, `acp-${id}-state`),
    gateDir: dirs.gateDir,
  });
  return { id, driver: "grok", options: { command, args } };
}
