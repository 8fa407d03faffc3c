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
  return {
    id,
    driver: "grok",
    options: {
      command: process.execPath,
      args: [SCRIPTED_ACP_AGENT_BIN, "--config", JSON.stringify(agentOptions(dirs))],
    },
  };
}

/**
 * A `grok` instance whose agent process leaves long-running tool processes behind, as a harness
 * running shell commands does. `sh` exports `marker` (`{ name, value }`) so the agent and every
 * descendant carry it in their environment, starts `sleep` in the background (a member of the
 * process group the plugin host started), starts a second one under `setsid` (a session and
 * process group of its own, out of reach of a signal to the harness's group), then becomes the
 * agent (exec), so the agent leads the group. Both tool processes outlive the agent unless the
 * host stops them.
 */
export function agentWithToolProcessInstance(id, dirs, { toolSeconds = 240, marker }) {
  if (!/^[A-Z_][A-Z0-9_]*$/.test(marker.name) || /['\\]/.test(marker.value))
    throw new Error(`marker ${marker.name}=${marker.value} cannot be exported by sh`);
  const script = [
    `export ${marker.name}='${marker.value}'`,
    `sleep ${toolSeconds} </dev/null >/dev/null 2>&1 &`,
    `setsid sleep ${toolSeconds + 1} </dev/null >/dev/null 2>&1 &`,
    'exec "$0" "$@"',
  ].join("\n");
  return {
    id,
    driver: "grok",
    options: {
      command: "/bin/sh",
      args: ["-c", script, process.execPath, SCRIPTED_ACP_AGENT_BIN, "--config", JSON.stringify(agentOptions(dirs))],
    },
  };
}

/** A `grok` instance whose agent copies its credential into `captureDir` (see credential-tap-agent.js). */
export function tappedAgentInstance(id, dirs, captureDir) {
  return {
    id,
    driver: "grok",
    options: {
      command: process.execPath,
      args: [TAP_AGENT, captureDir, SCRIPTED_ACP_AGENT_BIN, "--config", JSON.stringify(agentOptions(dirs))],
    },
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
        if (capture.prompts.some((prompt) => prompt.includes(marker)) && capture.tokens.length > 0)
          return capture.tokens.at(-1);
      }
      return null;
    },
    { timeoutMs, intervalMs: 100 },
  );
  if (!found)
    throw new Error(`no tapped agent received a credential for a prompt containing ${marker} within ${timeoutMs} ms`);
  return found;
}
