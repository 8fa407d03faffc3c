import type { McpEndpointGrant } from "@switchyard/sdk";
import type { McpServerConfig } from "./cursor-wire.js";

/**
 * The seed's Cursor injection for a grant: one HTTP server under the grant's key with the
 * session's token in an `Authorization` header, passed on `Agent.create`, `Agent.resume` and
 * every `send` (on 1.0.39+ send-level servers replace only the create-time inline set; ambient
 * servers from `settingSources` stay).
 */
export function cursorMcpServers(grant: McpEndpointGrant | null): Record<string, McpServerConfig> | null {
  if (grant === null) return null;
  return { [grant.serverName]: { type: "http", url: grant.url, headers: { Authorization: `Bearer ${grant.token}` } } };
}

/** What diagnostics may say about a session's MCP servers: names, transports and header names, never values. */
export function redactedMcpServers(
  servers: Record<string, McpServerConfig> | null,
): Record<string, { readonly type: string; readonly headers: readonly string[] }> | null {
  if (servers === null) return null;
  const described: Record<string, { readonly type: string; readonly headers: readonly string[] }> = {};
  for (const [name, server] of Object.entries(servers)) {
    const headers = "headers" in server && server.headers !== undefined ? Object.keys(server.headers) : [];
    described[name] = { type: server.type ?? ("url" in server ? "http" : "stdio"), headers };
  }
  return described;
}
