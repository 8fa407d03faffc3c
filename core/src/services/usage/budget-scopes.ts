import type { BudgetConfig, TreeBudgetConfig } from "../../config/config-schema.js";
import type { CommandContext } from "../../engine/command-context.js";
import type { ProjectionReader } from "../../engine/run-lifecycle.js";
import type { BudgetLimitName, BudgetLimits, BudgetRecord, ThreadRecord } from "../../store/records.js";
import { DelegatedTasksTable } from "../../store/tables/delegated-tasks.js";
import { scopeTotal, type TotalKey } from "./budget-totals.js";

/** The limits a tree budget config sets (absent: no limit). */
export function limitsOf(config: TreeBudgetConfig): BudgetLimits {
  return { tokens: config.tokens ?? null, costUsd: config.costUsd ?? null, wallClockMs: config.wallClockMs ?? null };
}

/** True when a budget sets any limit. */
export function hasLimits(limits: BudgetLimits): boolean {
  return limits.tokens !== null || limits.costUsd !== null || limits.wallClockMs !== null;
}

export const LIMIT_NAMES: readonly BudgetLimitName[] = ["tokens", "costUsd", "wallClockMs"];

/** The deterministic id of a scope's budget record. */
export const budgetId = {
  task: (taskId: string) => `budget:task:${taskId}`,
  root: (rootThreadId: string) => `budget:root:${rootThreadId}`,
};

/** A budget that covers a thread: its own task's, an ancestor task's, or the root thread's. */
export interface BudgetScope {
  readonly kind: "delegated_task" | "root_thread";
  /** The budget record's id (the record may not exist yet for a root thread). */
  readonly id: string;
  /** The thread at the top of what the budget covers. */
  readonly threadId: string;
  readonly taskId: string | null;
  readonly rootThreadId: string;
  readonly limits: BudgetLimits;
  /** Where the limits came from (see BudgetRecord.origin). */
  readonly origin: BudgetRecord["origin"];
  /** When the budget's wall clock started, or null while it does not run (see {@link clockStartMs}). */
  readonly clockStartMs: number | null;
  readonly record: BudgetRecord | null;
}

/** What a scope has used: tokens and priced dollars of its whole tree, wall-clock time so far. */
export interface BudgetUse {
  readonly tokens: number;
  readonly costUsd: number;
  /** Null while the wall clock does not run. */
  readonly wallClockMs: number | null;
}

/**
 * When a scope's wall clock started. A task's runs from its creation until its result is
 * published. A root thread's runs while its tree has delegated work unfinished, from the
 * creation of the oldest unfinished task: a long-lived conversation is not charged for the
 * days it sat idle, and a new burst of delegation starts a new clock.
 */
async function taskClockStart(reader: ProjectionReader, taskId: string): Promise<number | null> {
  const task = await reader.get("delegatedTask", taskId);
  return task === null || task.finalizedAt !== null ? null : Date.parse(task.createdAt);
}

async function rootClockStart(reader: ProjectionReader, rootThreadId: string): Promise<number | null> {
  const started = await reader.table(DelegatedTasksTable).oldestUnfinalizedCreatedAt(rootThreadId);
  return started === null ? null : Date.parse(started);
}

/** Limit by limit, the tighter of two budgets (a limit one of them leaves unset is the other's). */
export function tightestOf(a: BudgetLimits, b: BudgetLimits): BudgetLimits {
  const tighter = (x: number | null, y: number | null) => (x === null ? y : y === null ? x : Math.min(x, y));
  return {
    tokens: tighter(a.tokens, b.tokens),
    costUsd: tighter(a.costUsd, b.costUsd),
    wallClockMs: tighter(a.wallClockMs, b.wallClockMs),
  };
}

/**
 * A root thread's limits and where they came from: the config's `budgets.rootThread` and the
 * budget of the profile the thread was started with (kept on its record), the tighter of the
 * two limit by limit.
 */
export function rootLimits(
  budgets: BudgetConfig,
  root: ThreadRecord | null,
): { limits: BudgetLimits; origin: BudgetRecord["origin"] } {
  const configured = limitsOf(budgets.rootThread);
  const profile = root?.profileBudget ?? null;
  if (profile === null || !hasLimits(profile)) return { limits: configured, origin: "config" };
  return {
    limits: tightestOf(configured, profile),
    origin: hasLimits(configured) ? "profile_and_config" : "profile",
  };
}

/**
 * Writes the budget record of a top-level thread started with a profile that sets a budget, in
 * the command that creates the thread: the profile's limits (`origin: "profile"`), by which the
 * wall-clock timer finds running root clocks. The budget in force is still {@link rootLimits}'
 * (the tighter of these and the config's), and a stop rewrites the record with it.
 */
export async function recordProfileRootBudget(ctx: CommandContext, thread: ThreadRecord): Promise<void> {
  const limits = thread.profileBudget ?? null;
  if (limits === null || !hasLimits(limits) || thread.lineage.rootThreadId !== thread.id) return;
  const id = budgetId.root(thread.id);
  if ((await ctx.get("budget", id)) !== null) return;
  ctx.put("budget", {
    id,
    scope: "root_thread",
    threadId: thread.id,
    taskId: null,
    rootThreadId: thread.id,
    limits,
    origin: "profile",
    exceeded: null,
    createdAt: ctx.now,
    updatedAt: ctx.now,
  });
}

