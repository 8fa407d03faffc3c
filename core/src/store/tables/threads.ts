import { isFalse, type SqlDialect, type TableHost, type TableSql } from "../table-sql.js";
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

function listingWhere(dialect: SqlDialect, listing: ThreadListing): string {
  const live = `project_id = ? AND ${isFalse(dialect, "deleted")}`;
  return listing.includeSubagents ? live : `${live} AND relationship != 'subagent'`;
}

/**
 * One order for every listing read, so a page and a title filter agree on it: newest first,
 * threads made in the same millisecond by insertion on SQLite (`rowid`), by id on PostgreSQL
 * (which has no insertion order).
 */
function newestFirst(dialect: SqlDialect): string {
  return dialect === "postgresql" ? "ORDER BY created_at DESC, id DESC" : "ORDER BY created_at DESC, rowid DESC";
}

/** Queries over the `threads` projection that its typed reads by id do not cover. */
export class ThreadsTable {
  private readonly sql: TableSql;

  constructor(host: TableHost) {
    this.sql = host.tableSql;
  }

  /** A page of a project's listed threads, newest first (the database counts and pages: a call costs its page). */
  async listingPage(projectId: string, listing: ThreadListing, limit: number, offset: number): Promise<ThreadRecord[]> {
    const { dialect } = this.sql;
    const rows = await this.sql.all<{ data: string }>(
      `SELECT data FROM threads WHERE ${listingWhere(dialect, listing)} ${newestFirst(dialect)} LIMIT ? OFFSET ?`,
      [projectId, limit, offset],
    );
    return rows.map((row) => JSON.parse(row.data) as ThreadRecord);
  }

  /** How many threads a project's listing holds. */
  async listingCount(projectId: string, listing: ThreadListing): Promise<number> {
    return (await this.sql.get<{ n: number }>(
      `SELECT COUNT(*) AS n FROM threads WHERE ${listingWhere(this.sql.dialect, listing)}`,
      [projectId],
    ))!.n;
  }

  /** Every listed thread's id and title, newest first, without reading the records. */
  async listingTitles(projectId: string, listing: ThreadListing): Promise<{ id: string; title: string }[]> {
    const { dialect } = this.sql;
    return this.sql.all<{ id: string; title: string }>(
      `SELECT id, title FROM threads WHERE ${listingWhere(dialect, listing)} ${newestFirst(dialect)}`,
      [projectId],
    );
  }

  /**
   * {@link ThreadShellFacts} of each thread, in one statement for a whole page: the same indexed
   * lookups a shell makes one by one (services/thread-views.ts: the active-or-latest run, the
   * queued runs, the pending background tasks), without three round trips per thread (a page
   * of 100 shells was 300 statements, most of a listing's time). The ids go in as one JSON
   * array, unpacked by SQLite's `json_each` or PostgreSQL's `jsonb_array_elements_text`.
   */
  async shellFacts(threadIds: readonly string[]): Promise<Map<string, ThreadShellFacts>> {
    // An empty page (a new project, or a page past the end) has nothing to read.
    if (threadIds.length === 0) return new Map();
    const postgres = this.sql.dialect === "postgresql";
    // `+status` keeps SQLite off the status index (the thread's runs are fewer); PostgreSQL's planner needs no hint.
    const queued = postgres ? "status = 'queued'" : "+status = 'queued'";
    const ids = postgres ? "jsonb_array_elements_text(CAST(? AS jsonb)) AS j(value)" : "json_each(?) j";
    const rows = await this.sql.all<{
      threadId: string;
      latestRun: string | null;
      queuedRuns: number;
      pendingBackgroundTasks: number;
    }>(
      `SELECT j.value AS "threadId",
          (SELECT data FROM runs WHERE thread_id = j.value
            ORDER BY status IN ('starting', 'running', 'waiting') DESC, ordinal DESC LIMIT 1) AS "latestRun",
          (SELECT COUNT(*) FROM runs WHERE thread_id = j.value AND ${queued}) AS "queuedRuns",
          (SELECT COUNT(*) FROM delegated_tasks WHERE parent_thread_id = j.value
            AND (status NOT IN ('completed', 'failed', 'cancelled', 'interrupted') OR ${isFalse(this.sql.dialect, "finalized")})) AS "pendingBackgroundTasks"
        FROM ${ids}`,
      [JSON.stringify(threadIds)],
    );
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
    return (await this.sql.get("SELECT 1 FROM threads WHERE parent_thread_id = ? LIMIT 1", [threadId])) !== undefined;
  }

  /** Threads not deleted, across every project. */
  async countLive(): Promise<number> {
    return (await this.sql.get<{ n: number }>(
      `SELECT COUNT(*) AS n FROM threads WHERE ${isFalse(this.sql.dialect, "deleted")}`,
    ))!.n;
  }
}
