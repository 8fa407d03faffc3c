import { inject, injectable } from "tsyringe";
import { type SwitchyardConfig, type TreeBudgetConfig, ConfigToken } from "../../config/config-schema.js";
import type { CommandContext } from "../../engine/command-context.js";
import { OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import { activeRun, requestInterrupt, type ProjectionReader } from "../../engine/run-lifecycle.js";
import type {
  BudgetExceeded,
  BudgetLimitName,
  BudgetLimits,
  BudgetRecord,
  DelegatedTaskRecord,
} from "../../store/records.js";
import { stopTaskTree } from "../../engine/task-stop.js";
import { BudgetsTable } from "../../store/tables/budgets.js";
import { DelegatedTasksTable } from "../../store/tables/delegated-tasks.js";
import {
  budgetId,
  enclosingScopes,
  hasLimits,
  LIMIT_NAMES,
  limitsOf,
  reachedLimit,
  remainingOf,
  rootScope,
  scopeUse,
  taskScope,
  wallClockDeadline,
  type BudgetScope,
} from "./budget-scopes.js";

/** The run and task reason a budget stop records (`budget_exceeded:tokens`). */
export function budgetStopReason(limit: BudgetLimitName): string {
  return `budget_exceeded:${limit}`;
}

/** True for a reason {@link budgetStopReason} wrote. */
export function isBudgetStopReason(reason: string | null | undefined): boolean {
  return typeof reason === "string" && reason.startsWith("budget_exceeded:");
}

const LIMIT_WORDS: Readonly<Record<BudgetLimitName, string>> = {
  tokens: "tokens",
  costUsd: "US dollars",
  wallClockMs: "milliseconds of wall-clock time",
};

const ROOT_ORIGIN_WORDS: Partial<Record<BudgetRecord["origin"], string>> = {
  config: "budgets.rootThread",
  profile: "its profile's budget",
  profile_and_config: "the tighter of its profile's budget and budgets.rootThread",
};

function scopeWords(scope: BudgetScope): string {
  return scope.kind === "root_thread"
    ? `root thread ${scope.threadId}'s budget (${ROOT_ORIGIN_WORDS[scope.origin] ?? "budgets.rootThread"})`
    : `task ${scope.taskId}'s budget`;
}

/**
 * Budgets on delegation trees: tokens, dollars and wall-clock time per root thread (config
 * `budgets.rootThread`, tightened by the budget of the profile the thread was started with) and per delegated task (the `delegate_task` budget, else config
 * `budgets.delegatedTask`). A child's budget fits inside what is left of every budget above
 * it; a tree whose budget is reached gets no new children, its running turns are interrupted,
 * and its tasks finish with their partial results and the reason (`budget_exceeded:<limit>`).
 */
@injectable()
export class TreeBudgets {
  constructor(@inject(ConfigToken) private readonly config: SwitchyardConfig) {}

  /** The limits the config applies: to each root thread's tree, and to each task without its own budget. */
  get configured(): { readonly rootThread: BudgetLimits; readonly delegatedTask: BudgetLimits } {
    return {
      rootThread: limitsOf(this.config.budgets.rootThread),
      delegatedTask: limitsOf(this.config.budgets.delegatedTask),
    };
  }

  /** Every budget covering a thread's work, innermost first. */
  async scopesOf(reader: ProjectionReader, threadId: string): Promise<BudgetScope[]> {
    return await enclosingScopes(reader, this.config.budgets, threadId);
  }

  /**
   * The limits of a task the thread is about to delegate, after checking that its tree may have
   * one more child: no budget covering the thread is reached, and a requested budget fits in
   * what is left of each of them. Refusals are `invalid_request` naming the budget in `details`.
   */
  async limitsForNewTask(
    ctx: CommandContext,
    parentThreadId: string,
    requested: TreeBudgetConfig | undefined,
  ): Promise<{ limits: BudgetLimits; origin: BudgetRecord["origin"] } | null> {
    for (const scope of await this.scopesOf(ctx, parentThreadId)) {
      const use = await scopeUse(ctx, scope, ctx.nowMs);
      const reached = reachedLimit(scope, use);
      if (reached !== null) {
        throw new OrchestratorFailure(
          "invalid_request",
          `No new delegated tasks: ${scopeWords(scope)} is used up (${reached.used} of ${reached.allowed} ${LIMIT_WORDS[reached.limit]}). Finish this work with what you have.`,
          {
            budget: reached.limit,
            scope: scope.kind,
            budgetId: scope.id,
            limit: reached.allowed,
            used: reached.used,
            remaining: 0,
          },
        );
      }
      if (requested === undefined) continue;
      const remaining = remainingOf(scope, use);
      for (const limit of LIMIT_NAMES) {
        const wanted = requested[limit];
        const left = remaining[limit];
        if (wanted === undefined || left === null || wanted <= left) continue;
        throw new OrchestratorFailure(
          "invalid_request",
          `budget.${limit} ${wanted} is more than what is left of ${scopeWords(scope)}: ${left} ${LIMIT_WORDS[limit]}. A child's budget must fit in its parent's; ask for at most ${left}.`,
          {
            budget: limit,
            scope: scope.kind,
            budgetId: scope.id,
            requested: wanted,
            remaining: left,
            limit: scope.limits[limit],
          },
        );
      }
    }
    const defaults = limitsOf(this.config.budgets.delegatedTask);
    const own = requested === undefined ? null : limitsOf(requested);
    const limits: BudgetLimits = {
      tokens: own?.tokens ?? defaults.tokens,
      costUsd: own?.costUsd ?? defaults.costUsd,
      wallClockMs: own?.wallClockMs ?? defaults.wallClockMs,
    };
    if (!hasLimits(limits)) return null;
    const fromRequest = own !== null && hasLimits(own);
    const fromConfig = LIMIT_NAMES.some((limit) => (own?.[limit] ?? null) === null && defaults[limit] !== null);
    return {
      limits,
      origin: fromRequest && fromConfig ? "delegate_task_and_config" : fromRequest ? "delegate_task" : "config",
    };
  }

  /** Writes a new task's budget (in the transaction that creates the task). */
  recordTaskBudget(
    ctx: CommandContext,
    task: DelegatedTaskRecord,
    budget: { limits: BudgetLimits; origin: BudgetRecord["origin"] },
  ): void {
    ctx.put("budget", {
      id: budgetId.task(task.id),
      scope: "delegated_task",
      threadId: task.childThreadId,
      taskId: task.id,
      rootThreadId: task.rootThreadId,
      limits: budget.limits,
      origin: budget.origin,
      exceeded: null,
      createdAt: ctx.now,
      updatedAt: ctx.now,
    });
  }

  /** After a turn of a thread ended: stops every tree around it whose budget it used up. */
  async enforceAround(ctx: CommandContext, threadId: string): Promise<void> {
    for (const scope of await this.scopesOf(ctx, threadId)) await this.enforce(ctx, scope);
  }

  /** Stops, once, a scope's tree whose budget is reached. */
  async enforce(ctx: CommandContext, scope: BudgetScope): Promise<boolean> {
    if (this.alreadyStopped(scope)) return false;
    const reached = reachedLimit(scope, await scopeUse(ctx, scope, ctx.nowMs));
    if (reached === null) return false;
    await this.stop(ctx, scope, { ...reached, at: ctx.now });
    return true;
  }

  /**
   * A budget stops its tree once. A root thread's wall clock is the exception: it restarts with
   * a new burst of delegated work (its clock started after the last stop), which it may stop too.
   */
  private alreadyStopped(scope: BudgetScope): boolean {
    const exceeded = scope.record?.exceeded ?? null;
    if (exceeded === null) return false;
    if (scope.kind === "root_thread" && exceeded.limit === "wallClockMs" && scope.clockStartMs !== null)
      return scope.clockStartMs <= Date.parse(exceeded.at);
    return true;
  }

  private async stop(ctx: CommandContext, scope: BudgetScope, exceeded: BudgetExceeded): Promise<void> {
    const reason = budgetStopReason(exceeded.limit);
    const existing = await ctx.get("budget", scope.id);
    ctx.put("budget", {
      id: scope.id,
      scope: scope.kind,
      threadId: scope.threadId,
      taskId: scope.taskId,
      rootThreadId: scope.rootThreadId,
      limits: scope.limits,
      origin: scope.origin,
      exceeded,
      createdAt: existing?.createdAt ?? ctx.now,
      updatedAt: ctx.now,
    });
    if (scope.taskId !== null) {
      await stopTaskTree(ctx, scope.taskId, reason, { disposeDelivery: false });
      return;
    }
    // The whole tree: every unfinished task of the root thread, then the root thread's own turn.
    for (const task of await ctx.select("delegatedTask", "parent_thread_id = ?", [scope.threadId])) {
      if (task.finalizedAt === null) await stopTaskTree(ctx, task.id, reason, { disposeDelivery: false });
    }
    const live = await activeRun(ctx, scope.threadId);
    if (live !== null) await requestInterrupt(ctx, live.id, reason, true);
  }

  /** Stops every tree whose wall clock has run out. */
  async enforceWallClocks(ctx: CommandContext): Promise<number> {
    let stopped = 0;
    for (const scope of await this.wallClockScopes(ctx)) {
      const deadline = wallClockDeadline(scope);
      if (deadline !== null && deadline <= ctx.nowMs && (await this.enforce(ctx, scope))) stopped += 1;
    }
    return stopped;
  }

  /** When the next wall clock runs out, or null when none is running. */
  async nextWallClockDeadline(reader: ProjectionReader): Promise<number | null> {
    let next: number | null = null;
    for (const scope of await this.wallClockScopes(reader)) {
      if (this.alreadyStopped(scope)) continue;
      const deadline = wallClockDeadline(scope);
      if (deadline !== null && (next === null || deadline < next)) next = deadline;
    }
    return next;
  }

  /**
   * Scopes whose wall clock is running: unfinished tasks with a wall-clock limit, and root
   * threads with unfinished work whose config or profile sets one (with no config wall clock,
   * only roots whose profile budget record sets one are read).
   */
  private async wallClockScopes(reader: ProjectionReader): Promise<BudgetScope[]> {
    const scopes: BudgetScope[] = [];
    for (const taskId of await reader.table(BudgetsTable).taskIdsWithRunningWallClock()) {
      const scope = await taskScope(reader, taskId);
      if (scope !== null) scopes.push(scope);
    }
    const roots =
      this.config.budgets.rootThread.wallClockMs !== undefined
        ? await reader.table(DelegatedTasksTable).rootsWithUnfinalizedTasks()
        : await reader.table(BudgetsTable).rootIdsWithRunningWallClock(budgetId.root(""));
    for (const rootThreadId of roots) {
      const scope = await rootScope(reader, this.config.budgets, rootThreadId);
      if (scope !== null && scope.limits.wallClockMs !== null) scopes.push(scope);
    }
    return scopes;
  }
}
