import {
  isActiveRunStatus,
  isTerminalRunStatus,
  type DelegatedTaskRecord,
  type EntityName,
  type EntityRecords,
  type RunRecord,
  type RuntimeRequestRecord,
  type StoredEvent,
  type ThreadRecord,
  type TimelineItemRecord,
  type WorkspaceRecord,
} from "../../store/records.js";
import { itemView } from "../thread-views.js";
import { workspaceView } from "../workspaces/workspace-records.js";

/**
 * The public event vocabulary of `GET /api/v1/events`: a projection of the store's internal
 * record upserts. Each internal upsert becomes at most one public event, so the SSE `id` (the
 * upsert's log sequence) names exactly one event and a client resuming after it misses nothing
 * and sees nothing twice.
 */
export const PUBLIC_EVENT_TYPES = [
  "thread.created",
  "thread.settled",
  "thread.snoozed",
  "thread.renamed",
  "run.started",
  "run.finished",
  "message",
  "item",
  "task.updated",
  "request.opened",
  "request.answered",
  "request.closed",
  "workspace.updated",
] as const;

/** A public event type. */
export type PublicEventType = (typeof PUBLIC_EVENT_TYPES)[number];

/** The longest text (message, run summary, task result) an event carries; longer text is cut and flagged. */
export const EVENT_TEXT_LIMIT = 16_000;

