import { inject, injectable } from "tsyringe";
import type { CommandContext } from "../../engine/command-context.js";
import type { EngineReaction } from "../../engine/engine-reaction.js";
import { deliverMessage, stoppedForMessage } from "../../engine/message-delivery.js";
import { type ProviderCatalog, ProviderCatalogToken } from "../../engine/provider-catalog.js";
import { activeRun, finishRun, queuedRuns } from "../../engine/run-lifecycle.js";
import type { RunRecord, ThreadRecord } from "../../store/records.js";
import { type ReachRemoteTaskRow, ReachRemoteTasksTable } from "../../store/tables/reach-remote-tasks.js";
import {
  acceptsAutomaticTurn,
  remoteResultKey,
  remoteResultMessageId,
  type RemoteTaskData,
} from "./remote-task-rows.js";

const MAX_RESULT_IN_WAKE = 4_000;

/**
 * Hands a parent the remote results owed to it: at once when it takes automatic turns, else when
 * its next run ends (an engine reaction, inside that run's transaction). It reads no engine, so
 * the engine can be built with it.
 */
@injectable()
export class RemoteTaskResults implements EngineReaction {
  readonly name = "remote-task-results";

  constructor(@inject(ProviderCatalogToken) private readonly registry: ProviderCatalog) {}

  async onRunTerminal(ctx: CommandContext, run: RunRecord): Promise<void> {
    await this.onParentRunTerminal(ctx, run);
  }

  /** Delivers what is owed to a parent whose run just ended, and withdraws it from one stopped on request. */
  async onParentRunTerminal(ctx: CommandContext, run: RunRecord): Promise<void> {
    if (run.interruptedOnRequest === true) await this.withdrawQueued(ctx, run.threadId);
    const parent = await ctx.get("thread", run.threadId);
    // A result that was pending when a stop-and-queue-ahead send stopped this run survives the
    // stop and runs before that message (seed 000), as a local one does: even when a reaction
    // before this one already started a local result's turn, it is queued ahead of the message.
    const aheadOfQueuedMessages = stoppedForMessage(run);
    if (parent === null || !(await acceptsAutomaticTurn(ctx, parent))) return;
    if ((await activeRun(ctx, parent.id)) !== null && !aheadOfQueuedMessages) return;
    const owed = await ctx.table(ReachRemoteTasksTable).receivedUndelivered(parent.id);
    for (const row of owed)
      if ((JSON.parse(row.data) as RemoteTaskData).delivery === "pending")
        await this.deliver(ctx, parent, row, aheadOfQueuedMessages);
  }

  async deliver(
    ctx: CommandContext,
    parent: ThreadRecord,
    row: ReachRemoteTaskRow,
    aheadOfQueuedMessages = false,
  ): Promise<void> {
    const data = JSON.parse(row.data) as RemoteTaskData;
    const summary = data.summary ?? "";
    const text = [
      `Delegated task "${data.title}" (${data.childThreadLink}, on environment ${row.link_name}) finished with status ${data.status}.`,
      "",
      "Result:",
      summary === ""
        ? "(no text)"
        : summary.length > MAX_RESULT_IN_WAKE
          ? `${summary.slice(0, MAX_RESULT_IN_WAKE)}…`
          : summary,
      "",
      `Call task_status with taskId ${row.remote_task_id} for details.`,
    ].join("\n");
    await deliverMessage(ctx, {
      threadId: parent.id,
      messageId: remoteResultMessageId(row.link_name, row.remote_task_id),
      text,
      mode: "queue",
      createdBy: "system",
      creationSource: "system",
      kind: "notification",
      // Marks the run as a result delivery, so a later stop-and-queue-ahead send queues behind it.
      deliversResultOf: remoteResultKey(row.link_name, row.remote_task_id),
      aheadOfQueuedMessages,
      details: {
        origin: "remote_task",
        environment: row.link_name,
        environmentId: data.environmentId,
        taskId: row.remote_task_id,
        childThreadLink: data.childThreadLink,
      },
      capabilities: this.registry.capabilities(parent.providerInstanceId),
    });
    await this.write(ctx, row, { ...data, delivery: "delivered" }, { deliveredAt: ctx.nowMs });
  }

  /** A delivery still queued in a parent stopped on request goes back to pending, for its next run. */
  private async withdrawQueued(ctx: CommandContext, parentThreadId: string): Promise<void> {
    for (const queued of await queuedRuns(ctx, parentThreadId)) {
      if (queued.kind !== "notification" || !queued.messageId.startsWith("message:remote-task-result:")) continue;
      const row = (await ctx.table(ReachRemoteTasksTable).ofParent(parentThreadId)).find(
        (candidate) => remoteResultMessageId(candidate.link_name, candidate.remote_task_id) === queued.messageId,
      );
      if (row !== undefined)
        await this.write(
          ctx,
          row,
          { ...(JSON.parse(row.data) as RemoteTaskData), delivery: "pending" },
          { deliveredAt: null },
        );
      await finishRun(ctx, queued.id, "cancelled", null, "parent_stopped");
    }
  }

  async write(
    ctx: CommandContext,
    row: ReachRemoteTaskRow,
    data: RemoteTaskData,
    stamps: { receivedAt?: number; deliveredAt?: number | null } = {},
  ): Promise<void> {
    await ctx.table(ReachRemoteTasksTable).update({ linkName: row.link_name, remoteTaskId: row.remote_task_id }, data, {
      receivedAt: stamps.receivedAt ?? row.received_at,
      deliveredAt: stamps.deliveredAt !== undefined ? stamps.deliveredAt : row.delivered_at,
    });
  }
}
