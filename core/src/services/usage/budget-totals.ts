import type { ProjectionReader } from "../../engine/run-lifecycle.js";
import { BudgetsTable } from "../../store/tables/budgets.js";
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
export async function scopeTotal(reader: ProjectionReader, key: TotalKey): Promise<ScopeTotal> {
  // The sum is read only for a scope without a running total (as before).
  return (await reader.table(BudgetsTable).totalOf(key.id)) ?? (await usedByScope(reader, key.sums));
}

/**
 * Adds what a turn's usage record changed (a new record, or a repeated report for the same
 * turn: the difference) to the running totals of the scopes around it. Runs in the
 * transaction that writes the record, after it, so a crash keeps both or neither: a turn is
 * never counted twice or lost. A scope without a total yet starts from the sum of its
 * records, the new one included.
 */
export async function addToTotals(
  reader: ProjectionReader,
  keys: readonly TotalKey[],
  change: ScopeTotal,
): Promise<void> {
  if (change.tokens === 0 && change.costUsd === 0) return;
  const budgets = reader.table(BudgetsTable);
  for (const key of keys) {
    if (await budgets.addToTotal(key.id, change.tokens, change.costUsd)) continue;
    const sum = await usedByScope(reader, key.sums);
    await budgets.startTotal(key.id, sum.tokens, sum.costUsd);
  }
}
