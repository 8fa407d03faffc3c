import type { EventStore } from "../ports.js";

/**
 * Budgets (`budgets`) and their running totals (`budget_totals`, one row per scope, kept in
 * the transaction that records each turn's usage): the queries the tree budgets ask.
 */
export class BudgetsTable {
  constructor(private readonly store: EventStore) {}

  /** The tasks whose wall-clock budget runs: a wall-clock limit, and the task not finalized. */
  async taskIdsWithRunningWallClock(): Promise<string[]> {
    const rows = this.store
      .statement(
        `SELECT b.task_id AS taskId FROM budgets b JOIN delegated_tasks t ON t.id = b.task_id
         WHERE b.scope = 'delegated_task' AND b.wall_clock_ms IS NOT NULL AND t.finalized = 0`,
      )
      .all() as { taskId: string }[];
    return rows.map((row) => row.taskId);
  }

  /** A scope's running total, or null before its first counted turn. */
  async totalOf(scopeId: string): Promise<{ tokens: number; costUsd: number } | null> {
    const row = this.store.statement("SELECT tokens, cost_usd FROM budget_totals WHERE scope_id = ?").get(scopeId) as
      { tokens: number; cost_usd: number } | undefined;
    return row === undefined ? null : { tokens: row.tokens, costUsd: row.cost_usd };
  }

  /** Adds to a scope's running total; false when the scope has none yet. */
  addToTotal(scopeId: string, tokens: number, costUsd: number): boolean {
    return (
      this.store
        .statement("UPDATE budget_totals SET tokens = tokens + ?, cost_usd = cost_usd + ? WHERE scope_id = ?")
        .run(tokens, costUsd, scopeId).changes > 0
    );
  }

  /** Starts a scope's running total. */
  startTotal(scopeId: string, tokens: number, costUsd: number): void {
    this.store
      .statement("INSERT INTO budget_totals (scope_id, tokens, cost_usd) VALUES (?, ?, ?)")
      .run(scopeId, tokens, costUsd);
  }
}
