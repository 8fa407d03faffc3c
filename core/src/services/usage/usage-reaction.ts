import { inject, injectable } from "tsyringe";
import { TOKENS } from "../../di/tokens.js";
import type { SwitchyardConfig } from "../../config/config-schema.js";
import type { CommandContext } from "../../engine/command-context.js";
import type { EngineReaction } from "../../engine/engine-reaction.js";
import type { TurnUsageReport } from "../../spec/index.js";
import type { AttemptRecord } from "../../store/records.js";
import { PriceTable } from "./price-table.js";
import { TreeBudgets } from "./tree-budgets.js";
import { turnUsageRecord } from "./turn-usage.js";

/**
 * When a provider turn ends: its usage record (in the transaction that ends the turn, so a
 * crash cannot lose or double it), then the budgets around it, which stop a tree that used its
 * budget up. A turn that reported no usage gets no record: its usage stays unknown.
 */
@injectable()
export class UsageReaction implements EngineReaction {
  readonly name = "usage";
  private readonly prices: PriceTable;

  constructor(
    @inject(TOKENS.Config) config: SwitchyardConfig,
    private readonly budgets: TreeBudgets,
  ) {
    this.prices = new PriceTable(config.pricing);
  }

  onTurnEnded(ctx: CommandContext, attempt: AttemptRecord, usage: TurnUsageReport | null): void {
    if (usage !== null) this.record(ctx, attempt, usage);
    this.budgets.enforceAround(ctx, attempt.threadId);
  }

  private record(ctx: CommandContext, attempt: AttemptRecord, usage: TurnUsageReport): void {
    const thread = ctx.get("thread", attempt.threadId);
    if (thread === null) return;
    const run = ctx.get("run", attempt.runId);
    const session = attempt.providerSessionId === null ? null : ctx.get("providerSession", attempt.providerSessionId);
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
    if (record !== null) ctx.put("turnUsage", record);
  }
}
