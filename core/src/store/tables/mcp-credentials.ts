import type { SqlDialect, TableHost, TableSql } from "../table-sql.js";

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

const INSERT_CREDENTIAL =
  "INSERT INTO mcp_credentials (id, token_hash, kind, provider_session_id, thread_id, data, expires_at, last_used_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)";

const REVOKE_CREDENTIAL = "UPDATE mcp_credentials SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL";

function credentialValues(credential: NewCredential): unknown[] {
  return [
    credential.id,
    credential.tokenHash,
    credential.kind,
    credential.providerSessionId,
    credential.threadId,
    credential.data,
    credential.expiresAt,
    credential.issuedAt,
  ];
}

/**
 * The MCP bearer credentials (`mcp_credentials`): each query the credential registry asks, by
 * name. Writes that can change several rows say how many they changed, so the registry knows
 * when its cache of resolved credentials is stale.
 */
export class McpCredentialsTable {
  private readonly sql: TableSql;

  constructor(host: TableHost) {
    this.sql = host.tableSql;
  }

  async insert(credential: NewCredential): Promise<void> {
    await this.sql.run(INSERT_CREDENTIAL, credentialValues(credential));
  }

  /** {@link insert}, written before it returns, for a caller that cannot await (see `TableSql.runNow`). */
  insertNow(credential: NewCredential): void {
    this.sql.runNow(INSERT_CREDENTIAL, credentialValues(credential));
  }

  async byTokenHash(tokenHash: string): Promise<CredentialRow | null> {
    return (
      (await this.sql.get<CredentialRow>("SELECT * FROM mcp_credentials WHERE token_hash = ?", [tokenHash])) ?? null
    );
  }

  async byId(id: string): Promise<CredentialRow | null> {
    return (await this.sql.get<CredentialRow>("SELECT * FROM mcp_credentials WHERE id = ?", [id])) ?? null;
  }

  /** Whether a credential is revoked and when it expires, without reading its data. */
  async standingOf(id: string): Promise<Pick<CredentialRow, "revoked_at" | "expires_at"> | null> {
    return (
      (await this.sql.get<Pick<CredentialRow, "revoked_at" | "expires_at">>(
        "SELECT revoked_at, expires_at FROM mcp_credentials WHERE id = ?",
        [id],
      )) ?? null
    );
  }

  async markUsed(id: string, at: number): Promise<void> {
    await this.sql.run("UPDATE mcp_credentials SET last_used_at = ? WHERE id = ?", [at, id]);
  }

  /** Marks a provider session's live credentials used at `at`, those last used at `staleSince` or before; how many. */
  async markSessionUsed(providerSessionId: string, at: number, staleSince: number): Promise<number> {
    return (
      await this.sql.run(
        "UPDATE mcp_credentials SET last_used_at = ? WHERE provider_session_id = ? AND revoked_at IS NULL AND last_used_at <= ?",
        [at, providerSessionId, staleSince],
      )
    ).changes;
  }

  /** Brings the expiry of a session's live credentials, but the one of `keptTokenHash`, to `expiresBy` at the latest; how many. */
  async expireSessionOthers(providerSessionId: string, keptTokenHash: string, expiresBy: number): Promise<number> {
    return (
      await this.sql.run(
        `UPDATE mcp_credentials SET expires_at = ${smaller(this.sql.dialect, "expires_at", "?")} WHERE provider_session_id = ? AND token_hash != ? AND revoked_at IS NULL`,
        [expiresBy, providerSessionId, keptTokenHash],
      )
    ).changes;
  }

  /** Revokes the provider-session credentials whose session is neither open nor opening; how many. */
  async revokeOfClosedSessions(at: number): Promise<number> {
    return (
      await this.sql.run(
        `UPDATE mcp_credentials SET revoked_at = ?
         WHERE kind = 'provider_session' AND revoked_at IS NULL
           AND (provider_session_id IS NULL OR provider_session_id NOT IN (SELECT id FROM provider_sessions WHERE status IN ('opening', 'open')))`,
        [at],
      )
    ).changes;
  }

  /** Revokes every live credential of a provider session; how many. */
  async revokeOfSession(providerSessionId: string, at: number): Promise<number> {
    return (
      await this.sql.run(
        "UPDATE mcp_credentials SET revoked_at = ? WHERE provider_session_id = ? AND revoked_at IS NULL",
        [at, providerSessionId],
      )
    ).changes;
  }

  /** Revokes one credential; false when it was unknown or revoked already. */
  async revoke(id: string, at: number): Promise<boolean> {
    return (await this.sql.run(REVOKE_CREDENTIAL, [at, id])).changes > 0;
  }

  /** {@link revoke}, written before it returns, for a caller that cannot await (see `TableSql.runNow`). */
  revokeNow(id: string, at: number): boolean {
    return this.sql.runNow(REVOKE_CREDENTIAL, [at, id]).changes > 0;
  }

  /**
   * Credentials newest first: client ones, or every kind. SQLite's insertion order is its
   * `rowid`; PostgreSQL's table has none, so there they come by id (a stable order, not age).
   */
  async list(options: { includeProviderSessions: boolean }): Promise<CredentialRow[]> {
    const newestFirst = this.sql.dialect === "postgresql" ? "ORDER BY id DESC" : "ORDER BY rowid DESC";
    const sql = options.includeProviderSessions
      ? `SELECT * FROM mcp_credentials ${newestFirst}`
      : `SELECT * FROM mcp_credentials WHERE kind = 'client' ${newestFirst}`;
    return this.sql.all<CredentialRow>(sql);
  }
}

/** The smaller of two values: SQLite's two-argument `MIN`, PostgreSQL's `LEAST`. */
function smaller(dialect: SqlDialect, a: string, b: string): string {
  return dialect === "postgresql" ? `LEAST(${a}, ${b})` : `MIN(${a}, ${b})`;
}
