import type { TableHost, TableSql } from "../table-sql.js";

/** A browser session of the web UI, or a one-time sign-in code. */
export type WebSessionKind = "session" | "code";

/** A row of `web_sessions` (hashes of its secrets only). Times are epoch milliseconds. */
export interface WebSessionRow {
  id: string;
  kind: WebSessionKind;
  credential_id: string;
  expires_at: number;
  ended_at: number | null;
  page_secret_hash: string | null;
  origin: string | null;
}

/** A new session or code, as {@link WebSessionsTable.insert} stores it. */
export interface NewWebSession {
  readonly id: string;
  readonly secretHash: string;
  readonly kind: WebSessionKind;
  readonly credentialId: string;
  readonly createdAt: number;
  readonly expiresAt: number;
  /** The page secret's hash and the origin the session answers at; null for a code. */
  readonly page: { readonly secretHash: string; readonly origin: string } | null;
}

const INSERT_SESSION =
  "INSERT INTO web_sessions (id, secret_hash, kind, credential_id, created_at, expires_at, last_used_at, ended_at, page_secret_hash, origin) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)";

function sessionValues(session: NewWebSession): unknown[] {
  return [
    session.id,
    session.secretHash,
    session.kind,
    session.credentialId,
    session.createdAt,
    session.expiresAt,
    session.createdAt,
    session.page?.secretHash ?? null,
    session.page?.origin ?? null,
  ];
}

/** The web UI's browser sessions and sign-in codes (`web_sessions`). */
export class WebSessionsTable {
  private readonly sql: TableSql;

  constructor(host: TableHost) {
    this.sql = host.tableSql;
  }

  async insert(session: NewWebSession): Promise<void> {
    await this.sql.run(INSERT_SESSION, sessionValues(session));
  }

  /** {@link insert}, written before it returns, for a caller that cannot await (see `TableSql.runNow`). */
  insertNow(session: NewWebSession): void {
    this.sql.runNow(INSERT_SESSION, sessionValues(session));
  }

  /** The session or code of that kind whose secret has this hash. */
  async bySecretHash(kind: WebSessionKind, secretHash: string): Promise<WebSessionRow | null> {
    const sql =
      kind === "code"
        ? "SELECT * FROM web_sessions WHERE secret_hash = ? AND kind = 'code'"
        : "SELECT * FROM web_sessions WHERE secret_hash = ? AND kind = 'session'";
    return (await this.sql.get<WebSessionRow>(sql, [secretHash])) ?? null;
  }

  /** Spends a code (in one statement, so two racing uses get one spend between them); false when spent already. */
  async spendCode(id: string, at: number): Promise<boolean> {
    return (
      (
        await this.sql.run("UPDATE web_sessions SET ended_at = ?, last_used_at = ? WHERE id = ? AND ended_at IS NULL", [
          at,
          at,
          id,
        ])
      ).changes > 0
    );
  }

  async markUsed(id: string, at: number): Promise<void> {
    await this.sql.run("UPDATE web_sessions SET last_used_at = ? WHERE id = ?", [at, id]);
  }

  /** Ends a session (sign-out); false when it had ended already. */
  async end(id: string, at: number): Promise<boolean> {
    return (
      (await this.sql.run("UPDATE web_sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL", [at, id])).changes >
      0
    );
  }
}
