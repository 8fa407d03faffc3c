import { toolRuleVerdict, type ExtraMcpServer, type ToolRules } from "@switchyard/sdk";
import type { McpServerConfig } from "./claude-wire.js";
import { COMMAND_ASK_SETTINGS } from "./claude-permissions.js";

/** A profile's tool rules as Claude Code's own options. */
export interface ClaudeToolRuleOptions {
  /** Removed from the model's context and refused: the profile's deny rules (`Bash`, `Bash(rm:*)`). */
  readonly disallowedTools: string[];
  /** Run without a permission prompt: the profile's allow rules. */
  readonly allowedTools: string[];
  /** With `allowOnly`, the only built-in tools Claude offers (MCP tools are not built-in and stay); else null. */
  readonly tools: string[] | null;
  /** Claude's flag settings: every shell command asks (the adapter's own rule), and the profile's ask rules. */
  readonly askSettings: { permissions: { ask: string[] } };
}

/**
 * Maps a profile's rules onto Claude Code's (`disallowedTools`, `allowedTools`, `tools`), which
 * take the same names and `Tool(pattern)` forms a profile is written in. Ask rules join the
 * adapter's own ask rule: Claude honours ask rules in every mode, and in full access the
 * adapter passes a prompt a profile's ask rule names to the host instead of allowing it.
 */
export function claudeToolRuleOptions(rules: ToolRules | null | undefined): ClaudeToolRuleOptions {
  const askSettings = { permissions: { ask: [...COMMAND_ASK_SETTINGS.permissions.ask, ...(rules?.ask ?? [])] } };
  if (rules == null) return { disallowedTools: [], allowedTools: [], tools: null, askSettings };
  // `tools` takes tool names: `Bash(git status:*)` allowed means Bash is offered, the pattern pre-approved.
  const offered = [...new Set([...rules.allow, ...rules.ask].map((rule) => rule.replace(/\(.*\)$/, "").trim()))];
  return {
    disallowedTools: [...rules.deny],
    allowedTools: [...rules.allow],
    tools: rules.allowOnly ? offered : null,
    askSettings,
  };
}

/** True when a profile's ask rule names this call (matched on its command or path, when it has one). */
export function askedByProfile(
  rules: ToolRules | null | undefined,
  toolName: string,
  input: Record<string, unknown>,
): boolean {
  const argument = [input["command"], input["file_path"], input["path"], input["url"]].find(
    (value): value is string => typeof value === "string",
  );
  return toolRuleVerdict(rules, toolName, argument ?? null) === "ask";
}

/**
 * A profile's extra MCP servers as Claude Code server entries (delivered over `initialize` with
 * Switchyard's, so headers and env stay off the command line). Their tools are not pre-approved:
 * the profile's allow rules or the runtime mode decide.
 */
export function claudeExtraMcpServers(
  servers: Readonly<Record<string, ExtraMcpServer>> | undefined,
): Record<string, McpServerConfig> {
  const entries: Record<string, McpServerConfig> = {};
  for (const [name, server] of Object.entries(servers ?? {}))
    entries[name] =
      server.type === "http"
        ? { type: "http", url: server.url, ...(server.headers ? { headers: { ...server.headers } } : {}) }
        : {
            type: "stdio",
            command: server.command,
            ...(server.args ? { args: [...server.args] } : {}),
            ...(server.env ? { env: { ...server.env } } : {}),
          };
  return entries;
}
