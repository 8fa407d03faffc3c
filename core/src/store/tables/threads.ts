import type { EventStore } from "../ports.js";
import type { ThreadRecord } from "../records.js";

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
  listingPage(projectId: string, listing: ThreadListing, limit: number, offset: number): ThreadRecord[] {
    return this.store.select(
      "thread",
      listingWhere(listing),
      [projectId, limit, offset],
      `${NEWEST_FIRST} LIMIT ? OFFSET ?`,
    );
  }

  /** How many threads a project's listing holds. */
  listingCount(projectId: string, listing: ThreadListing): number {
    return this.store.count("thread", listingWhere(listing), [projectId]);
  }

  /** Every listed thread's id and title, newest first, without reading the records. */
  listingTitles(projectId: string, listing: ThreadListing): { id: string; title: string }[] {
    return this.store
      .statement(`SELECT id, title FROM threads WHERE ${listingWhere(listing)} ${NEWEST_FIRST}`)
      .all(projectId) as { id: string; title: string }[];
  }

  /** The thread has a child thread (a sub-agent's or a fork). */
  hasChildren(threadId: string): boolean {
    return this.store.statement("SELECT 1 FROM threads WHERE parent_thread_id = ? LIMIT 1").get(threadId) !== undefined;
  }

  /** Threads not deleted, across every project. */
  countLive(): number {
    return (this.store.statement("SELECT COUNT(*) AS n FROM threads WHERE deleted = 0").get() as { n: number }).n;
  }
}
