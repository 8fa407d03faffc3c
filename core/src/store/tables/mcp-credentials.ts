import type { EventStore } from "../ports.js";

/** Who a credential stands for: an agent's provider session, an outside client, or a linked environment. */
export type CredentialKind = "provider_session" | "client" | "environment";

/** A row of `mcp_credentials`: a bearer token's hash and scope (never the token). Times are epoch milliseconds. */
export interface CredentialRow {
  id: string;
  token_hash: string;
  kind: CredentialKind;
  provider_session_id: string | null;
  thread_id: string | null;
  /** The credential's JSON data (capabilities, projects, ceiling…), as the registry wrote it. */
  data: string;
  expires_at: number;
  last_used_at: number;
  revoked_at: number | null;
}

/** A new credential, as {@link McpCredentialsTable.insert} stores it (neither used nor revoked yet). */
export interface NewCredential {
  readonly id: string;
  readonly tokenHash: string;
  readonly kind: CredentialKind;
  readonly providerSessionId: string | null;
  readonly threadId: string | null;
  readonly data: string;
  readonly expiresAt: number;
  readonly issuedAt: number;
}

/**
 * The MCP bearer credentials (`mcp_credentials`): each query the credential registry asks, by
 * name. Writes that can change several rows say how many they changed, so the registry knows
 * when its cache of resolved credentials is stale.
 */
export class McpCredentialsTable {
  constructor(private readonly store: EventStore) {}

  insert(credential: NewCredential): void {
    this.store
      .statement(
        "INSERT INTO mcp_credentials (id, token_hash, kind, provider_session_id, thread_id, data, expires_at, last_used_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)",
      )
      .run(
        credential.id,
        credential.tokenHash,
        credential.kind,
        credential.providerSessionId,
        credential.threadId,
        credential.data,
        credential.expiresAt,
        credential.issuedAt,
      );
  }

  async byTokenHash(tokenHash: string): Promise<CredentialRow | null> {
    return (
      (this.store.statement("SELECT * FROM mcp_credentials WHERE token_hash = ?").get(tokenHash) as
        CredentialRow | undefined) ?? null
    );
  }

  async byId(id: string): Promise<CredentialRow | null> {
    return (
      (this.store.statement("SELECT * FROM mcp_credentials WHERE id = ?").get(id) as CredentialRow | undefined) ?? null
    );
  }

  /** Whether a credential is revoked and when it expires, without reading its data. */
  async standingOf(id: string): Promise<Pick<CredentialRow, "revoked_at" | "expires_at"> | null> {
    return (
      (this.store.statement("SELECT revoked_at, expires_at FROM mcp_credentials WHERE id = ?").get(id) as
        Pick<CredentialRow, "revoked_at" | "expires_at"> | undefined) ?? null
    );
  }

  markUsed(id: string, at: number): void {
    this.store.statement("UPDATE mcp_credentials SET last_used_at = ? WHERE id = ?").run(at, id);
  }

  /** Marks a provider session's live credentials used at `at`, those last used at `staleSince` or before; how many. */
  markSessionUsed(providerSessionId: string, at: number, staleSince: number): number {
    return this.store
      .statement(
        "UPDATE mcp_credentials SET last_used_at = ? WHERE provider_session_id = ? AND revoked_at IS NULL AND last_used_at <= ?",
      )
      .run(at, providerSessionId, staleSince).changes;
  }

  /** Brings the expiry of a session's live credentials, but the one of `keptTokenHash`, to `expiresBy` at the latest; how many. */
  expireSessionOthers(providerSessionId: string, keptTokenHash: string, expiresBy: number): number {
    return this.store
      .statement(
        "UPDATE mcp_credentials SET expires_at = MIN(expires_at, ?) WHERE provider_session_id = ? AND token_hash != ? AND revoked_at IS NULL",
      )
      .run(expiresBy, providerSessionId, keptTokenHash).changes;
  }

  /** Revokes the provider-session credentials whose session is neither open nor opening; how many. */
  revokeOfClosedSessions(at: number): number {
    return this.store
      .statement(
        `UPDATE mcp_credentials SET revoked_at = ?
         WHERE kind = 'provider_session' AND revoked_at IS NULL
           AND (provider_session_id IS NULL OR provider_session_id NOT IN (SELECT id FROM provider_sessions WHERE status IN ('opening', 'open')))`,
      )
      .run(at).changes;
  }

  /** Revokes every live credential of a provider session; how many. */
  revokeOfSession(providerSessionId: string, at: number): number {
    return this.store
      .statement("UPDATE mcp_credentials SET revoked_at = ? WHERE provider_session_id = ? AND revoked_at IS NULL")
      .run(at, providerSessionId).changes;
  }

  /** Revokes one credential; false when it was unknown or revoked already. */
  revoke(id: string, at: number): boolean {
    return (
      this.store.statement("UPDATE mcp_credentials SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL").run(at, id)
        .changes > 0
    );
  }

  /** Credentials newest first: client ones, or every kind. */
  async list(options: { includeProviderSessions: boolean }): Promise<CredentialRow[]> {
    const sql = options.includeProviderSessions
      ? "SELECT * FROM mcp_credentials ORDER BY rowid DESC"
      : "SELECT * FROM mcp_credentials WHERE kind = 'client' ORDER BY rowid DESC";
    return this.store.statement(sql).all() as CredentialRow[];
  }
}
