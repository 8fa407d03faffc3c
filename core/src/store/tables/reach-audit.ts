import type { TableHost, TableSql } from "../table-sql.js";

/** A row of `reach_audit`: one call across environments, ids and codes only. */
export interface ReachAuditRow {
  id: number;
  at: number;
  direction: "in" | "out";
  grant_id: string | null;
  link_name: string | null;
  verb: string | null;
  tool: string | null;
  outcome: string;
  /** The rest of the call's record (environment names, target ids, reason) as JSON. */
  data: string;
}

/** The audit of calls across environments (migration 8): append and read, newest first. */
export class ReachAuditTable {
  private readonly sql: TableSql;

  constructor(host: TableHost) {
    this.sql = host.tableSql;
  }

  /** Appends one row. */
  async insert(row: Omit<ReachAuditRow, "id">): Promise<void> {
    await this.sql.run(
      "INSERT INTO reach_audit (at, direction, grant_id, link_name, verb, tool, outcome, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      [row.at, row.direction, row.grant_id, row.link_name, row.verb, row.tool, row.outcome, row.data],
    );
  }

  /** Rows at or after `sinceMs`, of one direction when given, newest first, at most `limit`. */
  async newestSince(
    sinceMs: number,
    direction: ReachAuditRow["direction"] | null,
    limit: number,
  ): Promise<ReachAuditRow[]> {
    // The cast gives PostgreSQL the parameter's type, which `? IS NULL` alone does not.
    return this.sql.all<ReachAuditRow>(
      "SELECT * FROM reach_audit WHERE at >= ? AND (CAST(? AS TEXT) IS NULL OR direction = ?) ORDER BY id DESC LIMIT ?",
      [sinceMs, direction, direction, limit],
    );
  }
}
