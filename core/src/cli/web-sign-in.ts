import type { SwitchyardHost } from "../host/switchyard-host.js";
import {
  McpSessionRegistry,
  type CredentialCapability,
  type ModeCeiling,
  type ProjectScope,
} from "../services/credentials/mcp-session-registry.js";
import { WebSessions } from "../services/credentials/web-sessions.js";

/** A one-time sign-in link for the web UI, and the token the browser will act as. */
export interface WebSignIn {
  readonly link: string;
  readonly tokenId: string;
  readonly codeExpiresAt: string;
  readonly tokenExpiresAt: string;
}

/**
 * Issues a token for a browser and a one-time code for it, and builds the sign-in link: the code
 * rides in the URL's fragment, which the browser never sends to a server; the token never
 * leaves the database. The code is spent by the first sign-in and expires after 10 minutes.
 */
export function issueWebSignIn(
  host: SwitchyardHost,
  options: {
    baseUrl: string;
    ttlMs: number;
    capabilities: readonly CredentialCapability[];
    projects: ProjectScope;
    ceiling: ModeCeiling;
    label?: string;
  },
): WebSignIn {
  const issued = host.container.resolve(McpSessionRegistry).issueClientToken({
    ttlMs: options.ttlMs,
    capabilities: options.capabilities,
    projects: options.projects,
    ceiling: options.ceiling,
    label: options.label ?? "web UI (switchyard ui)",
  });
  const { code, expiresAtMs } = host.container.resolve(WebSessions).issueCode(issued.id);
  return {
    link: `${options.baseUrl}/#code=${code}`,
    tokenId: issued.id,
    codeExpiresAt: new Date(expiresAtMs).toISOString(),
    tokenExpiresAt: issued.expiresAt,
  };
}
