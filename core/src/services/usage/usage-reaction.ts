import { inject, injectable } from "tsyringe";
import { type SwitchyardConfig, ConfigToken } from "../../config/config-schema.js";
import type { CommandContext } from "../../engine/command-context.js";
import type { EngineReaction } from "../../engine/engine-reaction.js";
import type { TurnUsageReport } from "../../spec/index.js";
import type { AttemptRecord } from "../../store/records.js";
import { TurnUsageTable } from "../../store/tables/turn-usage.js";
import { rootTotalKey, totalKeyOf, type BudgetScope } from "./budget-scopes.js";
import { addToTotals } from "./budget-totals.js";
import { PriceTable } from "./price-table.js";
import { TreeBudgets } from "./tree-budgets.js";
import { turnUsageRecord } from "./turn-usage.js";

/**
 * When a provider turn ends: its usage record (in the transaction that ends the turn, so a
 * crash cannot lose or double it) and the running totals of the budget scopes around it (in
 * the same transaction), then the budgets around it, which stop a tree that used its budget
 * up. A turn that reported no usage gets no record: its usage stays unknown.
 */
@injectable()
export class UsageReaction implements EngineReaction {
  readonly name = "usage";
  private readonly prices: PriceTable;

  constructor(
    @inject(ConfigToken) config: SwitchyardConfig,
    private readonly budgets: TreeBudgets,
  ) {
    this.prices = new PriceTable(config.pricing);
  }

  async onTurnEnded(ctx: CommandContext, attempt: AttemptRecord, usage: TurnUsageReport | null): Promise<void> {
    const scopes = await this.budgets.scopesOf(ctx, attempt.threadId);
    if (usage !== null) await this.record(ctx, attempt, usage, scopes);
    for (const scope of scopes) await this.budgets.enforce(ctx, scope);
  }

  private async record(
    ctx: CommandContext,
    attempt: AttemptRecord,
    usage: TurnUsageReport,
    scopes: readonly BudgetScope[],
  ): Promise<void> {
    const thread = await ctx.get("thread", attempt.threadId);
    if (thread === null) return;
    const run = await ctx.get("run", attempt.runId);
    const session =
      attempt.providerSessionId === null ? null : await ctx.get("providerSession", attempt.providerSessionId);
    const record = turnUsageRecord(
      {
        attempt,
        rootThreadId: thread.lineage.rootThreadId,
        providerInstanceId: session?.providerInstanceId ?? thread.providerInstanceId,
        model: run?.model ?? thread.model,
        now: ctx.now,
      },
      usage,
      this.prices,
    );
    if (record === null) return;
    // A late terminal can report a turn again: the totals take the difference, never both.
    const previous = await ctx.table(TurnUsageTable).figuresOf(record.id);
    ctx.put("turnUsage", record);
    // The root's total is kept whether or not a root budget is configured now, so one set
    // later (a config change and a restart) starts from the whole tree, not from then.
    const keys = [
      rootTotalKey(thread.lineage.rootThreadId),
      ...scopes.filter((scope) => scope.kind === "delegated_task").map(totalKeyOf),
    ];
    await addToTotals(ctx, keys, {
      tokens: record.totalTokens - (previous?.total_tokens ?? 0),
      costUsd: (record.costUsd ?? 0) - (previous?.cost_usd ?? 0),
    });
  }
}