/** The root thread's budget scope, when the config or the thread's profile sets root-thread limits. */
export async function rootScope(
  reader: ProjectionReader,
  budgets: BudgetConfig,
  rootThreadId: string,
): Promise<BudgetScope | null> {
  const { limits, origin } = rootLimits(budgets, await reader.get("thread", rootThreadId));
  if (!hasLimits(limits)) return null;
  return {
    kind: "root_thread",
    id: budgetId.root(rootThreadId),
    threadId: rootThreadId,
    taskId: null,
    rootThreadId,
    limits,
    origin,
    clockStartMs: limits.wallClockMs === null ? null : await rootClockStart(reader, rootThreadId),
    record: await reader.get("budget", budgetId.root(rootThreadId)),
  };
}

/** A delegated task's budget scope, when the task has limits. */
export async function taskScope(reader: ProjectionReader, taskId: string): Promise<BudgetScope | null> {
  const record = await reader.get("budget", budgetId.task(taskId));
  if (record === null || !hasLimits(record.limits)) return null;
  return {
    kind: "delegated_task",
    id: record.id,
    threadId: record.threadId,
    taskId,
    rootThreadId: record.rootThreadId,
    limits: record.limits,
    origin: record.origin,
    clockStartMs: record.limits.wallClockMs === null ? null : await taskClockStart(reader, taskId),
    record,
  };
}

/**
 * Every budget covering a thread's work, innermost first: the task the thread works for, the
 * tasks above it, then the root thread's.
 */
export async function enclosingScopes(
  reader: ProjectionReader,
  budgets: BudgetConfig,
  threadId: string,
): Promise<BudgetScope[]> {
  const scopes: BudgetScope[] = [];
  const seen = new Set<string>();
  let thread = await reader.get("thread", threadId);
  const rootThreadId = thread?.lineage.rootThreadId ?? threadId;
  while (thread !== null && !seen.has(thread.id)) {
    seen.add(thread.id);
    const taskId = thread.lineage.delegatedTaskId;
    if (taskId !== null) {
      const scope = await taskScope(reader, taskId);
      if (scope !== null) scopes.push(scope);
    }
    thread = thread.lineage.parentThreadId === null ? null : await reader.get("thread", thread.lineage.parentThreadId);
  }
  const root = await rootScope(reader, budgets, rootThreadId);
  if (root !== null) scopes.push(root);
  return scopes;
}

/** A root thread's running total: its whole tree, every turn filed under its root id. */
export function rootTotalKey(rootThreadId: string): TotalKey {
  return { id: budgetId.root(rootThreadId), sums: { kind: "tree", rootThreadId } };
}

/** Where a scope's running total is kept: a root thread's tree, or a task's child thread and everything below it. */
export function totalKeyOf(scope: BudgetScope): TotalKey {
  return scope.kind === "root_thread"
    ? rootTotalKey(scope.threadId)
    : { id: scope.id, sums: { kind: "subtree", threadId: scope.threadId } };
}

/**
 * What a scope's tree has used now: its running total (one row, however big the tree), kept
 * as each turn's usage is recorded (see budget-totals.ts).
 */
export async function scopeUse(reader: ProjectionReader, scope: BudgetScope, nowMs: number): Promise<BudgetUse> {
  const used = await scopeTotal(reader, totalKeyOf(scope));
  return { ...used, wallClockMs: scope.clockStartMs === null ? null : Math.max(0, nowMs - scope.clockStartMs) };
}

/** The first limit a scope has reached, if any. */
export function reachedLimit(
  scope: BudgetScope,
  use: BudgetUse,
): { limit: BudgetLimitName; used: number; allowed: number } | null {
  const { tokens, costUsd, wallClockMs } = scope.limits;
  if (tokens !== null && use.tokens >= tokens) return { limit: "tokens", used: use.tokens, allowed: tokens };
  if (costUsd !== null && use.costUsd >= costUsd) return { limit: "costUsd", used: use.costUsd, allowed: costUsd };
  if (wallClockMs !== null && use.wallClockMs !== null && use.wallClockMs >= wallClockMs)
    return { limit: "wallClockMs", used: use.wallClockMs, allowed: wallClockMs };
  return null;
}

/**
 * What is left of a scope's limits (null: that limit is not set). A wall clock that has not
 * started yet has all of its time left.
 */
export function remainingOf(scope: BudgetScope, use: BudgetUse): BudgetLimits {
  const { tokens, costUsd, wallClockMs } = scope.limits;
  return {
    tokens: tokens === null ? null : Math.max(0, tokens - use.tokens),
    costUsd: costUsd === null ? null : Math.max(0, Math.round((costUsd - use.costUsd) * 1e8) / 1e8),
    wallClockMs: wallClockMs === null ? null : Math.max(0, wallClockMs - (use.wallClockMs ?? 0)),
  };
}

/** When a scope's wall clock runs out, or null when it has none running. */
export function wallClockDeadline(scope: BudgetScope): number | null {
  return scope.limits.wallClockMs === null || scope.clockStartMs === null
    ? null
    : scope.clockStartMs + scope.limits.wallClockMs;
}
