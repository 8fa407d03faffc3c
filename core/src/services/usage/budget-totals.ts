import type { ProjectionReader } from "../../engine/run-lifecycle.js";
import { usedByScope, type UsageScope } from "./usage-totals.js";

/** Tokens and priced dollars a budget scope's tree used. */
export interface ScopeTotal {
  readonly tokens: number;
  readonly costUsd: number;
}

/** Where a scope's running total is kept, and what it sums when it has none yet. */
export interface TotalKey {
  /** The budget id the total is kept under (`budget:root:<thread>`, `budget:task:<task>`). */
  readonly id: string;
  readonly sums: UsageScope;
}

/**
 * What a scope used: its running total, or, before its first counted turn (a scope whose
 * turns were all recorded before running totals existed), the sum of its turns' records.
 * Reading never writes.
 */
export function scopeTotal(reader: ProjectionReader, key: TotalKey): ScopeTotal {
  const row = reader.store.statement("SELECT tokens, cost_usd FROM budget_totals WHERE scope_id = ?").get(key.id) as
    { tokens: number; cost_usd: number } | undefined;
  return row === undefined ? usedByScope(reader, key.sums) : { tokens: row.tokens, costUsd: row.cost_usd };
}

/**
 * Adds what a turn's usage record changed (a new record, or a repeated report for the same
 * turn: the difference) to the running totals of the scopes around it. Runs in the
 * transaction that writes the record, after it, so a crash keeps both or neither: a turn is
 * never counted twice or lost. A scope without a total yet starts from the sum of its
 * records, the new one included.
 */
export function addToTotals(reader: ProjectionReader, keys: readonly TotalKey[], change: ScopeTotal): void {
  if (change.tokens === 0 && change.costUsd === 0) return;
  const add = reader.store.statement(
    "UPDATE budget_totals SET tokens = tokens + ?, cost_usd = cost_usd + ? WHERE scope_id = ?",
  );
  const start = reader.store.statement("INSERT INTO budget_totals (scope_id, tokens, cost_usd) VALUES (?, ?, ?)");
  for (const key of keys) {
    if (add.run(change.tokens, change.costUsd, key.id).changes > 0) continue;
    const sum = usedByScope(reader, key.sums);
    start.run(key.id, sum.tokens, sum.costUsd);
  }
}
