import type { ProjectionReader } from "../../engine/run-lifecycle.js";

/**
 * What a set of provider turns used, as their providers reported it. Usage arrives when a turn
 * ends, so the figures are live at turn granularity: a running turn counts in `turns.inFlight`
 * and adds its figures once it ends.
 */
export interface UsageTotals {
  /**
   * `reported`: every ended turn reported its usage; `partial`: some did not (the figures cover
   * those that did, `turns.unknown` counts the rest); `unknown`: none did (no figures);
   * `none`: no turn has ended yet.
   */
  readonly status: "reported" | "partial" | "unknown" | "none";
  readonly turns: {
    /** Turns that reached their provider and ended. */
    readonly ended: number;
    readonly reported: number;
    /** Ended turns without a usage report: their usage is unknown, not zero. */
    readonly unknown: number;
    /** Turns running now (their usage comes when they end). */
    readonly inFlight: number;
  };
  /** Token sums over the reported turns; null when no turn reported any. */
  readonly tokens: {
    readonly input: number;
    readonly output: number;
    readonly cacheRead: number;
    readonly cacheWrite: number;
    /** Of the output tokens, those spent on reasoning. */
    readonly reasoning: number;
    /** Input, cache read, cache write and output: what a token budget counts. */
    readonly total: number;
  } | null;
  readonly cost: {
    /** Reported plus estimated dollars; null when no turn could be priced. */
    readonly usd: number | null;
    /**
     * `reported`: every ended turn's cost is its provider's own; `estimated`: every ended turn is
     * priced, some from the price table; `partial`: some ended turns could not be priced (see
     * `unpricedTurns`); `unpriced`: none could; `none`: no turn has ended.
     */
    readonly basis: "reported" | "estimated" | "partial" | "unpriced" | "none";
    readonly reportedUsd: number;
    readonly estimatedUsd: number;
    /** Ended turns without a cost: known tokens without a price, or unknown usage. */
    readonly unpricedTurns: number;
  };
}

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

// The lineage tree, as `rootThreadId` and `maxTasksPerRootThread` see it: sub-agents and forks.
const SUBTREE =
  "WITH RECURSIVE tree(id) AS (SELECT ? UNION ALL SELECT t.id FROM threads t JOIN tree ON t.parent_thread_id = tree.id)";

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
      // No project: nothing (IN () is not SQL).
      if (scope.projectIds.length === 0) return { prefix: "", where: "0", params: [] };
      return {
        prefix: "",
        where: `thread_id IN (SELECT id FROM threads WHERE project_id IN (${scope.projectIds.map(() => "?").join(", ")}))`,
        params: scope.projectIds,
      };
  }
}

interface UsageRow {
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

interface AttemptRow {
  ended: number;
  in_flight: number;
}

/** The tokens and priced dollars a scope used, for budget checks (two indexed sums). */
export function usedByScope(reader: ProjectionReader, scope: UsageScope): { tokens: number; costUsd: number } {
  const { prefix, where, params } = filterFor(scope);
  const row = reader.store
    .statement(
      `${prefix} SELECT COALESCE(SUM(total_tokens), 0) AS tokens, COALESCE(SUM(cost_usd), 0) AS cost FROM turn_usage WHERE ${where}`,
    )
    .get(...params) as { tokens: number; cost: number };
  return { tokens: row.tokens, costUsd: row.cost };
}

/** Sums the usage of a scope's turns (see {@link UsageTotals}). */
export function usageTotals(reader: ProjectionReader, scope: UsageScope): UsageTotals {
  const { prefix, where, params } = filterFor(scope);
  const usage = reader.store
    .statement(
      `${prefix} SELECT COUNT(*) AS reported,
        COALESCE(SUM(input_tokens), 0) AS input, COALESCE(SUM(output_tokens), 0) AS output,
        COALESCE(SUM(cache_read_tokens), 0) AS cache_read, COALESCE(SUM(cache_write_tokens), 0) AS cache_write,
        COALESCE(SUM(reasoning_tokens), 0) AS reasoning, COALESCE(SUM(total_tokens), 0) AS total,
        COALESCE(SUM(CASE WHEN cost_basis = 'reported' THEN cost_usd END), 0) AS reported_usd,
        COALESCE(SUM(CASE WHEN cost_basis = 'estimated' THEN cost_usd END), 0) AS estimated_usd,
        COALESCE(SUM(CASE WHEN cost_basis = 'reported' THEN 1 ELSE 0 END), 0) AS reported_cost_turns,
        COALESCE(SUM(CASE WHEN cost_basis = 'estimated' THEN 1 ELSE 0 END), 0) AS estimated_cost_turns
      FROM turn_usage WHERE ${where}`,
    )
    .get(...params) as UsageRow;
  // A turn that reached its provider has a provider session; one cancelled before never ran.
  // Attempts carry no root id: a root's tree is walked there.
  const attemptFilter = filterFor(scope.kind === "tree" ? { kind: "subtree", threadId: scope.rootThreadId } : scope);
  const attempts = reader.store
    .statement(
      `${attemptFilter.prefix} SELECT
        COALESCE(SUM(CASE WHEN status IN ('completed', 'failed', 'interrupted', 'cancelled') AND json_extract(data, '$.providerSessionId') IS NOT NULL THEN 1 ELSE 0 END), 0) AS ended,
        COALESCE(SUM(CASE WHEN status IN ('starting', 'running') THEN 1 ELSE 0 END), 0) AS in_flight
      FROM attempts WHERE ${attemptFilter.where}`,
    )
    .get(...attemptFilter.params) as AttemptRow;
  // A late terminal can report usage for an attempt the host had already ended otherwise.
  const ended = Math.max(attempts.ended, usage.reported);
  const unknown = ended - usage.reported;
  const status: UsageTotals["status"] =
    ended === 0 ? "none" : usage.reported === 0 ? "unknown" : unknown > 0 ? "partial" : "reported";
  const priced = usage.reported_cost_turns + usage.estimated_cost_turns;
  const unpricedTurns = ended - priced;
  const basis: UsageTotals["cost"]["basis"] =
    ended === 0
      ? "none"
      : priced === 0
        ? "unpriced"
        : unpricedTurns > 0
          ? "partial"
          : usage.estimated_cost_turns > 0
            ? "estimated"
            : "reported";
  return {
    status,
    turns: { ended, reported: usage.reported, unknown, inFlight: attempts.in_flight },
    tokens:
      usage.reported === 0 && ended > 0
        ? null
        : {
            input: usage.input,
            output: usage.output,
            cacheRead: usage.cache_read,
            cacheWrite: usage.cache_write,
            reasoning: usage.reasoning,
            total: usage.total,
          },
    cost: {
      usd: priced === 0 ? (ended === 0 ? 0 : null) : roundUsd(usage.reported_usd + usage.estimated_usd),
      basis,
      reportedUsd: roundUsd(usage.reported_usd),
      estimatedUsd: roundUsd(usage.estimated_usd),
      unpricedTurns,
    },
  };
}

/** Dollars to a millionth of a cent, so sums of floats read as the figures they are. */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e8) / 1e8;
}
