import { isFalse, type TableHost, type TableSql } from "../table-sql.js";

/** Queries over the `delegated_tasks` projection that its typed reads do not cover. */
export class DelegatedTasksTable {
  private readonly sql: TableSql;

  constructor(host: TableHost) {
    this.sql = host.tableSql;
  }

  /** When the oldest unfinalized task of a root thread's tree was created (ISO), or null when none is. */
  async oldestUnfinalizedCreatedAt(rootThreadId: string): Promise<string | null> {
    const row = await this.sql.get<{ started: string | null }>(
      `SELECT MIN(created_at) AS started FROM delegated_tasks WHERE root_thread_id = ? AND ${isFalse(this.sql.dialect, "finalized")}`,
      [rootThreadId],
    );
    return row!.started;
  }

  /** The root threads whose tree has a task not finalized yet. */
  async rootsWithUnfinalizedTasks(): Promise<string[]> {
    const rows = await this.sql.all<{ rootThreadId: string }>(
      `SELECT DISTINCT root_thread_id AS "rootThreadId" FROM delegated_tasks WHERE ${isFalse(this.sql.dialect, "finalized")}`,
    );
    return rows.map((row) => row.rootThreadId);
  }
}
