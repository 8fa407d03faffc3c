import { existsSync } from "node:fs";
import { join } from "node:path";
import { userHome, type ConnectionTarget } from "../harness-connector.js";
import { jsonServersConnector, lineNaming } from "./json-servers-connector.js";

/** `opencode.jsonc` when the folder has one, else `opencode.json`. */
function openCodeFile(dir: string): string {
  const jsonc = join(dir, "opencode.jsonc");
  return existsSync(jsonc) ? jsonc : join(dir, "opencode.json");
}

function openCodeUserDir(target: ConnectionTarget): string {
  const xdg = target.env.XDG_CONFIG_HOME;
  return join(xdg !== undefined && xdg !== "" ? xdg : join(userHome(target.env), ".config"), "opencode");
}

/**
 * OpenCode: `opencode.json[c]` in the project or `$XDG_CONFIG_HOME/opencode/`, `mcp.<key>` a
 * remote server whose header reads the token file itself (`{file:…}`, substituted by OpenCode
 * when it loads the config), so the config holds only the file's path.
 */
export const openCodeConnector = jsonServersConnector({
  id: "opencode",
  displayName: "OpenCode",
  tokenDelivery: "file",
  serversPath: ["mcp"],
  configFile: (target) => openCodeFile(target.scope === "project" ? target.projectDir : openCodeUserDir(target)),
  // As plugins/opencode: `oauth: false` (a refused token is an error, never an OAuth login) and
  // `timeout` above the longest blocking wait (OpenCode's default cuts a call at 60 s). OpenCode
  // runs MCP tools without asking unless the user's `permission` says otherwise.
  entry: (spec) => ({
    type: "remote",
    url: spec.url,
    enabled: true,
    oauth: false,
    timeout: spec.toolTimeoutMs,
    headers: { Authorization: `Bearer {file:${spec.secretFile}}` },
  }),
  selfCheck: () => ({
    command: "opencode",
    args: ["mcp", "list"],
    interpret({ stdout, stderr }, serverName) {
      const text = `${stdout}\n${stderr}`;
      const line = lineNaming(text, serverName);
      if (line === null) return { ok: false, detail: "opencode mcp list does not list it" };
      return { ok: /connected/i.test(line) && !/failed|disconnected|error/i.test(line), detail: line };
    },
  }),
});
