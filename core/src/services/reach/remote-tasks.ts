import { inject, injectable } from "tsyringe";
import { type Engine, EngineToken } from "../../engine/ports.js";
import { activeRun, putItem } from "../../engine/run-lifecycle.js";
import { RemoteTaskResults } from "./remote-task-results.js";
import {
  acceptsAutomaticTurn,
  remoteTaskItemId,
  type RemoteTask,
  type RemoteTaskData,
  type RemoteTaskRow,
} from "./remote-task-rows.js";

/** A finished task's result as the other side's outbox hands it over. */
export interface RemoteTaskResult {
  readonly taskId: string;
  readonly status: string;
  readonly summary: string;
}

function remoteTaskOf(row: RemoteTaskRow): RemoteTask {
  const data = JSON.parse(row.data) as RemoteTaskData;
  return {
    ...data,
    linkName: row.link_name,
    remoteTaskId: row.remote_task_id,
    parentThreadId: row.parent_thread_id,
    createdAt: new Date(row.created_at).toISOString(),
    receivedAt: row.received_at === null ? null : new Date(row.received_at).toISOString(),
  };
}

/**
 * Tasks delegated to linked environments, on the delegating side: one row per task, keyed by
 * the link and the task's id there, recorded in the same transaction as the `subagent` item that
 * shows the child in the parent's timeline. Its result arrives through `receive`, whose receipt
 * is that key: a result handed over twice (a retried pull, a restart of either side between the
 * hand-over and its acknowledgement) is taken once, and delivered to the parent once, as the
 * usual delegated-task result message. The rules are those of local results: a parent whose run
 * is live gets the result when that run ends (`RemoteTaskResults`), unless it read it meanwhile;
 * a parent is never woken against its will: while it is stopped or its latest run was stopped on
 * request, the result waits, and is delivered when its next run ends.
 */
