import { inject, injectable } from "tsyringe";
import type { CommandContext } from "../../engine/command-context.js";
import type { EngineReaction } from "../../engine/engine-reaction.js";
import { deliverMessage } from "../../engine/message-delivery.js";
import { finishRun, latestExecutedRun, putItem, queuedRuns } from "../../engine/run-lifecycle.js";
import { type ProviderCatalog, ProviderCatalogToken } from "../../engine/provider-catalog.js";
import type { ContextTransferRecord, RunRecord, ThreadRecord } from "../../store/records.js";
import { resultText } from "../../engine/task-work.js";
import { threadLink } from "../thread-views.js";
import {
  childRunOfMessage,
  childTurnMessageId,
  childTurnTransferId,
  routerChildItemId,
} from "./router-child-lineage.js";

const MAX_RESULT_IN_MESSAGE = 4_000;

/**
 * Delivers each finished turn of a router child (`lineage.reportBack`) to its parent as a
 * message, exactly once, also across a crash and restart. An engine reaction: it runs inside the
 * transaction that ended the child's run, so the turn's end, the durable record of what the
 * parent is owed (a `subagent_result` context transfer whose id is derived from the child's run)
 * and the delivery commit together or not at all.
 *
 * The parent is never woken against its will, by the same rule as delegated-task results: not
 * while it is stopped, and not after its latest run was stopped or interrupted on request. Then
 * the transfer stays `pending`, and it is delivered when the parent's next run (started for
 * another reason) ends; a delivery already queued behind a run that is interrupted on request is
 * withdrawn and becomes pending again.
 */
@injectable()
export class RouterChildResults implements EngineReaction {
  readonly name = "router-child-results";

  constructor(@inject(ProviderCatalogToken) private readonly registry: ProviderCatalog) {}

  async onRunTerminal(ctx: CommandContext, run: RunRecord): Promise<void> {
    // As a parent: deliveries queued behind a run stopped on request are withdrawn; what is owed
    // is delivered once the parent takes automatic turns again.
    if (run.interruptedOnRequest === true) await this.withdrawQueuedDeliveries(ctx, run.threadId);
    await this.deliverPending(ctx, run.threadId);
    // As a child: this finished turn is owed to the parent.
    await this.recordFinishedTurn(ctx, run);
  }

  private async recordFinishedTurn(ctx: CommandContext, run: RunRecord): Promise<void> {
    const child = await ctx.get("thread", run.threadId);
    if (child === null || child.lineage.reportBack !== true || child.lineage.parentThreadId === null) return;
    // A run that never reached its provider (cancelled in the queue) is no turn.
    if (run.startedAt === null) return;
    const transferId = childTurnTransferId(run.id);
    if ((await ctx.get("contextTransfer", transferId)) !== null) return;
    const transfer = ctx.put("contextTransfer", {
      id: transferId,
      kind: "subagent_result",
      sourceThreadId: child.id,
      targetThreadId: child.lineage.parentThreadId,
      strategy: "result",
      status: "pending",
      content: resultText(run.summary?.trim() ?? "", run.error, run.status),
      delegatedTaskId: null,
      createdAt: ctx.now,
      consumedAt: null,
    });
    const item = await ctx.get("item", routerChildItemId(child.id));
    if (item !== null) {
      await putItem(ctx, {
        ...item,
        status: run.status === "completed" ? "completed" : run.status === "failed" ? "failed" : "cancelled",
        data: {
          ...withoutError(item.data),
          status: run.status,
          latestRunId: run.id,
          summary: clip(transfer.content, 1_000),
          // Why the turn failed (a capacity or quota limit, a provider error); gone once one does not.
          ...(run.status === "failed" && run.error !== null ? { error: run.error } : {}),
        },
      });
    }
    const parent = await ctx.get("thread", child.lineage.parentThreadId);
    if (parent !== null && (await acceptsAutomaticTurn(ctx, parent)))
      await this.deliver(ctx, parent, child, transfer, run);
  }

  /** Delivers every pending finished child turn owed to `parentThreadId`, oldest first. */
  private async deliverPending(ctx: CommandContext, parentThreadId: string): Promise<void> {
    const parent = await ctx.get("thread", parentThreadId);
    if (parent === null || !(await acceptsAutomaticTurn(ctx, parent))) return;
    const owed = (
      await ctx.select(
        "contextTransfer",
        "target_thread_id = ? AND kind = 'subagent_result' AND delegated_task_id IS NULL",
        [parentThreadId],
        "ORDER BY rowid",
      )
    ).filter((transfer) => transfer.status === "pending" && transfer.id.startsWith("transfer:child-turn:"));
    for (const transfer of owed) {
      const runId = transfer.id.slice("transfer:child-turn:".length);
      const run = await ctx.get("run", runId);
      const child = await ctx.get("thread", transfer.sourceThreadId);
      if (run !== null && child !== null) await this.deliver(ctx, parent, child, transfer, run);
    }
  }

  private async deliver(
    ctx: CommandContext,
    parent: ThreadRecord,
    child: ThreadRecord,
    transfer: ContextTransferRecord,
    run: RunRecord,
  ): Promise<void> {
    const text = [
      `Child thread "${child.title}" (${threadLink(await ctx.environmentId(), child.id)}) finished a turn with status ${run.status}.`,
      "",
      "Result:",
      transfer.content === "" ? "(no text)" : clip(transfer.content, MAX_RESULT_IN_MESSAGE),
      "",
      `Reply to it with t3_thread_send (threadId ${child.id}); read more with t3_thread_read.`,
    ].join("\n");
    await deliverMessage(ctx, {
      threadId: parent.id,
      messageId: childTurnMessageId(run.id),
      text,
      mode: "queue",
      createdBy: "system",
      creationSource: "system",
      kind: "notification",
      details: {
        origin: "router_child",
        childThreadId: child.id,
        childRunId: run.id,
        resultContextTransferId: transfer.id,
      },
      capabilities: this.registry.capabilities(parent.providerInstanceId),
    });
    ctx.put("contextTransfer", {
      ...(await ctx.require("contextTransfer", transfer.id)),
      status: "consumed",
      consumedAt: ctx.now,
    });
  }

  /** Deliveries still queued in a thread whose run was stopped on request go back to pending. */
  private async withdrawQueuedDeliveries(ctx: CommandContext, parentThreadId: string): Promise<void> {
    for (const queued of await queuedRuns(ctx, parentThreadId)) {
      const childRunId = queued.kind === "notification" ? childRunOfMessage(queued.messageId) : null;
      if (childRunId === null) continue;
      const transfer = await ctx.get("contextTransfer", childTurnTransferId(childRunId));
      if (transfer !== null && transfer.status === "consumed")
        ctx.put("contextTransfer", { ...transfer, status: "pending", consumedAt: null });
      await finishRun(ctx, queued.id, "cancelled", null, "parent_stopped");
    }
  }
}

function clip(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}

/** Whether the system may start a turn in the parent on its own (see the class comment). */
async function acceptsAutomaticTurn(ctx: CommandContext, thread: ThreadRecord): Promise<boolean> {
  if (thread.deletedAt !== null || thread.stopped) return false;
  return (await latestExecutedRun(ctx, thread.id))?.interruptedOnRequest !== true;
}

/** An item's data without the previous turn's failure. */
function withoutError(data: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { error: _previous, ...rest } = data;
  return rest;
}
