import { isFalse, type TableHost, type TableSql } from "../table-sql.js";

/**
 * Budgets (`budgets`) and their running totals (`budget_totals`, one row per scope, kept in
 * the transaction that records each turn's usage): the queries the tree budgets ask.
 */
export class BudgetsTable {
  private readonly sql: TableSql;

  constructor(host: TableHost) {
    this.sql = host.tableSql;
  }

  /** The tasks whose wall-clock budget runs: a wall-clock limit, and the task not finalized. */
  async taskIdsWithRunningWallClock(): Promise<string[]> {
    const rows = await this.sql.all<{ taskId: string }>(
      `SELECT b.task_id AS "taskId" FROM budgets b JOIN delegated_tasks t ON t.id = b.task_id
         WHERE b.scope = 'delegated_task' AND b.wall_clock_ms IS NOT NULL AND ${isFalse(this.sql.dialect, "t.finalized")}`,
    );
    return rows.map((row) => row.taskId);
  }

  /**
   * The root threads whose own budget record sets a wall clock (a profile's, written when the
   * thread was made) and whose tree has a task not finalized: from the unfinished tasks' index,
   * one primary-key lookup each (`rootIdPrefix` + the root's id is the record's id).
   */
  async rootIdsWithRunningWallClock(rootIdPrefix: string): Promise<string[]> {
    const rows = await this.sql.all<{ rootThreadId: string }>(
      `SELECT DISTINCT t.root_thread_id AS "rootThreadId" FROM delegated_tasks t
         JOIN budgets b ON b.id = CAST(? AS TEXT) || t.root_thread_id
         WHERE ${isFalse(this.sql.dialect, "t.finalized")} AND b.wall_clock_ms IS NOT NULL`,
      [rootIdPrefix],
    );
    return rows.map((row) => row.rootThreadId);
  }

  /** A scope's running total, or null before its first counted turn. */
  async totalOf(scopeId: string): Promise<{ tokens: number; costUsd: number } | null> {
    const row = await this.sql.get<{ tokens: number; cost_usd: number }>(
      "SELECT tokens, cost_usd FROM budget_totals WHERE scope_id = ?",
      [scopeId],
    );
    return row === undefined ? null : { tokens: row.tokens, costUsd: row.cost_usd };
  }

  /** Adds to a scope's running total; false when the scope has none yet. */
  async addToTotal(scopeId: string, tokens: number, costUsd: number): Promise<boolean> {
    const { changes } = await this.sql.run(
      "UPDATE budget_totals SET tokens = tokens + ?, cost_usd = cost_usd + ? WHERE scope_id = ?",
      [tokens, costUsd, scopeId],
    );
    return changes > 0;
  }

  /** Starts a scope's running total. */
  async startTotal(scopeId: string, tokens: number, costUsd: number): Promise<void> {
    await this.sql.run("INSERT INTO budget_totals (scope_id, tokens, cost_usd) VALUES (?, ?, ?)", [
      scopeId,
      tokens,
      costUsd,
    ]);
  }
}
