import type { ProviderCapabilities } from "../../spec/index.js";
import type { CommandContext } from "../../engine/command-context.js";
import { deliverMessage } from "../../engine/message-delivery.js";
import { createThread } from "../../engine/thread-records.js";
import type { ProjectionReader } from "../../engine/run-lifecycle.js";
import {
  isTerminalRunStatus,
  type ScheduledTaskRecord,
  type ScheduledTriggerOutcome,
  type ScheduledTriggerReason,
  type ScheduledTriggerRecord,
} from "../../store/records.js";
import type { ProfiledFire, RefusedFire } from "./scheduled-profile.js";
import { recordProfileRootBudget } from "../usage/budget-scopes.js";

/** What is known about a trigger before it is decided. */
export type TriggerDraft = Omit<
  ScheduledTriggerRecord,
  "outcome" | "reason" | "detail" | "runId" | "threadId" | "createdAt"
>;

/** Ids derived from a trigger, so a retried trigger lands on the same rows. */
export const scheduledIds = {
  thread: (triggerId: string) => `thread:scheduled:${triggerId}`,
  message: (triggerId: string) => `message:scheduled:${triggerId}`,
};

/** The newest trigger of a task that started a run, or null. */
export async function lastStartedTrigger(
  reader: ProjectionReader,
  taskId: string,
): Promise<ScheduledTriggerRecord | null> {
  return (
    (
      await reader.select(
        "scheduledTrigger",
        "task_id = ? AND run_id IS NOT NULL",
        [taskId],
        "ORDER BY created_at DESC, rowid DESC LIMIT 1",
      )
    )[0] ?? null
  );
}

/** The newest interval or fixed-time trigger of a task (what its next occurrence counts from), or null. */
export async function lastTimedTrigger(
  reader: ProjectionReader,
  taskId: string,
): Promise<ScheduledTriggerRecord | null> {
  return (
    (
      await reader.select(
        "scheduledTrigger",
        "task_id = ? AND scheduled_for IS NOT NULL",
        [taskId],
        "ORDER BY scheduled_for DESC LIMIT 1",
      )
    )[0] ?? null
  );
}

/** Writes a decided trigger. */
export function recordTrigger(
  ctx: CommandContext,
  draft: TriggerDraft,
  decision: {
    outcome: ScheduledTriggerOutcome;
    reason?: ScheduledTriggerReason;
    detail?: string;
    runId?: string;
    threadId?: string;
  },
): ScheduledTriggerRecord {
  return ctx.put("scheduledTrigger", {
    ...draft,
    outcome: decision.outcome,
    reason: decision.reason ?? null,
    detail: decision.detail ?? null,
    runId: decision.runId ?? null,
    threadId: decision.threadId ?? null,
    createdAt: ctx.now,
  });
}

/** What the launch needs that is read outside the transaction (availability is asynchronous). */
export interface LaunchContext {
  /** Why the task's provider cannot run work now, or null. */
  readonly unavailable: string | null;
  /** The capabilities of the provider the run goes to. */
  readonly capabilities: ProviderCapabilities;
  /** The task's profile as this fire resolved it (or why it cannot run with it); null for a task without one. */
  readonly profile: ProfiledFire | RefusedFire | null;
}

function provenance(task: ScheduledTaskRecord, draft: TriggerDraft): string {
  const what =
    draft.kind === "webhook"
      ? "a webhook request"
      : `its ${draft.kind === "interval" ? "interval" : "fixed-time"} schedule (occurrence ${draft.scheduledFor}${draft.catchUp ? ", run late on catch-up" : ""})`;
  return `This message was sent by the Switchyard scheduled task "${task.title}" (${task.id}), triggered by ${what}; no person is waiting on this turn.`;
}

/**
 * Starts the run of a trigger, inside its command's transaction, or records why not: never
 * while the task's previous run is still queued or running (overlap, skipped and recorded);
 * a bound task posts into its thread, queued behind that thread's work (a stopped thread is
 * left alone); an unbound one launches a fresh thread in the task's project. The run links to
 * its task and trigger.
 */
