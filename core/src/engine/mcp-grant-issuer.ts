import type { McpEndpointGrant } from "../spec/index.js";
import { token } from "../util/di-token.js";

/** What a provider-session credential is scoped to. */
export interface ProviderSessionScope {
  readonly threadId: string;
  readonly projectId: string;
  readonly providerSessionId: string;
  readonly providerInstanceId: string;
}

/**
 * The MCP credentials of provider sessions, as the engine sees them (the credential registry
 * implements it; the composition root wires it, so it exists before any session opens).
 */
export interface McpGrantIssuer {
  /**
   * Issues a credential for a provider session and returns its grant; null while no MCP
   * endpoint listens (a host without a server gives its sessions no Switchyard tools).
   */
  issue(scope: ProviderSessionScope): Promise<McpEndpointGrant | null>;
  /** Revokes every credential of a provider session (it closed). */
  revokeProviderSession(providerSessionId: string): Promise<void>;
  /** Provider work counts as activity: keeps the session's credentials from idle expiry. */
  touchProviderSession(providerSessionId: string): Promise<void>;
  /**
   * After a rotation: every other live credential of the session stays valid for `overlapMs`
   * (a call already on its way still succeeds), then expires.
   */
  retireOtherCredentials(providerSessionId: string, currentToken: string, overlapMs: number): Promise<void>;
  /**
   * Revokes the credentials of every provider session that is not open (boot, after the
   * sessions of a dead process were closed; shutdown, after closing them). Returns how many.
   * Synchronous: inside a command's transaction (boot), or in the store's turn (`writeAsync`).
   */
  revokeCredentialsOfClosedSessions(): Promise<number>;
}

/** DI token: `McpSessionRegistry`, as the engine issues and revokes session credentials through it. */
export const McpGrantIssuerToken = token<McpGrantIssuer>("McpGrantIssuer");
