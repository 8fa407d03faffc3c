import { inject, injectable } from "tsyringe";
import type { CommandContext } from "../../engine/command-context.js";
import type { EngineReaction } from "../../engine/engine-reaction.js";
import { deliverMessage, stoppedForMessage } from "../../engine/message-delivery.js";
import { activeRun, finishRun, latestExecutedRun, queuedRuns } from "../../engine/run-lifecycle.js";
import { type ProviderCatalog, ProviderCatalogToken } from "../../engine/provider-catalog.js";
import type { DelegatedTaskRecord, RunRecord, RuntimeRequestRecord } from "../../store/records.js";
import { derive } from "../../util/ids.js";
import { LiveWaits } from "../live-waits.js";
import { isBudgetStopReason } from "../usage/tree-budgets.js";
import { threadLink } from "../thread-views.js";
import { finalWorkTurn, hasRemainingWork, latestContent, resultText, taskWork } from "../../engine/task-work.js";

const MAX_RESULT_IN_WAKE = 4_000;

/**
 * The delegation saga: what happens to delegated tasks when a run ends or a runtime request
 * changes, inside the transaction of that change, so each step happens exactly once, also
 * across restarts. It publishes a task's result once all its known work has finished, delivers
 * results and questions to the parent (or withdraws them from a parent that was stopped), and
 * records the results of later turns of a child. The composition root hands it to the engine
 * (`EngineReactionsToken`); `DelegatedTaskService` only takes commands.
 */
@injectable()
export class DelegationSaga implements EngineReaction {
  readonly name = "delegation";

  constructor(
    @inject(ProviderCatalogToken) private readonly registry: ProviderCatalog,
    /** Whether a parent is blocked in a `delegate_task` wait right now: a question reaches it there. */
    private readonly liveWaits: LiveWaits,
  ) {}

  async onRunTerminal(ctx: CommandContext, run: RunRecord): Promise<void> {
    // Stop or interrupt: the notices waiting to start a turn after this one are withdrawn, so the
    // parent is not woken; their results and questions are caught up when it next runs.
    if (run.interruptedOnRequest === true) await this.withdrawQueuedNotices(ctx, run.threadId);
    // First the results and questions this thread is owed: delivering one to a child thread adds
    // known work to that child's own task, which must be seen before the task is settled.
    // A result that was pending when a stop-and-queue-ahead send stopped this run survives the
    // stop and runs before that message (seed 000), as one already queued does.
    await this.deliverPendingToParent(ctx, run.threadId, stoppedForMessage(run));
    if (run.delegatedTaskId !== null && (await ctx.get("delegatedTask", run.delegatedTaskId)) !== null)
      await this.settle(ctx, run.delegatedTaskId);
    await this.recordFollowUpResult(ctx, run);
  }

  /**
   * Publishes a task's result once all its known work has finished (see task-work.ts): the final
   * work turn's status and latest assistant content. The result transfer's deterministic id makes
   * this idempotent; a published result never changes.
   */
  private async settle(ctx: CommandContext, taskId: string): Promise<void> {
    const task = await ctx.require("delegatedTask", taskId);
    if (task.finalizedAt !== null || (await ctx.get("contextTransfer", derive.resultTransfer(taskId))) !== null) return;
    const work = await taskWork(ctx, task);
    if (hasRemainingWork(work)) return;
    const resultRun = finalWorkTurn(work)!;
    const status =
      task.cancelRequestedAt !== null && resultRun.status === "completed" ? "interrupted" : resultRun.status;
    const summary = resultText(latestContent(work, resultRun), resultRun.error, status);
    const transferId = derive.resultTransfer(taskId);
    ctx.put("contextTransfer", {
      id: transferId,
      kind: "subagent_result",
      sourceThreadId: task.childThreadId,
      targetThreadId: task.parentThreadId,
      strategy: "result",
      status: "consumed",
      content: summary,
      delegatedTaskId: taskId,
      createdAt: ctx.now,
      consumedAt: ctx.now,
    });
    const finalized = ctx.put("delegatedTask", {
      ...task,
      status,
      summary,
      resultContextTransferId: transferId,
      resultRunId: resultRun.id,
      finalizedAt: ctx.now,
      updatedAt: ctx.now,
    });
    const node = await ctx.get("node", task.childNodeId);
    if (node !== null) ctx.put("node", { ...node, status, updatedAt: ctx.now });
    const item = await ctx.get("item", task.parentItemId);
    if (item !== null) {
      ctx.put("item", {
        ...item,
        status: status === "completed" ? "completed" : status === "failed" ? "failed" : "cancelled",
        data: {
          ...item.data,
          status,
          summary: summary.length > 1_000 ? `${summary.slice(0, 1_000)}…` : summary,
          resultContextTransferId: transferId,
          // Why it failed, as the parent's row shows it (a capacity or quota limit, a provider error).
          ...(status === "failed" && resultRun.error !== null ? { error: resultRun.error } : {}),
        },
        updatedAt: ctx.now,
      });
    }
    // Delivered before the parent's own task is looked at: a result that starts a turn in a
    // child thread is more known work of that child's task.
    if (
      finalized.delivery === "pending" &&
      (await activeRun(ctx, task.parentThreadId)) === null &&
      (await acceptsAutomaticTurn(ctx, task.parentThreadId))
    )
      await this.deliverResult(ctx, finalized);
    const parentTaskId = (await ctx.get("thread", task.parentThreadId))?.lineage.delegatedTaskId ?? null;
    if (parentTaskId !== null && (await ctx.get("delegatedTask", parentTaskId)) !== null)
      await this.settle(ctx, parentTaskId);
  }

