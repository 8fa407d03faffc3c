import { SwitchyardError, type McpEndpointGrant } from "@switchyard/sdk";
import { MCP_TOKEN_ENV_VAR } from "./codex-environment.js";

/** Seconds Codex waits for the Switchyard server to start (`startup_timeout_sec`, default 10). */
const STARTUP_TIMEOUT_SEC = 20;

/** Headroom over the grant's tool timeout, so the server's own pending answer arrives first. */
const TOOL_TIMEOUT_HEADROOM_SEC = 30;

/** One `[mcp_servers.<name>]` table, as Codex 0.171 reads it (streamable HTTP). */
export type CodexMcpServerConfig = {
  readonly url: string;
  /** The env var holding the bearer token (never the token). */
  readonly bearer_token_env_var: string;
  readonly startup_timeout_sec: number;
  readonly tool_timeout_sec: number;
  /** `approve`: calls to the Switchyard tools never wait for an approval (`auto|prompt|writes|approve`). */
  readonly default_tools_approval_mode: "approve";
  readonly enabled_tools?: readonly string[];
  readonly disabled_tools?: readonly string[];
  /** Model-facing surfaces the tools are kept off (`code_mode|deferred|direct`). */
  readonly omit_tools_from?: readonly ("code_mode" | "deferred" | "direct")[];
};

/** The name of the entry that carries the direct tools. */
export function directServerName(serverName: string): string {
  return `${serverName}-direct`;
}

/** Maps a server name Codex reports (`switchyard-direct`) back to the grant's (`switchyard`). */
export function canonicalServerName(server: string, grant: McpEndpointGrant | null): string {
  return grant !== null && server === directServerName(grant.serverName) ? grant.serverName : server;
}

/**
 * The `mcp_servers` entries for a grant: `<serverName>` with every tool except the grant's
 * direct ones, and `<serverName>-direct` with only those, so Codex offers them as direct tool
 * calls: never deferred behind `tool_search` (what 0.171 does to MCP tools for known model
 * slugs) and never run inside Code Mode (where a nested blocking call would let the model keep
 * working while the wait runs). Both use the same URL and token env var.
 */
export function codexMcpServers(grant: McpEndpointGrant): Record<string, CodexMcpServerConfig> {
  if (!/^[A-Za-z0-9_-]+$/.test(grant.serverName)) {
    throw new SwitchyardError(
      "invalid_input",
      `MCP server name "${grant.serverName}" cannot be a Codex config key; use letters, digits, "-" and "_".`,
      {
        serverName: grant.serverName,
      },
    );
  }
  const common = {
    url: grant.url,
    bearer_token_env_var: MCP_TOKEN_ENV_VAR,
    startup_timeout_sec: STARTUP_TIMEOUT_SEC,
    tool_timeout_sec: Math.ceil(grant.toolTimeoutMs / 1000) + TOOL_TIMEOUT_HEADROOM_SEC,
    default_tools_approval_mode: "approve" as const,
  };
  const direct = grant.directToolNames ?? [];
  return {
    [grant.serverName]: { ...common, ...(direct.length > 0 ? { disabled_tools: direct } : {}) },
    ...(direct.length > 0
      ? {
          [directServerName(grant.serverName)]: {
            ...common,
            enabled_tools: direct,
            omit_tools_from: ["code_mode", "deferred"] as const,
          },
        }
      : {}),
  };
}

/**
 * The per-thread `config` overrides for `thread/start|resume|fork`: one dotted key per server
 * (`mcp_servers.switchyard`), so the user's own `[mcp_servers]` from config.toml stay.
 */
export function codexThreadMcpConfig(grant: McpEndpointGrant | null): Record<string, CodexMcpServerConfig> {
  if (grant === null) return {};
  return Object.fromEntries(
    Object.entries(codexMcpServers(grant)).map(([name, server]) => [`mcp_servers.${name}`, server]),
  );
}
