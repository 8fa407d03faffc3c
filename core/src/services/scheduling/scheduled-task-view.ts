import type { ProjectionReader } from "../../engine/run-lifecycle.js";
import {
  authorityId,
  type ScheduledTaskRecord,
  type ScheduledTriggerRecord,
  type ScheduleSpec,
} from "../../store/records.js";
import { isTimed, latestDueOccurrence, nextOccurrence, occurrencesFrom } from "./schedule-occurrences.js";
import { lastStartedTrigger, lastTimedTrigger } from "./scheduled-run-launch.js";

/** What the tool result and the task's listing say about an unsigned webhook (seed 000). */
export const UNSIGNED_WEBHOOK_WARNING = "Without a signature, anyone with the webhook URL can trigger a run.";

/** Why a listing leaves out an unsigned webhook's URL. */
export const HIDDEN_WEBHOOK_URL_NOTE =
  "An unsigned webhook's URL is its credential: only a caller that may change the task (orchestration:operate in its project, with modes at least as broad as the task's) sees it.";

/** The path of a webhook task's URL on the server: an unsigned task's ends with its key. */
export function webhookPath(scheduledTaskId: string, urlKey: string | null): string {
  return `/hooks/${encodeURIComponent(scheduledTaskId)}${urlKey === null ? "" : `/${urlKey}`}`;
}

/** A schedule as results show it: never a secret, only whether there is one. */
function publicSchedule(schedule: ScheduleSpec) {
  switch (schedule.type) {
    case "interval":
      return { type: "interval" as const, everyMs: schedule.everyMs };
    case "fixed_time":
      return "at" in schedule
        ? { type: "fixed_time" as const, at: schedule.at, atInstant: schedule.atInstant }
        : { type: "fixed_time" as const, cron: schedule.cron };
    case "webhook":
      return {
        type: "webhook" as const,
        signature: schedule.signature === null ? ("none" as const) : ("set" as const),
        filters: [...schedule.filters],
        dedupe: schedule.dedupe,
      };
  }
}

/** A trigger as results show it, with the status of the run it started. */
export async function triggerView(reader: ProjectionReader, trigger: ScheduledTriggerRecord) {
  const run = trigger.runId === null ? null : await reader.get("run", trigger.runId);
  return {
    triggerId: trigger.id,
    kind: trigger.kind,
    outcome: trigger.outcome,
    reason: trigger.reason,
    detail: trigger.detail,
    scheduledFor: trigger.scheduledFor,
    catchUp: trigger.catchUp,
    coalesced: trigger.coalesced,
    runId: trigger.runId,
    threadId: trigger.threadId,
    runStatus: run?.status ?? null,
    createdAt: trigger.createdAt,
  };
}

/** When a timed task fires next (an overdue occurrence included), or null (paused, a one-shot that fired). */
export async function nextRunAt(
  reader: ProjectionReader,
  task: ScheduledTaskRecord,
  nowMs: number,
  timeZone: string | undefined,
): Promise<string | null> {
  if (!task.enabled || !isTimed(task.schedule)) return null;
  const anchor = Date.parse(task.anchorAt);
  const from = occurrencesFrom(task, (await lastTimedTrigger(reader, task.id))?.scheduledFor ?? null);
  const due = latestDueOccurrence(task.schedule, anchor, from, nowMs, timeZone);
  const at = due?.atMs ?? nextOccurrence(task.schedule, anchor, from, timeZone);
  return at === null ? null : new Date(at).toISOString();
}

const PROMPT_VIEW_CHARS = 4_000;

/**
 * A scheduled task as `schedule_task` and `list_scheduled_tasks` show it: its trigger, where its
 * runs go, when it fires next, and its recent triggers with the runs they started.
 */
export async function scheduledTaskView(
  reader: ProjectionReader,
  task: ScheduledTaskRecord,
  options: {
    nowMs: number;
    timeZone: string | undefined;
    timeZoneName: string;
    webhookBaseUrl: string | null;
    recentTriggers?: number;
    /** The webhook's path as this caller may see it, or null when it is hidden from the caller (or the task is no webhook). */
    webhookPath: string | null;
    /** Whether the credential the task runs under stands now. */
    authorityState: "active" | "revoked" | "expired" | "unknown";
  },
) {
  const recentTriggers = await reader.select(
    "scheduledTrigger",
    "task_id = ?",
    [task.id],
    `ORDER BY created_at DESC, rowid DESC LIMIT ${Math.max(1, options.recentTriggers ?? 10)}`,
  );
  const recent = [];
  for (const trigger of recentTriggers) recent.push(await triggerView(reader, trigger));
  const last = await lastStartedTrigger(reader, task.id);
  const webhook = task.schedule.type === "webhook";
  const path = webhook ? options.webhookPath : null;
  const long = task.prompt.length > PROMPT_VIEW_CHARS;
  return {
    scheduledTaskId: task.id,
    title: task.title,
    prompt: long ? `${task.prompt.slice(0, PROMPT_VIEW_CHARS)}…` : task.prompt,
    promptTruncated: long,
    projectId: task.projectId,
    enabled: task.enabled,
    pausedReason: task.enabled ? null : (task.pause?.reason ?? ("requested" as const)),
    pausedDetail: task.enabled ? null : (task.pause?.detail ?? "Paused on request (enabled: false)."),
    authority: task.authority
      ? {
          kind: task.authority.kind,
          id: task.authority.kind === "owner" ? null : authorityId(task.authority),
          state: options.authorityState,
        }
      : null,
    bindToCurrentThread: task.boundThreadId !== null,
    boundThreadId: task.boundThreadId,
    schedule: publicSchedule(task.schedule),
    timeZone: options.timeZoneName,
    providerInstanceId: task.providerInstanceId,
    model: task.model,
    profile: task.profile?.name ?? null,
    runtimeMode: task.runtimeMode,
    interactionMode: task.interactionMode,
    nextRunAt: await nextRunAt(reader, task, options.nowMs, options.timeZone),
    webhookPath: path,
    webhookUrl: path !== null && options.webhookBaseUrl !== null ? `${options.webhookBaseUrl}${path}` : null,
    webhookUrlHidden: webhook && path === null,
    webhookSignature:
      task.schedule.type === "webhook"
        ? task.schedule.signature === null
          ? ("none" as const)
          : ("set" as const)
        : null,
    warning:
      task.schedule.type === "webhook" && task.schedule.signature === null
        ? path === null
          ? `${UNSIGNED_WEBHOOK_WARNING} ${HIDDEN_WEBHOOK_URL_NOTE}`
          : UNSIGNED_WEBHOOK_WARNING
        : null,
    runCount: await reader.count("scheduledTrigger", "task_id = ? AND outcome = 'started'", [task.id]),
    lastRun: last === null ? null : await triggerView(reader, last),
    recentTriggers: recent,
    createdBy: task.createdBy,
    creationSource: task.creationSource,
    createdAt: task.createdAt,
    updatedAt: task.updatedAt,
  };
}

export type ScheduledTaskView = Awaited<ReturnType<typeof scheduledTaskView>>;
