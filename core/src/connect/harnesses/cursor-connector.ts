import { join } from "node:path";
import { userHome } from "../harness-connector.js";
import { jsonServersConnector } from "./json-servers-connector.js";

/**
 * Cursor: `.cursor/mcp.json` (project) or `~/.cursor/mcp.json`, a streamable HTTP server by
 * `url` whose header reads the token from the environment (`${env:NAME}`, which Cursor
 * interpolates), so the file holds no secret.
 */
export const cursorConnector = jsonServersConnector({
  id: "cursor",
  displayName: "Cursor",
  tokenDelivery: "env",
  serversPath: ["mcpServers"],
  configFile: (target) =>
    join(target.scope === "project" ? target.projectDir : userHome(target.env), ".cursor", "mcp.json"),
  entry: (spec) => ({ url: spec.url, headers: { Authorization: `Bearer \${env:${spec.envVar}}` } }),
  selfCheck: () => ({
    command: "cursor-agent",
    args: ["mcp", "list"],
    interpret({ stdout, stderr }, serverName) {
      const text = `${stdout}\n${stderr}`;
      const line = text.split("\n").find((candidate) => candidate.includes(serverName));
      if (line === undefined) return { ok: false, detail: "cursor-agent mcp list does not list it" };
      return { ok: !/error|fail|disconnected/i.test(line), detail: line.trim() };
    },
  }),
});
