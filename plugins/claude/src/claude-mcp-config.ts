import { SwitchyardError, type McpEndpointGrant } from "@switchyard/sdk";
import type { McpHttpServerConfig } from "./claude-wire.js";

/** Headroom over the grant's tool timeout, so the server's own pending answer arrives first. */
const TOOL_TIMEOUT_HEADROOM_MS = 30_000;

/** The MCP part of a session's query options. */
export interface ClaudeMcpOptions {
  readonly mcpServers: Record<string, McpHttpServerConfig>;
  /** Auto-approves every Switchyard tool (`mcp__<server key>__*`), as the seed says. */
  readonly allowedTools: string[];
  /**
   * Always `initialize`: the servers, with the bearer header, travel over stdin in the
   * initialize request. The SDK's default (`argv`) would put the token on the command line.
   */
  readonly mcpServersDelivery: "initialize";
}

/**
 * The seed's Claude injection for a grant: one HTTP server under the grant's key with the
 * session's token in an `Authorization` header, and `mcp__<key>__*` in `allowedTools`.
 *
 * `alwaysLoad` keeps the Switchyard tools in the model's tool list even when Claude Code's tool
 * search is on (its default since 0.3): otherwise they hide behind `ToolSearch`, and
 * `delegate_task`, `task_status`, `orchestrator_capabilities` and the blocking waits would need
 * a search step first (Codex's direct entry solves the same problem its own way). `timeout`
 * lifts Claude Code's per-call limit above the server's longest blocking wait.
 */
export function claudeMcpOptions(grant: McpEndpointGrant | null): ClaudeMcpOptions | null {
  if (grant === null) return null;
  if (!/^[A-Za-z0-9_-]+$/.test(grant.serverName)) {
    throw new SwitchyardError(
      "invalid_input",
      `MCP server name "${grant.serverName}" cannot be a Claude Code server key; use letters, digits, "-" and "_".`,
      {
        serverName: grant.serverName,
      },
    );
  }
  return {
    mcpServers: {
      [grant.serverName]: {
        type: "http",
        url: grant.url,
        headers: { Authorization: `Bearer ${grant.token}` },
        alwaysLoad: true,
        timeout: grant.toolTimeoutMs + TOOL_TIMEOUT_HEADROOM_MS,
      },
    },
    allowedTools: [`mcp__${grant.serverName}__*`],
    mcpServersDelivery: "initialize",
  };
}
