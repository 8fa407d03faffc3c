import type { EventStore } from "../ports.js";
import type { RunRecord, ThreadRecord } from "../records.js";

/** What a thread's list shell shows beyond its record, read for a page of threads at once. */
export interface ThreadShellFacts {
  /** Its active run (starting, running or waiting), else its latest, else null. */
  readonly latestRun: RunRecord | null;
  /** How many of its runs are queued. */
  readonly queuedRuns: number;
  /** Its delegated tasks not yet done: unfinished, or finished and not finalized. */
  readonly pendingBackgroundTasks: number;
}

/** Which of a project's threads a listing shows: sub-agents' own threads only when asked. */
export interface ThreadListing {
  readonly includeSubagents: boolean;
}

function listingWhere(listing: ThreadListing): string {
  return listing.includeSubagents
    ? "project_id = ? AND deleted = 0"
    : "project_id = ? AND deleted = 0 AND relationship != 'subagent'";
}

// One order for every listing read, so a page and a title filter agree on it.
const NEWEST_FIRST = "ORDER BY created_at DESC, rowid DESC";

/** Queries over the `threads` projection that its typed reads by id do not cover. */
export class ThreadsTable {
  constructor(private readonly store: EventStore) {}

  /** A page of a project's listed threads, newest first (SQLite counts and pages: a call costs its page). */
  async listingPage(projectId: string, listing: ThreadListing, limit: number, offset: number): Promise<ThreadRecord[]> {
    return this.store.select(
      "thread",
      listingWhere(listing),
      [projectId, limit, offset],
      `${NEWEST_FIRST} LIMIT ? OFFSET ?`,
    );
  }

  /** How many threads a project's listing holds. */
  async listingCount(projectId: string, listing: ThreadListing): Promise<number> {
    return this.store.count("thread", listingWhere(listing), [projectId]);
  }

  /** Every listed thread's id and title, newest first, without reading the records. */
  async listingTitles(projectId: string, listing: ThreadListing): Promise<{ id: string; title: string }[]> {
    return this.store
      .statement(`SELECT id, title FROM threads WHERE ${listingWhere(listing)} ${NEWEST_FIRST}`)
      .all(projectId) as { id: string; title: string }[];
  }

  /**
   * {@link ThreadShellFacts} of each thread, in one statement for a whole page: the same indexed
   * lookups a shell makes one by one (services/thread-views.ts: the active-or-latest run, the
   * queued runs, the pending background tasks), without three round trips per thread (a page
   * of 100 shells was 300 statements, most of a listing's time).
   */
  async shellFacts(threadIds: readonly string[]): Promise<Map<string, ThreadShellFacts>> {
    // An empty page (a new project, or a page past the end) has nothing to read.
    if (threadIds.length === 0) return new Map();
    const rows = this.store
      .statement(
        `SELECT j.value AS threadId,
          (SELECT data FROM runs WHERE thread_id = j.value
            ORDER BY status IN ('starting', 'running', 'waiting') DESC, ordinal DESC LIMIT 1) AS latestRun,
          (SELECT COUNT(*) FROM runs WHERE thread_id = j.value AND +status = 'queued') AS queuedRuns,
          (SELECT COUNT(*) FROM delegated_tasks WHERE parent_thread_id = j.value
            AND (status NOT IN ('completed', 'failed', 'cancelled', 'interrupted') OR finalized = 0)) AS pendingBackgroundTasks
        FROM json_each(?) j`,
      )
      .all(JSON.stringify(threadIds)) as {
      threadId: string;
      latestRun: string | null;
      queuedRuns: number;
      pendingBackgroundTasks: number;
    }[];
    return new Map(
      rows.map((row) => [
        row.threadId,
        {
          latestRun: row.latestRun === null ? null : (JSON.parse(row.latestRun) as RunRecord),
          queuedRuns: row.queuedRuns,
          pendingBackgroundTasks: row.pendingBackgroundTasks,
        },
      ]),
    );
  }

  /** The thread has a child thread (a sub-agent's or a fork). */
  async hasChildren(threadId: string): Promise<boolean> {
    return this.store.statement("SELECT 1 FROM threads WHERE parent_thread_id = ? LIMIT 1").get(threadId) !== undefined;
  }

  /** Threads not deleted, across every project. */
  async countLive(): Promise<number> {
    return (this.store.statement("SELECT COUNT(*) AS n FROM threads WHERE deleted = 0").get() as { n: number }).n;
  }
}
