import type { TableHost, TableSql } from "../table-sql.js";

/** A row of `reach_foreign_tasks`: a task delegated here from a linked environment, and its outbox entry. */
export interface ReachForeignTaskRow {
  task_id: string;
  grant_id: string;
  child_thread_id: string;
  child_run_id: string;
  /** The task's foreign parent, title, provider and cancel request (`ForeignTaskData`), as JSON. */
  data: string;
  /** The finished task's result, as JSON, once its run ended. */
  result: string | null;
  created_at: number;
  finished_at: number | null;
  acked_at: number | null;
}

/** What the table reads out of a task's data into columns its budget queries filter on (migration 30). */
export interface ReachForeignTaskFiltered {
  readonly parent: { readonly environmentId: string; readonly runId: string; readonly rootThreadId: string };
}

/**
 * Tasks whose parent is in another environment, on the side that runs them (migration 9). A
 * row is the task's durable outbox: its result is written when the child's run ends and stays
 * until the delegating side acknowledges it. The budget counts filter on the parent's
 * environment, run and root thread as columns, written with the JSON they come from.
 */
export class ReachForeignTasksTable {
  private readonly sql: TableSql;

  constructor(host: TableHost) {
    this.sql = host.tableSql;
  }

  /** Records a new task, unfinished. */
  async insert<Data extends ReachForeignTaskFiltered>(
    task: { taskId: string; grantId: string; childThreadId: string; childRunId: string; createdAt: number },
    data: Data,
  ): Promise<void> {
    await this.sql.run(
      "INSERT INTO reach_foreign_tasks (task_id, grant_id, child_thread_id, child_run_id, data, result, created_at, finished_at, acked_at, parent_environment_id, parent_run_id, parent_root_thread_id) VALUES (?, ?, ?, ?, ?, NULL, ?, NULL, NULL, ?, ?, ?)",
      [
        task.taskId,
        task.grantId,
        task.childThreadId,
        task.childRunId,
        JSON.stringify(data),
        task.createdAt,
        data.parent.environmentId,
        data.parent.runId,
        data.parent.rootThreadId,
      ],
    );
  }

  /** Rewrites a task's data. */
  async updateData<Data extends ReachForeignTaskFiltered>(taskId: string, data: Data): Promise<void> {
    await this.sql.run(
      "UPDATE reach_foreign_tasks SET data = ?, parent_environment_id = ?, parent_run_id = ?, parent_root_thread_id = ? WHERE task_id = ?",
      [JSON.stringify(data), data.parent.environmentId, data.parent.runId, data.parent.rootThreadId, taskId],
    );
  }

  /** One task by id, or null. */
  async byId(taskId: string): Promise<ReachForeignTaskRow | null> {
    return (
      ((await this.sql.get("SELECT * FROM reach_foreign_tasks WHERE task_id = ?", [taskId])) as
        ReachForeignTaskRow | undefined) ?? null
    );
  }

  /** The unfinished task a child run works on, or null. */
  async unfinishedOfChildRun(childRunId: string): Promise<ReachForeignTaskRow | null> {
    return (
      ((await this.sql.get("SELECT * FROM reach_foreign_tasks WHERE child_run_id = ? AND finished_at IS NULL", [
        childRunId,
      ])) as ReachForeignTaskRow | undefined) ?? null
    );
  }

  /** Writes a task's result: it is in the outbox from now on. */
  async finish(taskId: string, result: unknown, at: number): Promise<void> {
    await this.sql.run("UPDATE reach_foreign_tasks SET result = ?, finished_at = ? WHERE task_id = ?", [
      JSON.stringify(result),
      at,
      taskId,
    ]);
  }

  /** A grant's finished tasks the delegating side has not acknowledged, oldest result first, at most `limit`. */
  async unacknowledged(grantId: string, limit: number): Promise<ReachForeignTaskRow[]> {
    return (await this.sql.all(
      "SELECT * FROM reach_foreign_tasks WHERE grant_id = ? AND finished_at IS NOT NULL AND acked_at IS NULL ORDER BY finished_at LIMIT ?",
      [grantId, limit],
    )) as ReachForeignTaskRow[];
  }

  /** Takes a finished task of this grant out of the outbox (a no-op for an unfinished, acknowledged or other grant's task). */
  async acknowledge(taskId: string, grantId: string, at: number): Promise<void> {
    await this.sql.run(
      "UPDATE reach_foreign_tasks SET acked_at = ? WHERE task_id = ? AND grant_id = ? AND finished_at IS NOT NULL AND acked_at IS NULL",
      [at, taskId, grantId],
    );
  }

  /** How many tasks of one foreign parent run are unfinished. */
  async countUnfinishedOfParentRun(environmentId: string, runId: string): Promise<number> {
    return (
      (await this.sql.get(
        "SELECT COUNT(*) AS n FROM reach_foreign_tasks WHERE parent_environment_id = ? AND parent_run_id = ? AND finished_at IS NULL",
        [environmentId, runId],
      )) as { n: number }
    ).n;
  }

  /** How many tasks one foreign thread tree (by its root thread) ever delegated here. */
  async countOfParentTree(environmentId: string, rootThreadId: string): Promise<number> {
    return (
      (await this.sql.get(
        "SELECT COUNT(*) AS n FROM reach_foreign_tasks WHERE parent_environment_id = ? AND parent_root_thread_id = ?",
        [environmentId, rootThreadId],
      )) as { n: number }
    ).n;
  }
}
