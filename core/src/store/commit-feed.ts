import type { EntityName, StoredEvent } from "./records.js";

/** One record a commit wrote, named but not carried: who hears it reads the record if it must. */
export interface ChangedRecord {
  readonly entity: EntityName;
  readonly id: string;
  readonly threadId: string | null;
}

/** What one commit changed, as a nudge: the records it wrote, not their contents. */
export interface CommitNudge {
  readonly changes: readonly ChangedRecord[];
}

/**
 * The two ways to hear commits, kept apart because a store with several writers (PostgreSQL,
 * several nodes) can only give them at different prices:
 * - the ordered stream: every committed event once, in sequence order, with its record (the
 *   public event feed and what projects it). It must wait for the log to have no gap, so it
 *   comes from reading the log at a safe position.
 * - the nudge: which records changed, unordered, possibly coalesced or late, never with the
 *   records (waits, timers, the scheduler). Hearing one only means "read again": it costs a
 *   notification, and whoever hears it reads what it needs from the store.
 * On SQLite both are heard right after each commit, ordered stream first.
 */
export class CommitFeed {
  private readonly ordered = new Set<(events: readonly StoredEvent[]) => void>();
  private readonly nudged = new Set<(nudge: CommitNudge) => void>();

  /** Hears every committed batch of events, in sequence order, until the returned function is called. */
  onOrdered(listener: (events: readonly StoredEvent[]) => void): () => void {
    this.ordered.add(listener);
    return () => this.ordered.delete(listener);
  }

  /** Hears which records each commit changed, until the returned function is called. */
  onNudge(listener: (nudge: CommitNudge) => void): () => void {
    this.nudged.add(listener);
    return () => this.nudged.delete(listener);
  }

  /** Tells both kinds of listener about a batch that just committed. */
  publish(events: readonly StoredEvent[]): void {
    for (const listener of this.ordered) listener(events);
    if (this.nudged.size === 0) return;
    const nudge: CommitNudge = { changes: events.map(changedRecord) };
    for (const listener of this.nudged) listener(nudge);
  }
}

function changedRecord(event: StoredEvent): ChangedRecord {
  return { entity: event.entity, id: (event.record as { id: string }).id, threadId: event.threadId };
}