export async function launchScheduledRun(
  ctx: CommandContext,
  task: ScheduledTaskRecord,
  draft: TriggerDraft,
  text: string,
  launch: LaunchContext,
): Promise<ScheduledTriggerRecord> {
  const previous = await lastStartedTrigger(ctx, task.id);
  const previousRun = previous?.runId ? await ctx.get("run", previous.runId) : null;
  if (previousRun !== null && !isTerminalRunStatus(previousRun.status)) {
    return recordTrigger(ctx, draft, {
      outcome: "skipped",
      reason: "overlap",
      detail: `The task's previous run ${previousRun.id} is still ${previousRun.status}; triggers never stack.`,
    });
  }
  // Never a silent fallback to no profile: a fire its profile refuses fails, saying why.
  const profile = launch.profile;
  if (profile !== null && !profile.ok)
    return recordTrigger(ctx, draft, { outcome: "failed", reason: profile.reason, detail: profile.detail });
  if (launch.unavailable !== null)
    return recordTrigger(ctx, draft, { outcome: "failed", reason: "provider_unavailable", detail: launch.unavailable });
  const common = {
    text,
    createdBy: "system" as const,
    creationSource: "scheduler" as const,
    // The profile's instructions first, as a thread started with it gets them with its first prompt.
    instructions: [profile?.instructions ?? null, provenance(task, draft)].filter((part) => part !== null).join("\n\n"),
    capabilities: launch.capabilities,
    messageId: scheduledIds.message(draft.id),
  };
  let threadId: string;
  let runId: string;
  if (task.boundThreadId !== null) {
    // schedule_task refuses a profile on a bound task (the thread keeps its own settings).
    const thread = await ctx.get("thread", task.boundThreadId);
    if (thread === null || thread.deletedAt !== null) {
      return recordTrigger(ctx, draft, {
        outcome: "failed",
        reason: "thread_not_found",
        detail: `The bound thread ${task.boundThreadId} no longer exists; rebind the task or unbind it (bindToCurrentThread: false).`,
      });
    }
    if (thread.stopped) {
      return recordTrigger(ctx, draft, {
        outcome: "skipped",
        reason: "thread_stopped",
        detail: `The bound thread ${thread.id} is stopped; a schedule does not resume it (send to it, or resume it, first).`,
        threadId: thread.id,
      });
    }
    threadId = thread.id;
    runId = (
      await deliverMessage(ctx, {
        ...common,
        threadId,
        mode: "queue",
        model: task.model,
        runtimeMode: task.runtimeMode,
        interactionMode: task.interactionMode,
      })
    ).runId;
  } else {
    const project = await ctx.get("project", task.projectId);
    if (project === null) {
      return recordTrigger(ctx, draft, {
        outcome: "failed",
        reason: "project_not_found",
        detail: `The task's project ${task.projectId} was removed; delete the task or schedule it in another project.`,
      });
    }
    // A profiled task's run goes where its profile, resolved at this fire, sends it.
    const selection = profile?.selection ?? {
      providerInstanceId: task.providerInstanceId,
      model: task.model,
      effort: task.effort ?? null,
      runtimeMode: task.runtimeMode,
      interactionMode: task.interactionMode,
    };
    const thread = await createThread(
      ctx,
      {
        id: scheduledIds.thread(draft.id),
        projectId: project.id,
        title: task.title,
        providerInstanceId: selection.providerInstanceId,
        model: selection.model,
        effort: selection.effort,
        runtimeMode: selection.runtimeMode,
        interactionMode: selection.interactionMode,
        cwd: project.rootPath,
        branch: null,
        worktreePath: null,
        workspaceStrategy: "root",
        lineage: {
          relationship: "root",
          parentThreadId: null,
          parentRunId: null,
          parentNodeId: null,
          delegatedTaskId: null,
          ...(task.reachedFrom !== undefined ? { reachedFrom: task.reachedFrom } : {}),
        },
        createdBy: "system",
        creationSource: "scheduler",
        // The run acts for the task's credential, as a thread its creator started would.
        authority: task.authority ?? null,
        ...(profile !== null
          ? { profile: profile.stamp, harness: profile.harness, profileBudget: profile.budget }
          : {}),
      },
      text,
    );
    await recordProfileRootBudget(ctx, thread);
    threadId = thread.id;
    runId = (await deliverMessage(ctx, { ...common, threadId, mode: "auto" })).runId;
  }
  await ctx.update("run", runId, (run) => ({
    ...run,
    scheduledTaskId: task.id,
    scheduledTriggerId: draft.id,
    ...(task.reachedFrom !== undefined && run.reachedFrom === undefined ? { reachedFrom: task.reachedFrom } : {}),
  }));
  return recordTrigger(ctx, draft, { outcome: "started", runId, threadId });
}
