import type { EventStore } from "../ports.js";

/** Queries over the `runs` projection that its typed reads do not cover. */
export class RunsTable {
  constructor(private readonly store: EventStore) {}

  /** The threads that have a queued run. */
  async threadsWithQueuedRuns(): Promise<string[]> {
    const rows = this.store.statement("SELECT DISTINCT thread_id FROM runs WHERE status = 'queued'").all() as {
      thread_id: string;
    }[];
    return rows.map((row) => row.thread_id);
  }

  /** How many threads have a run starting, running or waiting. */
  async countThreadsWithActiveRuns(): Promise<number> {
    return (
      this.store
        .statement("SELECT COUNT(DISTINCT thread_id) AS n FROM runs WHERE status IN ('starting', 'running', 'waiting')")
        .get() as { n: number }
    ).n;
  }
}
