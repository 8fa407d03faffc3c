import { join } from "node:path";
import { userHome, type ConnectionTarget } from "../harness-connector.js";
import { jsonServersConnector, lineNaming } from "./json-servers-connector.js";

/** Gemini CLI's home: `$GEMINI_CLI_HOME`, else the user's home. */
function geminiHome(target: ConnectionTarget): string {
  const home = target.env.GEMINI_CLI_HOME;
  return home !== undefined && home !== "" ? home : userHome(target.env);
}

/**
 * Gemini CLI: `.gemini/settings.json` (project) or `~/.gemini/settings.json`,
 * `mcpServers.<key>.httpUrl` with a header that names an environment variable (`${NAME}`, which
 * Gemini CLI expands in settings), and `timeout` above the longest blocking wait.
 */
export const geminiConnector = jsonServersConnector({
  id: "gemini",
  displayName: "Gemini CLI",
  tokenDelivery: "env",
  serversPath: ["mcpServers"],
  configFile: (target) =>
    join(target.scope === "project" ? target.projectDir : geminiHome(target), ".gemini", "settings.json"),
  // `trust: true`: Gemini CLI runs the server's tools without a confirmation, which headless
  // `gemini -p` cannot give (it refuses them otherwise); the token still bounds what they do.
  entry: (spec) => ({
    httpUrl: spec.url,
    headers: { Authorization: `Bearer \${${spec.envVar}}` },
    timeout: spec.toolTimeoutMs,
    trust: true,
  }),
  selfCheck: () => ({
    command: "gemini",
    args: ["mcp", "list"],
    interpret({ stdout, stderr }, serverName) {
      const line = lineNaming(`${stdout}\n${stderr}`, serverName);
      if (line === null) return { ok: false, detail: "gemini mcp list does not list it" };
      if (/disabled/i.test(line))
        return {
          ok: false,
          detail: `${line} (Gemini CLI turns MCP servers off in folders it does not trust: trust this folder in Gemini CLI, or set GEMINI_CLI_TRUST_WORKSPACE=true)`,
        };
      return { ok: /connected/i.test(line) && !/disconnected/i.test(line), detail: line };
    },
  }),
});
