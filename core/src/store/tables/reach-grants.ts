import type { EventStore } from "../ports.js";

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

/** The grants table (migration 7). Never sees a secret, only its hash. */
export class ReachGrantsTable {
  constructor(private readonly store: EventStore) {}

  /** Stores a new grant, unused and unrevoked. */
  insert(grant: Omit<ReachGrantRow, "last_used_at" | "revoked_at">): void {
    this.store
      .statement(
        "INSERT INTO reach_grants (id, secret_hash, for_name, data, created_at, expires_at, last_used_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, NULL, NULL)",
      )
      .run(grant.id, grant.secret_hash, grant.for_name, grant.data, grant.created_at, grant.expires_at);
  }

  /** One grant by id, or null. */
  async byId(id: string): Promise<ReachGrantRow | null> {
    return (
      (this.store.statement("SELECT * FROM reach_grants WHERE id = ?").get(id) as ReachGrantRow | undefined) ?? null
    );
  }

  /** The grant a secret's hash stands for, or null. */
  async bySecretHash(secretHash: string): Promise<ReachGrantRow | null> {
    return (
      (this.store.statement("SELECT * FROM reach_grants WHERE secret_hash = ?").get(secretHash) as
        ReachGrantRow | undefined) ?? null
    );
  }

  /** Every grant, newest first. */
  async newestFirst(): Promise<ReachGrantRow[]> {
    return this.store
      .statement("SELECT * FROM reach_grants ORDER BY created_at DESC, rowid DESC")
      .all() as ReachGrantRow[];
  }

  /** Revokes a grant at `at`; false when it was revoked already (or is unknown). */
  revoke(id: string, at: number): boolean {
    return (
      this.store.statement("UPDATE reach_grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL").run(at, id)
        .changes > 0
    );
  }

  /** Records that a grant was just used. */
  markUsed(id: string, at: number): void {
    this.store.statement("UPDATE reach_grants SET last_used_at = ? WHERE id = ?").run(at, id);
  }
}
