import type { TableHost, TableSql } from "../table-sql.js";

/** A row of `reach_remote_tasks`: a task this environment delegated to a linked one. */
export interface ReachRemoteTaskRow {
  link_name: string;
  remote_task_id: string;
  parent_thread_id: string;
  /** The task as the delegating side keeps it (`RemoteTaskData`), as JSON. */
  data: string;
  created_at: number;
  received_at: number | null;
  delivered_at: number | null;
}

/** What the table reads out of a task's data into columns its queries filter on (migration 30). */
export interface ReachRemoteTaskFiltered {
  /** The other environment's own id. */
  readonly environmentId: string;
  readonly parentRunId: string;
}

/**
 * Tasks delegated to linked environments, on the delegating side (migration 9), keyed by the
 * link and the task's id there. The budget and routing queries filter on columns (the other
 * environment's id, the parent run, the parent's root thread), written with the JSON they come
 * from, never on `json_extract` over it.
 */
export class ReachRemoteTasksTable {
  private readonly sql: TableSql;

  constructor(host: TableHost) {
    this.sql = host.tableSql;
  }

  /** Records a task the other side accepted, not yet received; `rootThreadId` is its parent's tree. */
  async insert<Data extends ReachRemoteTaskFiltered>(
    task: {
      linkName: string;
      remoteTaskId: string;
      parentThreadId: string;
      /** Null when the parent thread is not here: the task then counts in no tree. */
      rootThreadId: string | null;
      createdAt: number;
    },
    data: Data,
  ): Promise<void> {
    await this.sql.run(
      "INSERT INTO reach_remote_tasks (link_name, remote_task_id, parent_thread_id, data, created_at, received_at, delivered_at, environment_id, parent_run_id, root_thread_id) VALUES (?, ?, ?, ?, ?, NULL, NULL, ?, ?, ?)",
      [
        task.linkName,
        task.remoteTaskId,
        task.parentThreadId,
        JSON.stringify(data),
        task.createdAt,
        data.environmentId,
        data.parentRunId,
        task.rootThreadId,
      ],
    );
  }

  /** Rewrites a task's data and its receipt and delivery stamps. */
  async update<Data extends ReachRemoteTaskFiltered>(
    key: { linkName: string; remoteTaskId: string },
    data: Data,
    stamps: { receivedAt: number | null; deliveredAt: number | null },
  ): Promise<void> {
    await this.sql.run(
      "UPDATE reach_remote_tasks SET data = ?, received_at = ?, delivered_at = ?, environment_id = ?, parent_run_id = ? WHERE link_name = ? AND remote_task_id = ?",
      [
        JSON.stringify(data),
        stamps.receivedAt,
        stamps.deliveredAt,
        data.environmentId,
        data.parentRunId,
        key.linkName,
        key.remoteTaskId,
      ],
    );
  }

  /** One task by its link and its id there, or null. */
  async byKey(linkName: string, remoteTaskId: string): Promise<ReachRemoteTaskRow | null> {
    return (
      ((await this.sql.get("SELECT * FROM reach_remote_tasks WHERE link_name = ? AND remote_task_id = ?", [
        linkName,
        remoteTaskId,
      ])) as ReachRemoteTaskRow | undefined) ?? null
    );
  }

  /** The oldest task with this id there, whichever link it runs behind, or null. */
  async byRemoteTaskId(remoteTaskId: string): Promise<ReachRemoteTaskRow | null> {
    return (
      ((await this.sql.get("SELECT * FROM reach_remote_tasks WHERE remote_task_id = ? ORDER BY created_at LIMIT 1", [
        remoteTaskId,
      ])) as ReachRemoteTaskRow | undefined) ?? null
    );
  }

  /** The tasks behind a link whose results have not been received, oldest first. */
  async unreceivedOfLink(linkName: string): Promise<ReachRemoteTaskRow[]> {
    return (await this.sql.all(
      "SELECT * FROM reach_remote_tasks WHERE link_name = ? AND received_at IS NULL ORDER BY created_at",
      [linkName],
    )) as ReachRemoteTaskRow[];
  }

  /** The links with a task whose result has not been received, by name. */
  async linksWithUnreceived(): Promise<string[]> {
    return (
      (await this.sql.all(
        "SELECT DISTINCT link_name FROM reach_remote_tasks WHERE received_at IS NULL ORDER BY link_name",
      )) as { link_name: string }[]
    ).map((row) => row.link_name);
  }

  /** Every task of a parent thread, oldest first. */
  async ofParent(parentThreadId: string): Promise<ReachRemoteTaskRow[]> {
    return (await this.sql.all("SELECT * FROM reach_remote_tasks WHERE parent_thread_id = ? ORDER BY created_at", [
      parentThreadId,
    ])) as ReachRemoteTaskRow[];
  }

  /** A parent's tasks whose results were received and not yet delivered, in the order they arrived. */
  async receivedUndelivered(parentThreadId: string): Promise<ReachRemoteTaskRow[]> {
    return (await this.sql.all(
      "SELECT * FROM reach_remote_tasks WHERE parent_thread_id = ? AND received_at IS NOT NULL AND delivered_at IS NULL ORDER BY received_at",
      [parentThreadId],
    )) as ReachRemoteTaskRow[];
  }

  /** How many tasks of a parent run have no result received yet. */
  async countUnreceivedOfRun(parentRunId: string): Promise<number> {
    return (
      (await this.sql.get(
        "SELECT COUNT(*) AS n FROM reach_remote_tasks WHERE parent_run_id = ? AND received_at IS NULL",
        [parentRunId],
      )) as { n: number }
    ).n;
  }

  /** How many tasks a thread tree (by its root thread) ever delegated to linked environments. */
  async countOfTree(rootThreadId: string): Promise<number> {
    return (
      (await this.sql.get("SELECT COUNT(*) AS n FROM reach_remote_tasks WHERE root_thread_id = ?", [rootThreadId])) as {
        n: number;
      }
    ).n;
  }

  /** The link of some task delegated to the environment with this own id, or null. */
  async linkOfEnvironment(environmentId: string): Promise<string | null> {
    return (
      (
        (await this.sql.get("SELECT link_name FROM reach_remote_tasks WHERE environment_id = ? LIMIT 1", [
          environmentId,
        ])) as { link_name: string } | undefined
      )?.link_name ?? null
    );
  }
}
