import type { ThreadRecord } from "../../store/records.js";
import type { EventStore } from "../../store/ports.js";

/** What event routing needs to know about a thread; none of it changes after creation. */
export interface ThreadPlace {
  readonly projectId: string;
  readonly parentThreadId: string | null;
  readonly relationship: ThreadRecord["lineage"]["relationship"];
}

const CAPACITY = 10_000;

/**
 * A thread's project and parent, read once from the store and remembered (a thread never moves
 * to another project or parent, so a remembered answer never goes stale).
 */
export class ThreadDirectory {
  private readonly places = new Map<string, ThreadPlace | null>();

  constructor(private readonly store: EventStore) {}

  place(threadId: string): ThreadPlace | null {
    const known = this.places.get(threadId);
    if (known !== undefined) return known;
    // eslint-disable-next-line no-restricted-syntax -- the ordered stream's synchronous stage; async with the port (docs/decisions/0010)
    const thread = this.store.get("thread", threadId);
    const place =
      thread === null
        ? null
        : {
            projectId: thread.projectId,
            parentThreadId: thread.lineage.parentThreadId,
            relationship: thread.lineage.relationship,
          };
    // An unknown thread is not remembered: its creation may simply not be read yet.
    if (place !== null) {
      if (this.places.size >= CAPACITY) this.places.delete(this.places.keys().next().value!);
      this.places.set(threadId, place);
    }
    return place;
  }

  /**
   * Whether `threadId` is `ancestorId` or one of its children, at any depth. Children are
   * sub-agent threads (delegated tasks and router children); a fork is a peer, not a child.
   */
  isWithin(threadId: string, ancestorId: string): boolean {
    let current: string | null = threadId;
    for (let depth = 0; current !== null && depth <= 64; depth += 1) {
      if (current === ancestorId) return true;
      const place = this.place(current);
      if (place === null || place.relationship !== "subagent") return false;
      current = place.parentThreadId;
    }
    return false;
  }
}
