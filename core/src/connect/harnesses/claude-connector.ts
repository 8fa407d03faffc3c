import { join } from "node:path";
import { userHome, type ConnectionTarget } from "../harness-connector.js";
import { jsonServersConnector, lineNaming, shellQuote } from "./json-servers-connector.js";
import { allowListRule } from "./allow-list-rule.js";

/** Claude Code's user config: `$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`. */
function claudeUserConfig(target: ConnectionTarget): string {
  const dir = target.env.CLAUDE_CONFIG_DIR;
  return dir !== undefined && dir !== "" ? join(dir, ".claude.json") : join(userHome(target.env), ".claude.json");
}

/**
 * Where Claude Code reads permission rules: the user's settings (`$CLAUDE_CONFIG_DIR/settings.json`,
 * else `~/.claude/settings.json`), or the project's local settings (`.claude/settings.local.json`,
 * which is not committed: approving tools is the person's choice, not the repository's).
 */
function claudeSettingsFile(target: ConnectionTarget): string {
  if (target.scope === "project") return join(target.projectDir, ".claude", "settings.local.json");
  const dir = target.env.CLAUDE_CONFIG_DIR;
  return join(dir !== undefined && dir !== "" ? dir : join(userHome(target.env), ".claude"), "settings.json");
}

/**
 * Claude Code: an HTTP server in `.mcp.json` (project) or the user config. The header comes
 * from `headersHelper`, a command Claude Code runs for each connection, which prints the
 * headers file only the user can read, so the token is never in the config (a project's
 * `.mcp.json` is usually committed). `alwaysLoad` keeps the tools out of tool search, and
 * `timeout` lifts the per-call limit above the longest blocking wait (see plugins/claude).
 */
export const claudeConnector = jsonServersConnector({
  id: "claude",
  displayName: "Claude Code",
  tokenDelivery: "helper",
  serversPath: ["mcpServers"],
  configFile: (target) =>
    target.scope === "project" ? join(target.projectDir, ".mcp.json") : claudeUserConfig(target),
  secretContent: (token) => `${JSON.stringify({ Authorization: `Bearer ${token}` })}\n`,
  tokenFromSecret: (text) => {
    const header = (JSON.parse(text) as { Authorization?: string }).Authorization ?? "";
    return header.startsWith("Bearer ") ? header.slice("Bearer ".length) : null;
  },
  secretSuffix: ".headers.json",
  entry: (spec) => ({
    type: "http",
    url: spec.url,
    headersHelper: `cat ${shellQuote(spec.secretFile)}`,
    alwaysLoad: true,
    timeout: spec.toolTimeoutMs,
  }),
  // Headless `claude -p` refuses an MCP tool no rule allows ("you haven't granted it yet"); the
  // plugin's sessions pass `allowedTools: ["mcp__<key>__*"]`, a connection writes the same rule.
  toolApproval: allowListRule({
    file: claudeSettingsFile,
    path: ["permissions", "allow"],
    rule: (serverName) => `mcp__${serverName}`,
  }),
  selfCheck: () => ({
    command: "claude",
    args: ["mcp", "list"],
    interpret({ stdout, stderr }, serverName) {
      const line = lineNaming(`${stdout}\n${stderr}`, serverName);
      if (line === null) return { ok: false, detail: "claude mcp list does not list it" };
      return { ok: /connected/i.test(line) && !/failed|not connected|needs/i.test(line), detail: line };
    },
  }),
});
