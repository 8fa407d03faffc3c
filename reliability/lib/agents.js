// Provider instances whose harness is a real process: the sdk testkit's scripted ACP agent,
// driven through the built-in Grok plugin (an ACP driver with a configurable command).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SCRIPTED_ACP_AGENT_BIN } from "./paths.js";
import { until } from "./wait.js";

const TAP_AGENT = fileURLToPath(new URL("./credential-tap-agent.js", import.meta.url));

/** What the scripted agent advertises: what `grok agent stdio` does (loadSession, http MCP), plus a plan mode. */
function agentOptions({ stateDir, gateDir }) {
  return {
    name: "grok",
    loadSession: true,
    mcp: { http: true },
    stateDir,
    gateDir,
    modes: [
      { id: "default", name: "Default" },
      { id: "plan", name: "Plan" },
    ],
  };
}

/** A `grok` instance running the scripted agent directly. */
export function scriptedAgentInstance(id, dirs) {
  return { id, driver: "grok", options: { command: process.execPath, args: [SCRIPTED_ACP_AGENT_BIN, "--config", JSON.stringify(agentOptions(dirs))] } };
}

/**
 * A `grok` instance whose agent process also starts a long-running tool process in its own
 * process group and leaves it running, as a harness running a shell command does: `sh` starts
 * `sleep` in the background, then becomes the agent (exec), so the agent leads the group the
 * plugin host started and the tool is a member that outlives it unless the group is stopped.
 */
export function agentWithToolProcessInstance(id, dirs, { toolSeconds = 240 } = {}) {
  const script = `sleep ${toolSeconds} </dev/null >/dev/null 2>&1 & exec "$0" "$@"`;
  return {
    id,
    driver: "grok",
    options: { command: "/bin/sh", args: ["-c", script, process.execPath, SCRIPTED_ACP_AGENT_BIN, "--config", JSON.stringify(agentOptions(dirs))] },
  };
}

/** A `grok` instance whose agent copies its credential into `captureDir` (see credential-tap-agent.js). */
export function tappedAgentInstance(id, dirs, captureDir) {
  return {
    id,
    driver: "grok",
    options: { command: process.execPath, args: [TAP_AGENT, captureDir, SCRIPTED_ACP_AGENT_BIN, "--config", JSON.stringify(agentOptions(dirs))] },
  };
}

/** The newest credential a tapped agent received in a session whose prompts contain `marker`. */
export async function capturedToken(captureDir, marker, { timeoutMs = 30_000 } = {}) {
  const found = await until(
    () => {
      if (!existsSync(captureDir)) return null;
      for (const file of readdirSync(captureDir)) {
        let capture;
        try {
          capture = JSON.parse(readFileSync(join(captureDir, file), "utf8"));
        } catch {
          continue;
        }
        if (capture.prompts.some((prompt) => prompt.includes(marker)) && capture.tokens.length > 0) return capture.tokens.at(-1);
      }
      return null;
    },
    { timeoutMs, intervalMs: 100 },
  );
  if (!found) throw new Error(`no tapped agent received a credential for a prompt containing ${marker} within ${timeoutMs} ms`);
  return found;
}
