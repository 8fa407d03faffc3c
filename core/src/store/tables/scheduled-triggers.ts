import type { EventStore } from "../ports.js";

/** Queries over the `scheduled_triggers` projection that its typed reads do not cover. */
export class ScheduledTriggersTable {
  constructor(private readonly store: EventStore) {}

  /** The tasks (deleted ones included) with a trigger created before `cutoff` (ISO). */
  async taskIdsWithTriggersBefore(cutoff: string): Promise<string[]> {
    const rows = this.store
      .statement("SELECT DISTINCT task_id FROM scheduled_triggers WHERE created_at < ?")
      .all(cutoff) as { task_id: string }[];
    return rows.map((row) => row.task_id);
  }
}
