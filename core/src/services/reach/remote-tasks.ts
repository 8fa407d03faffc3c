import { inject, injectable } from "tsyringe";
import { type Engine, EngineToken } from "../../engine/ports.js";
import { activeRun, putItem } from "../../engine/run-lifecycle.js";
import { type ReachRemoteTaskRow, ReachRemoteTasksTable } from "../../store/tables/reach-remote-tasks.js";
import { RemoteTaskResults } from "./remote-task-results.js";
import { acceptsAutomaticTurn, remoteTaskItemId, type RemoteTask, type RemoteTaskData } from "./remote-task-rows.js";

/** A finished task's result as the other side's outbox hands it over. */
export interface RemoteTaskResult {
  readonly taskId: string;
  readonly status: string;
  readonly summary: string;
}

function remoteTaskOf(row: ReachRemoteTaskRow): RemoteTask {
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
  /** The tasks, read outside a command (inside one, through the command's store). */
  private readonly tasks: ReachRemoteTasksTable;

  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    private readonly delivery: RemoteTaskResults,
  ) {
    this.tasks = new ReachRemoteTasksTable(engine.store);
  }

  /** Records a task the other side accepted (idempotent: a retried delegation finds its row). */
  async record(
    task: Omit<RemoteTask, "delivery" | "status" | "summary" | "createdAt" | "receivedAt">,
  ): Promise<RemoteTask> {
    await this.engine.apply(async (ctx) => {
      const tasks = ctx.table(ReachRemoteTasksTable);
      if ((await tasks.byKey(task.linkName, task.remoteTaskId)) !== null) return;
      const data: RemoteTaskData = {
        environmentId: task.environmentId,
        parentRunId: task.parentRunId,
        childThreadId: task.childThreadId,
        childThreadLink: task.childThreadLink,
        ...(task.childThreadWebUrl !== undefined ? { childThreadWebUrl: task.childThreadWebUrl } : {}),
        title: task.title,
        providerInstanceId: task.providerInstanceId ?? null,
        model: task.model ?? null,
        ...(task.profile != null ? { profile: task.profile } : {}),
        delivery: "pending",
        status: null,
        summary: null,
      };
      const parent = await ctx.get("thread", task.parentThreadId);
      await tasks.insert(
        {
          linkName: task.linkName,
          remoteTaskId: task.remoteTaskId,
          parentThreadId: task.parentThreadId,
          // Counted against its parent's tree (maxTasksPerRootThread); a thread's tree never changes.
          rootThreadId: parent?.lineage.rootThreadId ?? null,
          createdAt: ctx.nowMs,
        },
        data,
      );
      if (parent === null) return;
      const run = await ctx.get("run", task.parentRunId);
      await putItem(ctx, {
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
          // As a local child's item names its profile (the other side's definition of that name).
          ...(task.profile != null ? { profile: task.profile } : {}),
        },
        createdBy: "agent",
        creationSource: "mcp",
      });
    });
    return (await this.get(task.linkName, task.remoteTaskId))!;
  }

  /** One task by its link and its id there, or null. */
  async get(linkName: string, remoteTaskId: string): Promise<RemoteTask | null> {
    const row = await this.tasks.byKey(linkName, remoteTaskId);
    return row === null ? null : remoteTaskOf(row);
  }

  /** A task by its id there, whichever link it runs behind (ids are random: at most one matches). */
  async byRemoteTaskId(remoteTaskId: string): Promise<RemoteTask | null> {
    const row = await this.tasks.byRemoteTaskId(remoteTaskId);
    return row === null ? null : remoteTaskOf(row);
  }

  /** The tasks behind a link whose results have not arrived yet. */
  async outstanding(linkName: string): Promise<RemoteTask[]> {
    return (await this.tasks.unreceivedOfLink(linkName)).map(remoteTaskOf);
  }

  /** The links that have tasks whose results have not arrived yet. */
  async linksWithOutstanding(): Promise<string[]> {
    return this.tasks.linksWithUnreceived();
  }

  /** Every remote task of a parent thread, oldest first. */
  async ofParent(parentThreadId: string): Promise<RemoteTask[]> {
    return (await this.tasks.ofParent(parentThreadId)).map(remoteTaskOf);
  }

  /** How many tasks of a parent run have no result here yet (they count against its breadth budget). */
  async unreceivedCountOfRun(parentRunId: string): Promise<number> {
    return this.tasks.countUnreceivedOfRun(parentRunId);
  }

  /** How many tasks a thread tree (by its root thread) delegated to linked environments. */
  async countOfTree(rootThreadId: string): Promise<number> {
    return this.tasks.countOfTree(rootThreadId);
  }

  /** The link behind which some task runs in the environment with this own id, or null. */
  async linkOfEnvironment(environmentId: string): Promise<string | null> {
    return this.tasks.linkOfEnvironment(environmentId);
  }

  /**
   * Takes a finished task's result, once: the receipt is the row's `received_at`, written in the
   * transaction that delivers the result (or leaves it pending for the parent's next run).
   * Returns false when it had been received already (or names no task of this link).
   */
  async receive(linkName: string, result: RemoteTaskResult): Promise<boolean> {
    return this.engine.apply(async (ctx) => {
      const tasks = ctx.table(ReachRemoteTasksTable);
      const row = await tasks.byKey(linkName, result.taskId);
      if (row === null || row.received_at !== null) return false;
      const data = JSON.parse(row.data) as RemoteTaskData;
      await this.delivery.write(
        ctx,
        row,
        { ...data, status: result.status, summary: result.summary },
        { receivedAt: ctx.nowMs },
      );
      const item = await ctx.get("item", remoteTaskItemId(linkName, result.taskId));
      if (item !== null) {
        await putItem(ctx, {
          ...item,
          status: result.status === "completed" ? "completed" : result.status === "failed" ? "failed" : "cancelled",
          data: {
            ...item.data,
            status: result.status,
            summary: result.summary.length > 1_000 ? `${result.summary.slice(0, 1_000)}…` : result.summary,
          },
        });
      }
      const parent = await ctx.get("thread", row.parent_thread_id);
      // As for a local result: a parent whose run is live gets it when that run ends, unless it
      // read it meanwhile (a wait or task_status acknowledges it, and no wake follows).
      if (
        parent !== null &&
        data.delivery === "pending" &&
        (await activeRun(ctx, parent.id)) === null &&
        (await acceptsAutomaticTurn(ctx, parent))
      )
        await this.delivery.deliver(ctx, parent, (await tasks.byKey(linkName, result.taskId))!);
      return true;
    });
  }

  /** The parent read the result itself (a wait or task_status): no wake message is needed for it. */
  acknowledge(linkName: string, remoteTaskId: string): Promise<void> {
    return this.setDelivery(linkName, remoteTaskId, "acknowledged");
  }

  /** The parent cancelled the task: its result is not delivered on its own. */
  dispose(linkName: string, remoteTaskId: string): Promise<void> {
    return this.setDelivery(linkName, remoteTaskId, "disposed");
  }

  private async setDelivery(
    linkName: string,
    remoteTaskId: string,
    delivery: "acknowledged" | "disposed",
  ): Promise<void> {
    await this.engine.apply(async (ctx) => {
      const row = await ctx.table(ReachRemoteTasksTable).byKey(linkName, remoteTaskId);
      if (row === null) return;
      const data = JSON.parse(row.data) as RemoteTaskData;
      if (data.delivery === "pending") await this.delivery.write(ctx, row, { ...data, delivery });
    });
  }
}

export { remoteResultMessageId, remoteTaskItemId, type RemoteTask } from "./remote-task-rows.js";
