import type { TableHost, TableSql } from "../table-sql.js";

/** Queries over the `runs` projection that its typed reads do not cover. */
export class RunsTable {
  private readonly sql: TableSql;

  constructor(host: TableHost) {
    this.sql = host.tableSql;
  }

  /** The threads that have a queued run. */
  async threadsWithQueuedRuns(): Promise<string[]> {
    const rows = await this.sql.all<{ thread_id: string }>(
      "SELECT DISTINCT thread_id FROM runs WHERE status = 'queued'",
    );
    return rows.map((row) => row.thread_id);
  }

  /** How many threads have a run starting, running or waiting. */
  async countThreadsWithActiveRuns(): Promise<number> {
    return (await this.sql.get<{ n: number }>(
      "SELECT COUNT(DISTINCT thread_id) AS n FROM runs WHERE status IN ('starting', 'running', 'waiting')",
    ))!.n;
  }
}
