import type { EventStore } from "../ports.js";

/** A row of `reach_links`: another environment this one may call (its secret lives in a file, never here). */
export interface ReachLinkRow {
  id: string;
  name: string;
  /** The link's URL, its secret's SHA-256 and pinned fingerprint, as JSON. */
  data: string;
  created_at: number;
}

/** The links table (migration 7). */
export class ReachLinksTable {
  constructor(private readonly store: EventStore) {}

  /** Stores a link; a name already taken throws SQLite's `SQLITE_CONSTRAINT_UNIQUE`. */
  insert(link: ReachLinkRow): void {
    this.store
      .statement("INSERT INTO reach_links (id, name, data, created_at) VALUES (?, ?, ?, ?)")
      .run(link.id, link.name, link.data, link.created_at);
  }

  /** One link by name, or null. */
  async byName(name: string): Promise<ReachLinkRow | null> {
    return (
      (this.store.statement("SELECT * FROM reach_links WHERE name = ?").get(name) as ReachLinkRow | undefined) ?? null
    );
  }

  /** Every link, oldest first. */
  async oldestFirst(): Promise<ReachLinkRow[]> {
    return this.store.statement("SELECT * FROM reach_links ORDER BY created_at, rowid").all() as ReachLinkRow[];
  }

  /** Removes a link by id. */
  remove(id: string): void {
    this.store.statement("DELETE FROM reach_links WHERE id = ?").run(id);
  }
}
