import type { CommandContext } from "./command-context.js";
import { activeRun, finishRun, queuedRuns, requestInterrupt } from "./run-lifecycle.js";
import { taskWork } from "./task-work.js";

/** How a task tree is stopped. */
export interface TaskStopOptions {
  /**
   * `task_cancel` disposes the automatic delivery of the stopped task's result to its parent
   * (the parent asked for the stop); a budget stop keeps it, so the parent gets the partial
   * result. Nested tasks' deliveries are disposed either way: their parents are stopped too.
   */
  readonly disposeDelivery: boolean;
}

/**
 * Stops a task's child thread and, first, every task it delegated (depth first). The task is
 * marked cancelled before its queued turns are, so a result it settles on now already counts
 * as cancelled (a completed final turn settles as interrupted).
 */
export async function stopTaskTree(
  ctx: CommandContext,
  taskId: string,
  reason: string,
  options: TaskStopOptions,
): Promise<void> {
  const task = await ctx.require("delegatedTask", taskId);
  for (const nested of await ctx.select("delegatedTask", "parent_thread_id = ?", [task.childThreadId]))
    await stopTaskTree(ctx, nested.id, reason, { disposeDelivery: true });
  const marked = await ctx.require("delegatedTask", taskId);
  if (marked.cancelRequestedAt === null) {
    const delivery = options.disposeDelivery && marked.delivery === "pending" ? "disposed" : marked.delivery;
    ctx.put("delegatedTask", {
      ...marked,
      cancelRequestedAt: ctx.now,
      cancelReason: reason,
      delivery,
      updatedAt: ctx.now,
    });
  }
  await stopThread(ctx, task.childThreadId, reason);
  // The task's own queued turns (its original run, follow-ups of its work) are cancelled, even
  // though Stop held them; other queued turns of the child stay held for Resume.
  for (const run of (await taskWork(ctx, task)).queued) await finishRun(ctx, run.id, "cancelled", null, reason);
}

/**
 * Stop, like the user's Stop button: interrupts the running turn (hard), holds queued turns
 * until Resume or the next explicit send, and marks the thread stopped. The processes its
 * harness started are frozen as this commits and ended right after; once the stopped thread's
 * turn has ended, the host closes its provider session, so its harness process ends too.
 */
export async function stopThread(ctx: CommandContext, threadId: string, reason: string): Promise<void> {
  // Stopped and held first: a turn that ends at once (it never reached its provider) must not
  // hand the thread to the next queued run.
  ctx.put("thread", { ...(await ctx.require("thread", threadId)), stopped: true, updatedAt: ctx.now });
  for (const run of await queuedRuns(ctx, threadId)) if (!run.held) ctx.put("run", { ...run, held: true });
  const active = await activeRun(ctx, threadId);
  if (active !== null) await requestInterrupt(ctx, active.id, reason, true);
  // What its harness started (tools, shells, background loops) is frozen before this commits
  // and ended after: nothing of the stopped thread calls a model once the stop is recorded.
  for (const hook of ctx.hooks.threadStopped) await hook(ctx, threadId);
}
