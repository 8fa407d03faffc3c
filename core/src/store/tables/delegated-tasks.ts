import type { EventStore } from "../ports.js";

/** Queries over the `delegated_tasks` projection that its typed reads do not cover. */
export class DelegatedTasksTable {
  constructor(private readonly store: EventStore) {}

  /** When the oldest unfinalized task of a root thread's tree was created (ISO), or null when none is. */
  async oldestUnfinalizedCreatedAt(rootThreadId: string): Promise<string | null> {
    const row = this.store
      .statement("SELECT MIN(created_at) AS started FROM delegated_tasks WHERE root_thread_id = ? AND finalized = 0")
      .get(rootThreadId) as { started: string | null };
    return row.started;
  }

  /** The root threads whose tree has a task not finalized yet. */
  async rootsWithUnfinalizedTasks(): Promise<string[]> {
    const rows = this.store
      .statement("SELECT DISTINCT root_thread_id AS rootThreadId FROM delegated_tasks WHERE finalized = 0")
      .all() as { rootThreadId: string }[];
    return rows.map((row) => row.rootThreadId);
  }
}
