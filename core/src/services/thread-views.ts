import { QUEUED_RUNS_OF_THREAD, type ProjectionReader } from "../engine/run-lifecycle.js";
import type { RunRecord, ThreadRecord, TimelineItemRecord } from "../store/records.js";
import type { ThreadShellFacts } from "../store/tables/threads.js";
import type { LiveWaits } from "./live-waits.js";
import { nativeTranscriptText } from "./native-subagents.js";

/** The link agents use to mention a thread; the environment that owns the thread builds it. */
export function threadLink(environmentId: string, threadId: string): string {
  return `switchyard-thread://v2/${environmentId}/${threadId}`;
}

/** True when a thread is snoozed now (a pending request, or a failure after snoozing, wakes it). */
export async function isSnoozed(reader: ProjectionReader, thread: ThreadRecord, nowIso: string): Promise<boolean> {
  if (thread.snoozedUntil === null || thread.snoozedUntil <= nowIso) return false;
  const pending = await reader.count("runtimeRequest", "thread_id = ? AND status = 'pending'", [thread.id]);
  if (pending > 0) return false;
  const failedSince = (await reader.select("run", "thread_id = ? AND status = 'failed'", [thread.id])).some(
    (run) => thread.snoozedAt !== null && (run.endedAt ?? "") > thread.snoozedAt,
  );
  return !failedSince;
}

/**
 * Unfinished work a thread delegated, which holds it after its own run completed (the sidebar's
 * Waiting label): tasks whose child still runs, and finished ones not yet finalized (their
 * child still waits on nested work).
 */
export async function pendingBackgroundTasks(reader: ProjectionReader, threadId: string): Promise<number> {
  // One count for both (a listing makes it per thread): unfinished, or finished and not finalized.
  return await reader.count(
    "delegatedTask",
    "parent_thread_id = ? AND (status NOT IN ('completed', 'failed', 'cancelled', 'interrupted') OR finalized = 0)",
    [threadId],
  );
}

/**
 * The thread's active run, else its latest (what its shell shows), in one statement: a listing
 * asks it of every thread it lists.
 */
async function activeOrLatestRun(reader: ProjectionReader, threadId: string): Promise<RunRecord | null> {
  return (
    (
      await reader.select(
        "run",
        "thread_id = ?",
        [threadId],
        "ORDER BY status IN ('starting', 'running', 'waiting') DESC, ordinal DESC LIMIT 1",
      )
    )[0] ?? null
  );
}

/**
 * A thread's list shell (t3_thread_list, and the head of t3_thread_read). `blockedOnThreadWait`
 * is whether the thread's agent is blocked in a wait right now (delegate_task wait or
 * t3_thread_wait); `pendingBackgroundTasks` counts its unfinished delegated work. A listing
 * passes the `facts` it read for its whole page (`ThreadsTable.shellFacts`); without them the
 * shell reads its own.
 */
export async function threadShell(
  reader: ProjectionReader,
  waits: Pick<LiveWaits, "isThreadBlocked">,
  thread: ThreadRecord,
  environmentId: string,
  nowIso: string,
  facts?: ThreadShellFacts,
) {
  const latest = facts !== undefined ? facts.latestRun : await activeOrLatestRun(reader, thread.id);
  const queued = facts !== undefined ? facts.queuedRuns : await reader.count("run", QUEUED_RUNS_OF_THREAD, [thread.id]);
  return {
    threadId: thread.id,
    link: threadLink(environmentId, thread.id),
    title: thread.title,
    projectId: thread.projectId,
    providerInstanceId: thread.providerInstanceId,
    model: thread.model,
    effort: thread.effort ?? null,
    runtimeMode: thread.runtimeMode,
    interactionMode: thread.interactionMode,
    status: latest === null ? ("idle" as const) : latest.status,
    latestRunId: latest?.id ?? null,
    queuedRuns: queued,
    relationship: thread.lineage.relationship,
    parentThreadId: thread.lineage.parentThreadId,
    delegatedTaskId: thread.lineage.delegatedTaskId,
    /** A router child whose finished turns are delivered to its parent. */
    reportBack: thread.lineage.reportBack === true,
    /** A child delegated from another environment: its parent there (absent otherwise). */
    ...(thread.lineage.foreignParent !== undefined
      ? {
          foreignParent: {
            environmentId: thread.lineage.foreignParent.environmentId,
            threadId: thread.lineage.foreignParent.threadId,
            runId: thread.lineage.foreignParent.runId,
          },
        }
      : {}),
    /** An attached thread's outside session: the client as it named itself (absent otherwise). */
    ...(thread.lineage.attached !== undefined ? { attached: { client: thread.lineage.attached.client } } : {}),
    /** The profile a delegated thread was started with (absent otherwise). */
    ...(thread.profile != null
      ? {
          profile: {
            name: thread.profile.name,
            source: thread.profile.source,
            file: thread.profile.file,
            version: thread.profile.version,
          },
        }
      : {}),
    branch: thread.branch,
    worktreePath: thread.worktreePath,
    cwd: thread.cwd,
    linkedPullRequest: thread.linkedPullRequest,
    titleRegenerationPending: thread.titleRegenerationPending,
    snoozed: await isSnoozed(reader, thread, nowIso),
    snoozedUntil: thread.snoozedUntil,
    settled: (thread.settledAt ?? null) !== null,
    settledAt: thread.settledAt ?? null,
    /** Stop was pressed: queued runs are held until resume or the next message. */
    stopped: thread.stopped === true,
    blockedOnThreadWait: waits.isThreadBlocked(thread.id),
    pendingBackgroundTasks:
      facts !== undefined ? facts.pendingBackgroundTasks : await pendingBackgroundTasks(reader, thread.id),
    createdBy: thread.createdBy,
    creationSource: thread.creationSource,
    createdAt: thread.createdAt,
    updatedAt: thread.updatedAt,
  };
}