/** A public event as the projection makes it (the feed adds the thread's project). */
export interface PublicEvent {
  /** The log sequence of the upsert it came from: the SSE `id`. */
  readonly sequence: number;
  readonly type: PublicEventType;
  /** The thread it belongs to (a task's parent thread for `task.updated`). */
  readonly threadId: string;
  /** When the change committed (the command's time). */
  readonly at: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/**
 * What a later upsert of the same record is compared with: the parts of a record that decide
 * whether a public event follows. Small strings, so a cache of many records stays small.
 */
export type PublicState = string;

/** Entities that can produce public events; every other upsert is internal only. */
const PUBLIC_ENTITIES: ReadonlySet<EntityName> = new Set([
  "thread",
  "run",
  "item",
  "delegatedTask",
  "runtimeRequest",
  "workspace",
]);

/** Whether upserts of this entity can produce a public event (others need no previous state). */
export function isPublicEntity(entity: EntityName): boolean {
  return PUBLIC_ENTITIES.has(entity);
}

/** FNV-1a over a string: a cheap fingerprint of text a state only needs to compare. */
function fingerprint(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return `${text.length}:${(hash >>> 0).toString(36)}`;
}

/**
 * When a thread was settled (set_thread_settled, seed 002), or null. The field belongs to the
 * peer-threads work; until a thread record carries it, no thread is settled.
 */
function settledAt(thread: ThreadRecord): string | null {
  return (thread as ThreadRecord & { readonly settledAt?: string | null }).settledAt ?? null;
}

/** The public state of a record of a public entity (see {@link PublicState}). */
export function publicStateOf<E extends EntityName>(entity: E, record: EntityRecords[E]): PublicState | null {
  switch (entity) {
    case "thread": {
      const thread = record as ThreadRecord;
      // The snooze a person set (not whether it holds now: that changes with the clock, with no upsert).
      return `${settledAt(thread) === null ? "open" : "settled"}|${thread.snoozedUntil ?? ""}|${fingerprint(thread.title)}`;
    }
    case "run":
      return (record as RunRecord).status;
    case "item": {
      const item = record as TimelineItemRecord;
      return `${item.status}|${fingerprint(item.text)}|${fingerprint(JSON.stringify(item.data))}`;
    }
    case "delegatedTask": {
      const task = record as DelegatedTaskRecord;
      return [
        task.status,
        task.finalizedAt ?? "",
        task.delivery,
        task.cancelRequestedAt ?? "",
        fingerprint(task.summary ?? ""),
      ].join("|");
    }
    case "runtimeRequest":
      return (record as RuntimeRequestRecord).status;
    case "workspace": {
      const workspace = record as WorkspaceRecord;
      const pending =
        workspace.pendingApply !== null || workspace.applying !== null
          ? "apply"
          : workspace.pendingRemoval !== null
            ? "removal"
            : "";
      return [
        workspace.status,
        workspace.disposition ?? "",
        workspace.changes?.head ?? "",
        workspace.outcomes.length,
        pending,
      ].join("|");
    }
    default:
      return null;
  }
}

function bounded(text: string | null): { text: string | null; truncated: boolean } {
  if (text === null || text.length <= EVENT_TEXT_LIMIT) return { text, truncated: false };
  return { text: text.slice(0, EVENT_TEXT_LIMIT), truncated: true };
}

function runData(run: RunRecord) {
  const summary = bounded(run.summary);
  return {
    runId: run.id,
    threadId: run.threadId,
    ordinal: run.ordinal,
    kind: run.kind,
    status: run.status,
    summary: summary.text,
    summaryTruncated: summary.truncated,
    error: run.error,
    terminalReason: run.terminalReason,
    delegatedTaskId: run.delegatedTaskId,
    createdBy: run.createdBy,
    creationSource: run.creationSource,
    createdAt: run.createdAt,
    startedAt: run.startedAt,
    endedAt: run.endedAt,
  };
}

function threadData(thread: ThreadRecord) {
  return {
    threadId: thread.id,
    projectId: thread.projectId,
    title: thread.title,
    providerInstanceId: thread.providerInstanceId,
    model: thread.model,
    runtimeMode: thread.runtimeMode,
    interactionMode: thread.interactionMode,
    relationship: thread.lineage.relationship,
    parentThreadId: thread.lineage.parentThreadId,
    delegatedTaskId: thread.lineage.delegatedTaskId,
    reportBack: thread.lineage.reportBack === true,
    createdBy: thread.createdBy,
    creationSource: thread.creationSource,
    createdAt: thread.createdAt,
  };
}

function taskData(task: DelegatedTaskRecord) {
  const summary = bounded(task.summary);
  return {
    taskId: task.id,
    parentThreadId: task.parentThreadId,
    childThreadId: task.childThreadId,
    title: task.title,
    providerInstanceId: task.providerInstanceId,
    model: task.model,
    status: task.status,
    finalized: task.finalizedAt !== null,
    summary: summary.text,
    summaryTruncated: summary.truncated,
    resultContextTransferId: task.resultContextTransferId,
    delivery: task.delivery,
    cancelRequested: task.cancelRequestedAt !== null,
    updatedAt: task.updatedAt,
  };
}

function requestData(request: RuntimeRequestRecord) {
  // An approval's detail can be a whole diff.
  const detail =
    request.request.kind === "approval" && request.request.detail !== undefined
      ? bounded(request.request.detail)
      : null;
  return {
    requestId: request.id,
    threadId: request.threadId,
    runId: request.runId,
    kind: request.kind,
    approvalKind: request.approvalKind,
    blocking: request.blocking,
    status: request.status,
    request:
      detail === null
        ? request.request
        : { ...request.request, detail: detail.text, detailTruncated: detail.truncated },
    response: request.response,
    itemId: request.itemId,
    ...(request.nativeSubagent ? { nativeSubagent: request.nativeSubagent } : {}),
    createdAt: request.createdAt,
    resolvedAt: request.resolvedAt,
  };
}

const MESSAGE_KINDS: ReadonlySet<TimelineItemRecord["kind"]> = new Set(["user_message", "assistant_message"]);

function event(
  stored: StoredEvent,
  type: PublicEventType,
  threadId: string,
  data: Record<string, unknown>,
): PublicEvent {
  return { sequence: stored.sequence, type, threadId, at: stored.createdAt, data };
}

/**
 * The public event an internal upsert makes, given the public state of the same record just
 * before it (null when the upsert created the record), or null when it makes none. Pure: replay
 * from the log and the live feed make the same events from the same upserts.
 *
 * - `thread.created`: a thread record appears; `thread.settled`: it is settled or revived;
 *   `thread.snoozed`: it is snoozed (until a time) or unsnoozed; `thread.renamed`: its title
 *   changed (a rename or a regenerated title).
 * - `run.started`: a run leaves the queue (restarts and continuations of a started run are not
 *   new starts); `run.finished`: it reaches a terminal status.
 * - `message`: a user or assistant message is complete; `item`: any other visible change of a
 *   timeline item (an upsert that changes nothing visible makes no event).
 * - `task.updated`: a delegated task's status, result, delivery or cancellation changed.
 * - `request.opened`, `request.answered`, `request.closed` (cancelled or expired): an approval
 *   or question opened, or ended.
 * - `workspace.updated`: a thread's own workspace was made, recorded new changes, got an apply
 *   or removal under way, or an outcome (applied, conflict, discarded…), or was removed.
 */
export function publicEventOf(stored: StoredEvent, previous: PublicState | null): PublicEvent | null {
  switch (stored.entity) {
    case "thread": {
      const thread = stored.record as ThreadRecord;
      if (previous === null) return event(stored, "thread.created", thread.id, { thread: threadData(thread) });
      const now = publicStateOf("thread", thread)!;
      if (now === previous) return null;
      const [settledNow, snoozedNow] = now.split("|");
      const [settledBefore, snoozedBefore] = previous.split("|");
      if (settledNow !== settledBefore)
        return event(stored, "thread.settled", thread.id, {
          threadId: thread.id,
          settled: settledNow === "settled",
          settledAt: settledAt(thread),
          title: thread.title,
        });
      if (snoozedNow !== snoozedBefore)
        return event(stored, "thread.snoozed", thread.id, {
          threadId: thread.id,
          snoozedUntil: thread.snoozedUntil ?? null,
          title: thread.title,
        });
      return event(stored, "thread.renamed", thread.id, {
        threadId: thread.id,
        title: thread.title,
        titleSource: thread.titleSource,
      });
    }
    case "run": {
      const run = stored.record as RunRecord;
      if (isTerminalRunStatus(run.status)) {
        if (previous !== null && isTerminalRunStatus(previous as RunRecord["status"])) return null;
        return event(stored, "run.finished", run.threadId, { run: runData(run) });
      }
      if (isActiveRunStatus(run.status) && (previous === null || previous === "queued"))
        return event(stored, "run.started", run.threadId, { run: runData(run) });
      return null;
    }
    case "item": {
      const item = stored.record as TimelineItemRecord;
      const now = publicStateOf("item", item);
      if (now === previous) return null;
      const view = itemView(item, EVENT_TEXT_LIMIT);
      const completedNow = item.status === "completed" && (previous === null || !previous.startsWith("completed|"));
      if (MESSAGE_KINDS.has(item.kind) && completedNow) return event(stored, "message", item.threadId, { item: view });
      return event(stored, "item", item.threadId, { item: view });
    }
    case "delegatedTask": {
      const task = stored.record as DelegatedTaskRecord;
      if (publicStateOf("delegatedTask", task) === previous) return null;
      return event(stored, "task.updated", task.parentThreadId, { task: taskData(task) });
    }
    case "runtimeRequest": {
      const request = stored.record as RuntimeRequestRecord;
      if (request.status === previous) return null;
      if (request.status === "pending")
        return event(stored, "request.opened", request.threadId, { request: requestData(request) });
      return event(stored, request.status === "answered" ? "request.answered" : "request.closed", request.threadId, {
        request: requestData(request),
      });
    }
    case "workspace": {
      const workspace = stored.record as WorkspaceRecord;
      if (publicStateOf("workspace", workspace) === previous) return null;
      return event(stored, "workspace.updated", workspace.threadId, {
        threadId: workspace.threadId,
        workspace: workspaceView(workspace),
      });
    }
    default:
      return null;
  }
}
