import type { TableHost, TableSql } from "../table-sql.js";

/** A row of `reach_links`: another environment this one may call (its secret lives in a file, never here). */
export interface ReachLinkRow {
  id: string;
  name: string;
  /** The link's URL, its secret's SHA-256 and pinned fingerprint, as JSON. */
  data: string;
  created_at: number;
}

const INSERT_LINK = "INSERT INTO reach_links (id, name, data, created_at) VALUES (?, ?, ?, ?)";

/** The links table (migration 7). */
export class ReachLinksTable {
  private readonly sql: TableSql;

  constructor(host: TableHost) {
    this.sql = host.tableSql;
  }

  /** Stores a link; false, nothing written, when its name is taken already. */
  async insert(link: ReachLinkRow): Promise<boolean> {
    try {
      await this.sql.run(INSERT_LINK, [link.id, link.name, link.data, link.created_at]);
      return true;
    } catch (error) {
      if (this.sql.isUniqueViolation(error)) return false;
      throw error;
    }
  }

  /**
   * Stores a link before it returns (its caller, `link add`, cannot await: see
   * `TableSql.runNow`); false, nothing written, when its name is taken already.
   */
  insertNow(link: ReachLinkRow): boolean {
    try {
      this.sql.runNow(INSERT_LINK, [link.id, link.name, link.data, link.created_at]);
      return true;
    } catch (error) {
      if (this.sql.isUniqueViolation(error)) return false;
      throw error;
    }
  }

  /** One link by name, or null. */
  async byName(name: string): Promise<ReachLinkRow | null> {
    return (await this.sql.get<ReachLinkRow>("SELECT * FROM reach_links WHERE name = ?", [name])) ?? null;
  }

  /** Every link, oldest first (links made in the same millisecond: by insertion on SQLite, by id on PostgreSQL). */
  async oldestFirst(): Promise<ReachLinkRow[]> {
    const tie = this.sql.dialect === "postgresql" ? "id" : "rowid";
    return this.sql.all<ReachLinkRow>(`SELECT * FROM reach_links ORDER BY created_at, ${tie}`);
  }

  /** Removes a link by id. */
  async remove(id: string): Promise<void> {
    await this.sql.run("DELETE FROM reach_links WHERE id = ?", [id]);
  }
}
