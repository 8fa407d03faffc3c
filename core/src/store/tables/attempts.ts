import type { TableHost, TableSql } from "../table-sql.js";

/** Queries over the `attempts` projection (a run's turns at its provider) that its typed reads do not cover. */
export class AttemptsTable {
  private readonly sql: TableSql;

  constructor(host: TableHost) {
    this.sql = host.tableSql;
  }

  /** A turn of the provider session is starting or running (read from the partial index of running turns). */
  async hasRunningTurn(providerSessionId: string): Promise<boolean> {
    return (
      (await this.sql.get(
        "SELECT 1 FROM attempts WHERE status IN ('starting', 'running') AND provider_session_id = ? LIMIT 1",
        [providerSessionId],
      )) !== undefined
    );
  }
}
