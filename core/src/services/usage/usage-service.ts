import { inject, injectable } from "tsyringe";
import { type SwitchyardConfig, ConfigToken } from "../../config/config-schema.js";
import { OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import { type Engine, EngineToken } from "../../engine/ports.js";
import type {
  BudgetExceeded,
  BudgetLimitName,
  BudgetLimits,
  BudgetRecord,
  DelegatedTaskRecord,
} from "../../store/records.js";
import { ThreadsTable } from "../../store/tables/threads.js";
import { remainingOf, scopeUse, taskScope, type BudgetScope } from "./budget-scopes.js";
import { DEFAULT_PRICES_AS_OF } from "./default-prices.js";
import { isBudgetStopReason, TreeBudgets } from "./tree-budgets.js";
import { usageTotals, type UsageTotals } from "./usage-totals.js";

export type { UsageTotals } from "./usage-totals.js";

/** A thread's or a task's usage: its own turns, and its whole tree below it. */
export interface TreeUsage {
  /** The thread's own turns (a task: its child thread's). */
  readonly own: UsageTotals;
  /** The thread and every thread below it: children, grandchildren…, across providers. */
  readonly subtree: UsageTotals;
}

/** A budget as results show it: its limits, what its tree used, and what is left. */
export interface BudgetView {
  readonly scope: "delegated_task" | "root_thread";
  readonly budgetId: string;
  /** The thread at the top of the tree it covers. */
  readonly threadId: string;
  readonly taskId: string | null;
  readonly limits: BudgetLimits;
  readonly used: { readonly tokens: number; readonly costUsd: number; readonly wallClockMs: number | null };
  readonly remaining: BudgetLimits;
  readonly origin: BudgetRecord["origin"];
  /** Set once the budget was reached and its tree stopped. */
  readonly exceeded: BudgetExceeded | null;
}

/** Why a task was stopped by a budget: its own, or one above it. */
export interface BudgetStopView {
  readonly budgetId: string;
  readonly scope: "delegated_task" | "root_thread";
  readonly limit: BudgetLimitName;
  readonly used: number;
  readonly allowed: number;
  readonly at: string;
  /** The task whose budget it was (null for a root thread's). */
  readonly taskId: string | null;
}

/** What the HTTP API's usage endpoint answers: one thread's tree, one project's, or every project the caller may see. */
export type UsageSummary =
  | ({ readonly scope: "thread"; readonly threadId: string; readonly budgets: BudgetView[] } & TreeUsage)
  | {
      readonly scope: "project";
      readonly projectId: string;
      readonly total: UsageTotals;
      readonly rootThreads: ({ readonly threadId: string; readonly title: string } & TreeUsage)[];
    }
  | {
      readonly scope: "all";
      readonly total: UsageTotals;
      readonly projects: { readonly projectId: string; readonly name: string; readonly total: UsageTotals }[];
    };

/**
 * Usage and budgets for every transport: a thread's, a run's or a task's usage (own and whole
 * tree, live at turn granularity: a turn adds its usage when it ends), a project's totals, and
 * the budgets in force. Unknown usage is reported as unknown, never as zero.
 */
@injectable()
export class UsageService {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(ConfigToken) private readonly config: SwitchyardConfig,
    private readonly budgets: TreeBudgets,
  ) {}

  /** A thread's own usage and its whole tree's. */
  async thread(threadId: string): Promise<TreeUsage> {
    await this.requireThread(threadId);
    return this.treeOf(threadId);
  }

  /** One run's usage (all its attempts). */
  async run(runId: string): Promise<UsageTotals> {
    if ((await this.engine.reader.get("run", runId)) === null)
      throw new OrchestratorFailure("run_not_found", `Run ${runId} does not exist.`, { runId });
    return usageTotals(this.engine.reader, { kind: "run", runId });
  }

  /** A delegated task's usage: its child thread's own, and everything below it. */
  async task(taskId: string): Promise<TreeUsage> {
    return this.treeOf((await this.requireTask(taskId)).childThreadId);
  }

  /** A task's own budget, or null when it has none. */
  async taskBudget(taskId: string): Promise<BudgetView | null> {
    const scope = await taskScope(this.engine.reader, taskId);
    return scope === null ? null : await this.viewOf(scope);
  }

  /** Every budget covering a thread's work (its task's, the tasks' above, the root thread's), innermost first. */
  async budgetsOf(threadId: string): Promise<BudgetView[]> {
    const views: BudgetView[] = [];
    for (const scope of await this.budgets.scopesOf(this.engine.reader, threadId)) views.push(await this.viewOf(scope));
    return views;
  }

  /**
   * The budget that stopped a task, when one did. A task whose turn completed in the very
   * transaction that reached the budget (the one that spent it) carries the stop's reason, but
   * was not stopped: its result is whole.
   */
  async budgetStopOf(task: DelegatedTaskRecord): Promise<BudgetStopView | null> {
    if (task.status === "completed" || !isBudgetStopReason(task.cancelReason)) return null;
    for (const scope of await this.budgets.scopesOf(this.engine.reader, task.childThreadId)) {
      const exceeded = scope.record?.exceeded ?? null;
      if (exceeded !== null)
        return {
          budgetId: scope.id,
          scope: scope.kind,
          limit: exceeded.limit,
          used: exceeded.used,
          allowed: exceeded.allowed,
          at: exceeded.at,
          taskId: scope.taskId,
        };
    }
    return null;
  }

  /** A project's totals, and each of its root threads' trees. */
  async project(projectId: string): Promise<Extract<UsageSummary, { scope: "project" }>> {
    if ((await this.engine.reader.get("project", projectId)) === null)
      throw new OrchestratorFailure("invalid_request", `Project ${projectId} does not exist.`, { projectId });
    const roots = await this.engine.reader.select(
      "thread",
      "project_id = ? AND parent_thread_id IS NULL AND deleted = 0",
      [projectId],
      "ORDER BY created_at DESC",
    );
    const total = await usageTotals(this.engine.reader, { kind: "project", projectId });
    const rootThreads = [];
    for (const thread of roots)
      rootThreads.push({ threadId: thread.id, title: thread.title, ...(await this.treeOf(thread.id)) });
    return { scope: "project", projectId, total, rootThreads };
  }

  /**
   * The HTTP API's usage answer: a thread's (with its budgets), a project's, or, with neither,
   * every project in `visibleProjects` ("*": all of them).
   */
  async summary(
    input: { readonly projectId?: string | undefined; readonly threadId?: string | undefined },
    visibleProjects: readonly string[] | "*" = "*",
  ): Promise<UsageSummary> {
    if (input.threadId !== undefined) {
      const thread = await this.requireThread(input.threadId);
      if (input.projectId !== undefined && thread.projectId !== input.projectId) {
        throw new OrchestratorFailure(
          "invalid_request",
          `Thread ${input.threadId} is not in project ${input.projectId}.`,
          { threadId: input.threadId, projectId: input.projectId },
        );
      }
      return {
        scope: "thread",
        threadId: thread.id,
        ...(await this.treeOf(thread.id)),
        budgets: await this.budgetsOf(thread.id),
      };
    }
    if (input.projectId !== undefined) return this.project(input.projectId);
    const visible = new Set(visibleProjects === "*" ? [] : visibleProjects);
    const projects = (await this.engine.reader.select("project", "1 = 1", [], "ORDER BY created_at")).filter(
      (project) => visibleProjects === "*" || visible.has(project.id),
    );
    const total = await usageTotals(this.engine.reader, {
      kind: "projects",
      projectIds: projects.map((project) => project.id),
    });
    const perProject = [];
    for (const project of projects)
      perProject.push({
        projectId: project.id,
        name: project.name,
        total: await usageTotals(this.engine.reader, { kind: "project", projectId: project.id }),
      });
    return { scope: "all", total, projects: perProject };
  }

  /** The budgets in force: the config's, and those covering a thread (the caller's). */
  async inForce(threadId: string | null) {
    const configured = this.budgets.configured;
    return {
      rootThread: configured.rootThread,
      delegatedTask: configured.delegatedTask,
      perTaskBudget: true as const,
      covering: threadId === null ? [] : await this.budgetsOf(threadId),
      pricing: {
        defaultsAsOf: this.config.pricing.useDefaults ? DEFAULT_PRICES_AS_OF : null,
        configAsOf: this.config.pricing.asOf ?? null,
        configuredModels:
          Object.keys(this.config.pricing.models).length +
          Object.values(this.config.pricing.providers).reduce((n, models) => n + Object.keys(models).length, 0),
      },
    };
  }

  private async treeOf(threadId: string): Promise<TreeUsage> {
    const isRoot = (await this.engine.reader.get("thread", threadId))?.lineage.parentThreadId === null;
    const own = await usageTotals(this.engine.reader, { kind: "thread", threadId });
    // Most delegated children delegate nothing themselves: their tree is the thread alone, so
    // the recursive sums (every delegate_task answer reads them) would only repeat `own`.
    if (!isRoot && !(await this.hasChildThreads(threadId))) return { own, subtree: own };
    return {
      own,
      subtree: await usageTotals(
        this.engine.reader,
        isRoot ? { kind: "tree", rootThreadId: threadId } : { kind: "subtree", threadId },
      ),
    };
  }

  private async hasChildThreads(threadId: string): Promise<boolean> {
    return new ThreadsTable(this.engine.store).hasChildren(threadId);
  }

  private async viewOf(scope: BudgetScope): Promise<BudgetView> {
    const use = await scopeUse(this.engine.reader, scope, this.engine.clock.nowMs());
    return {
      scope: scope.kind,
      budgetId: scope.id,
      threadId: scope.threadId,
      taskId: scope.taskId,
      limits: scope.limits,
      used: { tokens: use.tokens, costUsd: Math.round(use.costUsd * 1e8) / 1e8, wallClockMs: use.wallClockMs },
      remaining: remainingOf(scope, use),
      origin: scope.origin,
      exceeded: scope.record?.exceeded ?? null,
    };
  }

  private async requireThread(threadId: string) {
    const thread = await this.engine.reader.get("thread", threadId);
    if (thread === null || thread.deletedAt !== null)
      throw new OrchestratorFailure("thread_not_found", `Thread ${threadId} does not exist.`, { threadId });
    return thread;
  }

  private async requireTask(taskId: string): Promise<DelegatedTaskRecord> {
    const task = await this.engine.reader.get("delegatedTask", taskId);
    if (task === null) throw new OrchestratorFailure("task_not_found", `Task ${taskId} does not exist.`, { taskId });
    return task;
  }
}