  /**
   * A later turn of a child thread that is not part of the task's known work (a follow-up sent
   * with t3_thread_send, a turn after the task was published) gets its own result transfer, which
   * latestTerminal* report; the published result stays as it is.
   */
  private async recordFollowUpResult(ctx: CommandContext, run: RunRecord): Promise<void> {
    const taskId = (await ctx.get("thread", run.threadId))?.lineage.delegatedTaskId ?? null;
    const task = taskId === null ? null : await ctx.get("delegatedTask", taskId);
    if (task === null || run.delegatedTaskId === task.id || run.startedAt === null) return;
    const original = await ctx.get("run", task.childRunId);
    if (original === null || run.ordinal <= original.ordinal) return;
    const id = derive.followUpResultTransfer(task.id, run.id);
    if ((await ctx.get("contextTransfer", id)) !== null) return;
    ctx.put("contextTransfer", {
      id,
      kind: "subagent_result",
      sourceThreadId: task.childThreadId,
      targetThreadId: task.parentThreadId,
      strategy: "result",
      status: "consumed",
      content: resultText(run.summary?.trim() ?? "", run.error, run.status),
      delegatedTaskId: task.id,
      createdAt: ctx.now,
      consumedAt: ctx.now,
    });
  }

  /** The unfinalized task a thread works for, whose known work a notice to it becomes. */
  private async openTaskOf(ctx: CommandContext, threadId: string): Promise<string | null> {
    const taskId = (await ctx.get("thread", threadId))?.lineage.delegatedTaskId ?? null;
    if (taskId === null) return null;
    const task = await ctx.get("delegatedTask", taskId);
    return task !== null && task.finalizedAt === null ? task.id : null;
  }

  /** Wakes an idle parent with a finished task's result (a queued notification message). */
  private async deliverResult(
    ctx: CommandContext,
    task: DelegatedTaskRecord,
    aheadOfQueuedMessages = false,
  ): Promise<void> {
    const parent = await ctx.get("thread", task.parentThreadId);
    if (parent === null || parent.deletedAt !== null) return;
    const summary =
      (task.summary ?? "").length > MAX_RESULT_IN_WAKE
        ? `${task.summary!.slice(0, MAX_RESULT_IN_WAKE)}…`
        : (task.summary ?? "");
    const text = [
      `Delegated task "${task.title}" (${threadLink(await ctx.environmentId(), task.childThreadId)}) finished with status ${task.status}${isBudgetStopReason(task.cancelReason) ? ` (stopped: ${task.cancelReason}; the result is partial)` : ""}.`,
      "",
      "Result:",
      summary === "" ? "(no text)" : summary,
      "",
      `Call task_status with taskId ${task.id} for details.`,
    ].join("\n");
    await deliverMessage(ctx, {
      threadId: parent.id,
      messageId: `message:task-result:${task.id}`,
      text,
      mode: "queue",
      createdBy: "system",
      creationSource: "system",
      kind: "notification",
      delegatedTaskId: await this.openTaskOf(ctx, parent.id),
      deliversResultOf: task.id,
      aheadOfQueuedMessages,
      capabilities: this.registry.capabilities(parent.providerInstanceId),
    });
    ctx.put("delegatedTask", {
      ...(await ctx.require("delegatedTask", task.id)),
      delivery: "delivered",
      updatedAt: ctx.now,
    });
  }

  /**
   * When a parent's run ends: deliver finished results and questions it has not seen. Results go
   * ahead of the queued messages when the run was stopped for one of them.
   */
  private async deliverPendingToParent(
    ctx: CommandContext,
    parentThreadId: string,
    resultsFirst = false,
  ): Promise<void> {
    if ((await activeRun(ctx, parentThreadId)) !== null || !(await acceptsAutomaticTurn(ctx, parentThreadId))) return;
    for (const task of await ctx.select("delegatedTask", "parent_thread_id = ?", [parentThreadId])) {
      if (task.finalizedAt !== null && task.delivery === "pending") await this.deliverResult(ctx, task, resultsFirst);
      if (task.finalizedAt !== null) continue;
      for (const request of await ctx.select("runtimeRequest", "thread_id = ? AND status = 'pending'", [
        task.childThreadId,
      ])) {
        if (request.kind === "user_input" && (request.parentNotice === null || request.parentNotice.mode === "wait"))
          await this.noticeParent(ctx, request, task, true);
      }
    }
  }

