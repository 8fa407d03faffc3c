import type { TableHost, TableSql } from "../table-sql.js";

/** Which turns to sum. */
export type UsageScope =
  | { readonly kind: "thread"; readonly threadId: string }
  /** A thread and every thread below it in its lineage (sub-agents and their sub-agents, forks), across providers. */
  | { readonly kind: "subtree"; readonly threadId: string }
  /** A root thread's whole tree: the subtree of a root thread, read by its root id (no walk). */
  | { readonly kind: "tree"; readonly rootThreadId: string }
  | { readonly kind: "run"; readonly runId: string }
  /** Every thread of a project. */
  | { readonly kind: "project"; readonly projectId: string }
  /** Every thread of these projects. */
  | { readonly kind: "projects"; readonly projectIds: readonly string[] };

/** Sums over a scope's turn usage records (`turn_usage`). */
export interface TurnUsageSums {
  /** Turns with a usage record. */
  reported: number;
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
  reasoning: number;
  total: number;
  reported_usd: number;
  estimated_usd: number;
  reported_cost_turns: number;
  estimated_cost_turns: number;
}

/** A scope's turns as attempts count them. */
export interface TurnAttemptCounts {
  /** Turns that reached their provider (they have a provider session) and ended. */
  ended: number;
  /** Turns starting or running now. */
  in_flight: number;
}

// The lineage tree, as `rootThreadId` and `maxTasksPerRootThread` see it: sub-agents and forks.
// (The cast tells PostgreSQL the parameter's type, which a bare `SELECT ?` does not.)
const SUBTREE =
  "WITH RECURSIVE tree(id) AS (SELECT CAST(? AS TEXT) UNION ALL SELECT t.id FROM threads t JOIN tree ON t.parent_thread_id = tree.id)";

function filterFor(scope: UsageScope): { prefix: string; where: string; params: readonly string[] } {
  switch (scope.kind) {
    case "thread":
      return { prefix: "", where: "thread_id = ?", params: [scope.threadId] };
    case "subtree":
      return { prefix: SUBTREE, where: "thread_id IN (SELECT id FROM tree)", params: [scope.threadId] };
    case "tree":
      return { prefix: "", where: "root_thread_id = ?", params: [scope.rootThreadId] };
    case "run":
      return { prefix: "", where: "run_id = ?", params: [scope.runId] };
    case "project":
      return {
        prefix: "",
        where: "thread_id IN (SELECT id FROM threads WHERE project_id = ?)",
        params: [scope.projectId],
      };
    case "projects":
      // No project: nothing (IN () is not SQL; a bare 0 is no condition on PostgreSQL).
      if (scope.projectIds.length === 0) return { prefix: "", where: "1 = 0", params: [] };
      return {
        prefix: "",
        where: `thread_id IN (SELECT id FROM threads WHERE project_id IN (${scope.projectIds.map(() => "?").join(", ")}))`,
        params: scope.projectIds,
      };
  }
}

/**
 * What turns used (`turn_usage`) and how many ran (`attempts`), summed over a scope: the
 * queries of usage totals and budgets, each one indexed sum.
 */
export class TurnUsageTable {
  private readonly sql: TableSql;

  constructor(host: TableHost) {
    this.sql = host.tableSql;
  }

  /** The tokens and priced dollars of a scope's turns. */
  async used(scope: UsageScope): Promise<{ tokens: number; costUsd: number }> {
    const { prefix, where, params } = filterFor(scope);
    const row = (await this.sql.get<{ tokens: number | string; cost: number }>(
      `${prefix} SELECT COALESCE(SUM(total_tokens), 0) AS tokens, COALESCE(SUM(cost_usd), 0) AS cost FROM turn_usage WHERE ${where}`,
      params,
    ))!;
    return { tokens: Number(row.tokens), costUsd: row.cost };
  }

  /** Every sum of a scope's usage records. */
  async sums(scope: UsageScope): Promise<TurnUsageSums> {
    const { prefix, where, params } = filterFor(scope);
    const row = (await this.sql.get<Record<keyof TurnUsageSums, number | string>>(
      `${prefix} SELECT COUNT(*) AS reported,
        COALESCE(SUM(input_tokens), 0) AS input, COALESCE(SUM(output_tokens), 0) AS output,
        COALESCE(SUM(cache_read_tokens), 0) AS cache_read, COALESCE(SUM(cache_write_tokens), 0) AS cache_write,
        COALESCE(SUM(reasoning_tokens), 0) AS reasoning, COALESCE(SUM(total_tokens), 0) AS total,
        COALESCE(SUM(CASE WHEN cost_basis = 'reported' THEN cost_usd END), 0) AS reported_usd,
        COALESCE(SUM(CASE WHEN cost_basis = 'estimated' THEN cost_usd END), 0) AS estimated_usd,
        COALESCE(SUM(CASE WHEN cost_basis = 'reported' THEN 1 ELSE 0 END), 0) AS reported_cost_turns,
        COALESCE(SUM(CASE WHEN cost_basis = 'estimated' THEN 1 ELSE 0 END), 0) AS estimated_cost_turns
      FROM turn_usage WHERE ${where}`,
      params,
    ))!;
    return numbers(row);
  }

  /** How many of a scope's turns ended at their provider and how many run now. */
  async attemptCounts(scope: UsageScope): Promise<TurnAttemptCounts> {
    // Attempts carry no root id: a root's tree is walked there.
    const { prefix, where, params } = filterFor(
      scope.kind === "tree" ? { kind: "subtree", threadId: scope.rootThreadId } : scope,
    );
    // A turn that reached its provider has a provider session; one cancelled before never ran.
    const row = (await this.sql.get<Record<keyof TurnAttemptCounts, number | string>>(
      `${prefix} SELECT
        COALESCE(SUM(CASE WHEN status IN ('completed', 'failed', 'interrupted', 'cancelled') AND provider_session_id IS NOT NULL THEN 1 ELSE 0 END), 0) AS ended,
        COALESCE(SUM(CASE WHEN status IN ('starting', 'running') THEN 1 ELSE 0 END), 0) AS in_flight
      FROM attempts WHERE ${where}`,
      params,
    ))!;
    return numbers(row);
  }

  /** The figures a turn's usage record holds now (before it is written again), or null. */
  async figuresOf(id: string): Promise<{ total_tokens: number; cost_usd: number | null } | null> {
    return (
      (await this.sql.get<{ total_tokens: number; cost_usd: number | null }>(
        "SELECT total_tokens, cost_usd FROM turn_usage WHERE id = ?",
        [id],
      )) ?? null
    );
  }
}

/**
 * A row of sums as numbers: PostgreSQL's `SUM` of a `bigint` column is a `numeric`, which its
 * driver hands over as text (SQLite's are numbers already).
 */
function numbers<K extends string>(row: Record<K, number | string>): Record<K, number> {
  const result = {} as Record<K, number>;
  for (const key of Object.keys(row) as K[]) result[key] = Number(row[key]);
  return result;
}
