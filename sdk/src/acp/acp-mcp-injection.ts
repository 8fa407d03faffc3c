import type * as acp from "@agentclientprotocol/sdk/unstable";
import { SwitchyardError, type McpEndpointGrant } from "@switchyard/spec";

/** Which transport carried the Switchyard MCP endpoint to the agent. @public */
export type AcpMcpInjection = "http" | "stdio-bridge" | "none";

/**
 * The `mcpServers` entries for `session/new|load|resume|fork`.
 * - With `mcpCapabilities.http` (and `prefer` not `stdio-bridge`): one `http` entry with an
 *   `Authorization: Bearer` header.
 * - Otherwise the stdio bridge the host offers: command plus env; the token is only in env.
 * Never log the result: it carries the credential.
 * @public
 */
export function buildAcpMcpServers(
  grant: McpEndpointGrant | null,
  agentMcp: acp.McpCapabilities | undefined,
  prefer: "auto" | "stdio-bridge" = "auto",
): { readonly servers: acp.McpServer[]; readonly injection: AcpMcpInjection } {
  if (grant === null) return { servers: [], injection: "none" };
  if (prefer === "auto" && agentMcp?.http === true) {
    return {
      servers: [
        {
          type: "http",
          name: grant.serverName,
          url: grant.url,
          headers: [{ name: "Authorization", value: `Bearer ${grant.token}` }],
        },
      ],
      injection: "http",
    };
  }
  const bridge = grant.stdioBridge;
  // The credential must never reach argv (visible to every user through ps).
  if (grant.token.length > 0 && bridge.args.some((arg) => arg.includes(grant.token))) {
    throw new SwitchyardError(
      "internal",
      "The MCP stdio bridge carries the session token in its arguments; the host must pass it in the environment.",
      { serverName: grant.serverName },
    );
  }
  return {
    servers: [
      {
        name: grant.serverName,
        command: bridge.command,
        args: [...bridge.args],
        env: Object.entries(bridge.env).map(([name, value]) => ({ name, value })),
      },
    ],
    injection: "stdio-bridge",
  };
}
