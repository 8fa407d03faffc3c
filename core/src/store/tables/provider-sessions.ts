import type { TableHost, TableSql } from "../table-sql.js";

/** Queries over the `provider_sessions` projection that its typed reads do not cover. */
export class ProviderSessionsTable {
  private readonly sql: TableSql;

  constructor(host: TableHost) {
    this.sql = host.tableSql;
  }

  /** How many provider sessions are open or opening. */
  async countOpen(): Promise<number> {
    return (await this.sql.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM provider_sessions WHERE status IN ('opening', 'open')",
    ))!.n;
  }
}