  /**
   * Withdraws the result and question notices queued to start turns in a thread whose run was
   * stopped or interrupted: they become pending again, for the thread's next run.
   */
  private async withdrawQueuedNotices(ctx: CommandContext, threadId: string): Promise<void> {
    for (const run of await queuedRuns(ctx, threadId)) {
      if (run.kind !== "notification") continue;
      if (run.deliversResultOf != null) {
        const task = await ctx.get("delegatedTask", run.deliversResultOf);
        // Not a task of this environment (a linked one's result): its owner withdraws it.
        if (task === null) continue;
        // A cancelled task's automatic delivery stays disposed.
        if (task.delivery === "delivered")
          ctx.put("delegatedTask", {
            ...task,
            delivery: task.cancelRequestedAt === null ? "pending" : "disposed",
            updatedAt: ctx.now,
          });
      } else if (run.notifiesRequestId !== null) {
        const request = await ctx.get("runtimeRequest", run.notifiesRequestId);
        if (request !== null && request.status === "pending")
          ctx.put("runtimeRequest", { ...request, parentNotice: null });
      } else {
        continue;
      }
      await finishRun(ctx, run.id, "cancelled", null, "parent_stopped");
    }
  }

  async onRuntimeRequestChanged(ctx: CommandContext, requestId: string): Promise<void> {
    const request = await ctx.get("runtimeRequest", requestId);
    if (request === null || request.kind !== "user_input") return; // approvals are not routed to parents
    const child = await ctx.get("thread", request.threadId);
    if (child === null || child.lineage.relationship !== "subagent" || child.lineage.delegatedTaskId === null) return;
    const task = await ctx.get("delegatedTask", child.lineage.delegatedTaskId);
    if (task === null) return;
    if (request.status === "pending") {
      if (request.parentNotice !== null) return;
      if (request.blocking && this.liveWaits.isWaitingOn("delegate_task", task.id)) {
        ctx.put("runtimeRequest", { ...request, parentNotice: { mode: "wait", runId: null } });
        return;
      }
      // A parent that was stopped or interrupted is not woken; the question is caught up when it
      // next runs (it stays without a notice until then).
      if (!(await acceptsAutomaticTurn(ctx, task.parentThreadId))) return;
      await this.noticeParent(ctx, request, task, false);
      return;
    }
    // Answered or dismissed before a queued notice started: the notice is moot.
    const notice = request.parentNotice;
    if (notice?.mode === "queued" && notice.runId !== null) {
      const run = await ctx.get("run", notice.runId);
      if (run !== null && run.status === "queued") await finishRun(ctx, run.id, "cancelled", null, "question_answered");
    }
  }

  /** Tells the parent about a child's question: steered into its live turn when it can, else queued. */
  private async noticeParent(
    ctx: CommandContext,
    request: RuntimeRequestRecord,
    task: DelegatedTaskRecord,
    afterParentRun: boolean,
  ): Promise<void> {
    const parent = await ctx.get("thread", task.parentThreadId);
    if (parent === null || parent.deletedAt !== null) return;
    const questions =
      request.request.kind === "user_input" ? request.request.questions.map((q) => q.question).join(" / ") : "";
    const state = request.blocking ? "is blocked until it gets an answer" : "is still working";
    const text = [
      `Sub-agent "${task.title}" (${threadLink(await ctx.environmentId(), task.childThreadId)}) asks: ${questions}`,
      `It ${state}. Answer with t3_pending_request (threadId ${task.childThreadId}, action "respond", requestId ${request.id}), or ask the user.`,
    ].join("\n");
    const delivery = await deliverMessage(ctx, {
      threadId: parent.id,
      messageId: `message:question:${request.id}${afterParentRun ? ":catch-up" : ""}`,
      text,
      mode: "auto",
      createdBy: "system",
      creationSource: "system",
      kind: "notification",
      notifiesRequestId: request.id,
      delegatedTaskId: await this.openTaskOf(ctx, parent.id),
      capabilities: this.registry.capabilities(parent.providerInstanceId),
    });
    const mode = delivery.delivery === "steered" ? "steered" : delivery.delivery === "started" ? "started" : "queued";
    ctx.put("runtimeRequest", {
      ...(await ctx.require("runtimeRequest", request.id)),
      parentNotice: { mode, runId: delivery.runId },
    });
  }
}

/**
 * Whether the system may start a turn in a thread on its own (a result wake, a question notice
 * or catch-up). Not after the user (or an agent, or task_cancel) stopped or interrupted its
 * latest run, and not while Stop holds it: the results stay readable with task_status and reach
 * the thread when it next runs for another reason.
 */
async function acceptsAutomaticTurn(ctx: CommandContext, threadId: string): Promise<boolean> {
  const thread = await ctx.get("thread", threadId);
  if (thread === null || thread.deletedAt !== null || thread.stopped) return false;
  // An attached thread's agent runs outside Switchyard: its results wait for its task_status.
  if (thread.lineage.relationship === "attached") return false;
  return (await latestExecutedRun(ctx, threadId))?.interruptedOnRequest !== true;
}
