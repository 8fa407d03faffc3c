import type { TableHost, TableSql } from "../table-sql.js";

/** A row of `reach_grants`: what another environment may do here, found by its secret's SHA-256. */
export interface ReachGrantRow {
  id: string;
  secret_hash: string;
  for_name: string;
  /** The grant's scope (projects, verbs, ceiling) as JSON. */
  data: string;
  created_at: number;
  expires_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

const INSERT_GRANT =
  "INSERT INTO reach_grants (id, secret_hash, for_name, data, created_at, expires_at, last_used_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, NULL, NULL)";

function grantValues(grant: Omit<ReachGrantRow, "last_used_at" | "revoked_at">): unknown[] {
  return [grant.id, grant.secret_hash, grant.for_name, grant.data, grant.created_at, grant.expires_at];
}

/** The grants table (migration 7). Never sees a secret, only its hash. */
export class ReachGrantsTable {
  private readonly sql: TableSql;

  constructor(host: TableHost) {
    this.sql = host.tableSql;
  }

  /** Stores a new grant, unused and unrevoked. */
  async insert(grant: Omit<ReachGrantRow, "last_used_at" | "revoked_at">): Promise<void> {
    await this.sql.run(INSERT_GRANT, grantValues(grant));
  }

  /** {@link insert}, written before it returns, for a caller that cannot await (see `TableSql.runNow`). */
  insertNow(grant: Omit<ReachGrantRow, "last_used_at" | "revoked_at">): void {
    this.sql.runNow(INSERT_GRANT, grantValues(grant));
  }

  /** One grant by id, or null. */
  async byId(id: string): Promise<ReachGrantRow | null> {
    return (await this.sql.get<ReachGrantRow>("SELECT * FROM reach_grants WHERE id = ?", [id])) ?? null;
  }

  /** The grant a secret's hash stands for, or null. */
  async bySecretHash(secretHash: string): Promise<ReachGrantRow | null> {
    return (
      (await this.sql.get<ReachGrantRow>("SELECT * FROM reach_grants WHERE secret_hash = ?", [secretHash])) ?? null
    );
  }

  /** Every grant, newest first (grants made in the same millisecond: by insertion on SQLite, by id on PostgreSQL). */
  async newestFirst(): Promise<ReachGrantRow[]> {
    const tie = this.sql.dialect === "postgresql" ? "id DESC" : "rowid DESC";
    return this.sql.all<ReachGrantRow>(`SELECT * FROM reach_grants ORDER BY created_at DESC, ${tie}`);
  }

  /** Revokes a grant at `at`; false when it was revoked already (or is unknown). */
  async revoke(id: string, at: number): Promise<boolean> {
    return (
      (await this.sql.run("UPDATE reach_grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", [at, id]))
        .changes > 0
    );
  }

  /** Records that a grant was just used. */
  async markUsed(id: string, at: number): Promise<void> {
    await this.sql.run("UPDATE reach_grants SET last_used_at = ? WHERE id = ?", [at, id]);
  }
}
