import type { TableHost, TableSql } from "../table-sql.js";

/** Queries over the `scheduled_triggers` projection that its typed reads do not cover. */
export class ScheduledTriggersTable {
  private readonly sql: TableSql;

  constructor(host: TableHost) {
    this.sql = host.tableSql;
  }

  /** The tasks (deleted ones included) with a trigger created before `cutoff` (ISO). */
  async taskIdsWithTriggersBefore(cutoff: string): Promise<string[]> {
    const rows = await this.sql.all<{ task_id: string }>(
      "SELECT DISTINCT task_id FROM scheduled_triggers WHERE created_at < ?",
      [cutoff],
    );
    return rows.map((row) => row.task_id);
  }
}