@injectable()
export class RemoteTasks {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    private readonly delivery: RemoteTaskResults,
  ) {}

  /** Records a task the other side accepted (idempotent: a retried delegation finds its row). */
  record(task: Omit<RemoteTask, "delivery" | "status" | "summary" | "createdAt" | "receivedAt">): RemoteTask {
    this.engine.apply((ctx) => {
      const existing = this.row(ctx, task.linkName, task.remoteTaskId);
      if (existing !== null) return;
      const data: RemoteTaskData = {
        environmentId: task.environmentId,
        parentRunId: task.parentRunId,
        childThreadId: task.childThreadId,
        childThreadLink: task.childThreadLink,
        title: task.title,
        providerInstanceId: task.providerInstanceId ?? null,
        model: task.model ?? null,
        delivery: "pending",
        status: null,
        summary: null,
      };
      ctx.store
        .statement(
          "INSERT INTO reach_remote_tasks (link_name, remote_task_id, parent_thread_id, data, created_at, received_at, delivered_at) VALUES (?, ?, ?, ?, ?, NULL, NULL)",
        )
        .run(task.linkName, task.remoteTaskId, task.parentThreadId, JSON.stringify(data), ctx.nowMs);
      const parent = ctx.get("thread", task.parentThreadId);
      if (parent === null) return;
      const run = ctx.get("run", task.parentRunId);
      putItem(ctx, {
        id: remoteTaskItemId(task.linkName, task.remoteTaskId),
        threadId: parent.id,
        runId: run?.id ?? null,
        attemptId: run?.currentAttemptId ?? null,
        kind: "subagent",
        status: "in_progress",
        text: task.title,
        data: {
          origin: "remote_task",
          environment: task.linkName,
          environmentId: task.environmentId,
          taskId: task.remoteTaskId,
          childThreadId: task.childThreadId,
          childThreadLink: task.childThreadLink,
        },
        createdBy: "agent",
        creationSource: "mcp",
      });
    });
    return this.get(task.linkName, task.remoteTaskId)!;
  }

  /** One task by its link and its id there, or null. */
  get(linkName: string, remoteTaskId: string): RemoteTask | null {
    const row = this.row(this.engine, linkName, remoteTaskId);
    return row === null ? null : remoteTaskOf(row);
  }

  /** A task by its id there, whichever link it runs behind (ids are random: at most one matches). */
  byRemoteTaskId(remoteTaskId: string): RemoteTask | null {
    const row = this.engine.store
      .statement("SELECT * FROM reach_remote_tasks WHERE remote_task_id = ? ORDER BY created_at LIMIT 1")
      .get(remoteTaskId) as RemoteTaskRow | undefined;
    return row === undefined ? null : remoteTaskOf(row);
  }

  /** The tasks behind a link whose results have not arrived yet. */
  outstanding(linkName: string): RemoteTask[] {
    return (
      this.engine.store
        .statement("SELECT * FROM reach_remote_tasks WHERE link_name = ? AND received_at IS NULL ORDER BY created_at")
        .all(linkName) as RemoteTaskRow[]
    ).map(remoteTaskOf);
  }

  /** The links that have tasks whose results have not arrived yet. */
  linksWithOutstanding(): string[] {
    return (
      this.engine.store
        .statement("SELECT DISTINCT link_name FROM reach_remote_tasks WHERE received_at IS NULL ORDER BY link_name")
        .all() as { link_name: string }[]
    ).map((row) => row.link_name);
  }

  /** Every remote task of a parent thread, oldest first. */
  ofParent(parentThreadId: string): RemoteTask[] {
    return (
      this.engine.store
        .statement("SELECT * FROM reach_remote_tasks WHERE parent_thread_id = ? ORDER BY created_at")
        .all(parentThreadId) as RemoteTaskRow[]
    ).map(remoteTaskOf);
  }

  /**
   * Takes a finished task's result, once: the receipt is the row's `received_at`, written in the
   * transaction that delivers the result (or leaves it pending for the parent's next run).
   * Returns false when it had been received already (or names no task of this link).
   */
  receive(linkName: string, result: RemoteTaskResult): boolean {
    return this.engine.apply((ctx) => {
      const row = this.row(ctx, linkName, result.taskId);
      if (row === null || row.received_at !== null) return false;
      const data = JSON.parse(row.data) as RemoteTaskData;
      this.delivery.write(
        ctx,
        row,
        { ...data, status: result.status, summary: result.summary },
        { receivedAt: ctx.nowMs },
      );
      const item = ctx.get("item", remoteTaskItemId(linkName, result.taskId));
      if (item !== null) {
        putItem(ctx, {
          ...item,
          status: result.status === "completed" ? "completed" : result.status === "failed" ? "failed" : "cancelled",
          data: {
            ...item.data,
            status: result.status,
            summary: result.summary.length > 1_000 ? `${result.summary.slice(0, 1_000)}…` : result.summary,
          },
        });
      }
      const parent = ctx.get("thread", row.parent_thread_id);
      // As for a local result: a parent whose run is live gets it when that run ends, unless it
      // read it meanwhile (a wait or task_status acknowledges it, and no wake follows).
      if (
        parent !== null &&
        data.delivery === "pending" &&
        activeRun(ctx, parent.id) === null &&
        acceptsAutomaticTurn(ctx, parent)
      )
        this.delivery.deliver(ctx, parent, this.row(ctx, linkName, result.taskId)!);
      return true;
    });
  }

  /** The parent read the result itself (a wait or task_status): no wake message is needed for it. */
  acknowledge(linkName: string, remoteTaskId: string): void {
    this.setDelivery(linkName, remoteTaskId, "acknowledged");
  }

  /** The parent cancelled the task: its result is not delivered on its own. */
  dispose(linkName: string, remoteTaskId: string): void {
    this.setDelivery(linkName, remoteTaskId, "disposed");
  }

  private setDelivery(linkName: string, remoteTaskId: string, delivery: "acknowledged" | "disposed"): void {
    this.engine.apply((ctx) => {
      const row = this.row(ctx, linkName, remoteTaskId);
      if (row === null) return;
      const data = JSON.parse(row.data) as RemoteTaskData;
      if (data.delivery === "pending") this.delivery.write(ctx, row, { ...data, delivery });
    });
  }

  private row(reader: { store: Engine["store"] }, linkName: string, remoteTaskId: string): RemoteTaskRow | null {
    return (
      (reader.store
        .statement("SELECT * FROM reach_remote_tasks WHERE link_name = ? AND remote_task_id = ?")
        .get(linkName, remoteTaskId) as RemoteTaskRow | undefined) ?? null
    );
  }
}

export { remoteResultMessageId, remoteTaskItemId, type RemoteTask } from "./remote-task-rows.js";