/** A shell as results carry it: with the thread's web UI page when the server knows its address. */
export type ThreadShell = Awaited<ReturnType<typeof threadShell>> & { webUrl?: string };

/** A run as results show it, its summary bounded. */
export function runView(run: RunRecord, maxSummaryChars = 2_000) {
  const long = run.summary !== null && run.summary.length > maxSummaryChars;
  return {
    runId: run.id,
    ordinal: run.ordinal,
    status: run.status,
    kind: run.kind,
    effort: run.effort ?? null,
    summary: long ? `${run.summary!.slice(0, maxSummaryChars)}…` : run.summary,
    summaryTruncated: long,
    error: run.error,
    terminalReason: run.terminalReason,
    attempts: run.attemptCount,
    delegatedTaskId: run.delegatedTaskId,
    scheduledTaskId: run.scheduledTaskId ?? null,
    scheduledTriggerId: run.scheduledTriggerId ?? null,
    /**
     * How the provider session this run opened went on with the conversation when it could not
     * simply reopen or start it (handed over, degraded, and why); null when the run used an open
     * session, reopened the conversation natively or started the thread's first one. Reads stay
     * within their character budget this way, and the decision is on the run record always.
     */
    sessionContinuation: run.sessionContinuation?.degraded === true ? run.sessionContinuation : null,
    createdBy: run.createdBy,
    creationSource: run.creationSource,
    createdAt: run.createdAt,
    startedAt: run.startedAt,
    endedAt: run.endedAt,
  };
}

export type RunView = ReturnType<typeof runView>;

/** How much of a tool call's output an item's view carries; the item read pages through the rest. */
export const ITEM_OUTPUT_PREVIEW_CHARS = 500;
/** How much of a tool call's arguments (as JSON) an item's view carries whole; longer ones are a preview. */
export const ITEM_INPUT_PREVIEW_CHARS = 1_000;

/** Kinds whose span (first seen to last change) is how long they took. */
const TIMED_KINDS: ReadonlySet<string> = new Set(["tool_call", "subagent"]);

/**
 * A tool call's arguments as a view carries them: whole when their JSON is short, else a
 * preview of it (the item read pages through the whole).
 */
function inputDetails(input: unknown): Record<string, unknown> {
  if (input === undefined) return {};
  const json = JSON.stringify(input) ?? "null";
  if (json.length <= ITEM_INPUT_PREVIEW_CHARS) return { input };
  return { inputPreview: `${json.slice(0, ITEM_INPUT_PREVIEW_CHARS)}…`, inputChars: json.length };
}

/** An item as results show it, its text bounded. */
export function itemView(item: TimelineItemRecord, maxChars: number) {
  const truncated = item.text.length > maxChars;
  const data = item.data as Record<string, unknown>;
  const summary: Record<string, unknown> = {};
  for (const key of [
    "toolKind",
    "name",
    "server",
    "approvalKind",
    "requestKind",
    "requestId",
    "origin",
    "taskId",
    "childThreadId",
    "status",
    "delivery",
    "notification",
    "partial",
    "resolution",
    "source",
    "strategy",
    "degraded",
    "reason",
    "exitCode",
    // Why a child failed (a sub-agent row), and the limit a provider warning reported.
    "error",
    "limit",
  ]) {
    if (data[key] !== undefined) summary[key] = data[key];
  }
  if (typeof data.output === "string") {
    const long = data.output.length > ITEM_OUTPUT_PREVIEW_CHARS;
    summary.output = long ? `${data.output.slice(0, ITEM_OUTPUT_PREVIEW_CHARS)}…` : data.output;
    summary.outputChars = data.output.length;
    summary.outputTruncated = long;
  }
  if (item.kind === "tool_call") Object.assign(summary, inputDetails(data.input));
  if (TIMED_KINDS.has(item.kind) && item.status !== "in_progress" && item.status !== "pending") {
    summary.durationMs = Math.max(0, Date.parse(item.updatedAt) - Date.parse(item.createdAt));
  }
  return {
    position: item.position,
    itemId: item.id,
    kind: item.kind,
    role:
      item.kind === "user_message"
        ? ("user" as const)
        : item.kind === "assistant_message"
          ? ("assistant" as const)
          : null,
    status: item.status,
    text: truncated ? item.text.slice(0, maxChars) : item.text,
    truncated,
    runId: item.runId,
    createdBy: item.createdBy,
    creationSource: item.creationSource,
    createdAt: item.createdAt,
    details: summary,
  };
}

/** The parts of an item the item read pages through: its text, a tool call's output or its arguments (JSON). */
export type ItemPart = "text" | "output" | "input" | "transcript";

/** One part of an item whole, or null when the item has no such part. */
export function itemPart(item: TimelineItemRecord, part: ItemPart): string | null {
  const data = item.data as Record<string, unknown>;
  if (part === "text") return item.text;
  if (part === "output") return typeof data.output === "string" ? data.output : null;
  if (part === "transcript") return nativeTranscriptText(item);
  return data.input === undefined ? null : JSON.stringify(data.input, null, 2);
}

export type ItemView = ReturnType<typeof itemView>;
