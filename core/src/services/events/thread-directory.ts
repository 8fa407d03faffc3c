import type { CommittedReader } from "../../engine/projection-reader.js";
import type { ThreadRecord } from "../../store/records.js";

/** What event routing needs to know about a thread; none of it changes after creation. */
export interface ThreadPlace {
  readonly projectId: string;
  readonly parentThreadId: string | null;
  readonly relationship: ThreadRecord["lineage"]["relationship"];
  /**
   * The threads this one is a sub-agent child of, nearest first: its parent while it is a
   * sub-agent (delegated task or router child), that parent's parent while the parent is one,
   * and so on (at most {@link MAX_DEPTH}). A fork is a peer, so the chain stops there.
   */
  readonly ancestors: readonly string[];
}

const CAPACITY = 10_000;
/** How far up a chain of sub-agents `ancestors` reaches. */
const MAX_DEPTH = 64;

/**
 * A thread's project, parent and sub-agent ancestors, read once from the store and remembered (a
 * thread never moves to another project or parent, so a remembered answer never goes stale).
 * Reading is asynchronous (`resolve`); what was resolved is known synchronously (`known`), which
 * is how the ordered stream's stage hands filters a thread's place without a read per stream.
 */
export class ThreadDirectory {
  private readonly places = new Map<string, ThreadPlace>();
  /** Reads under way, shared by whoever asks meanwhile (so their answers come in the order they asked). */
  private readonly reading = new Map<string, Promise<ThreadPlace | null>>();

  constructor(private readonly reader: CommittedReader) {}

  /** The remembered place of a thread, or undefined when it was not resolved (or was forgotten). */
  known(threadId: string): ThreadPlace | undefined {
    return this.places.get(threadId);
  }

  /** The thread's place, read from the store the first time; null for a thread not (yet) readable. */
  resolve(threadId: string): Promise<ThreadPlace | null> {
    const known = this.places.get(threadId);
    if (known !== undefined) return Promise.resolve(known);
    if (!this.reading.has(threadId))
      this.reading.set(
        threadId,
        this.read(threadId).finally(() => this.reading.delete(threadId)),
      );
    return this.reading.get(threadId)!;
  }

  private async read(threadId: string): Promise<ThreadPlace | null> {
    const thread = await this.reader.get("thread", threadId);
    if (thread === null) return null;
    const { parentThreadId, relationship } = thread.lineage;
    // Complete only when the chain ends at a thread that was read (or at the depth limit): a
    // chain cut short by an unreadable parent is answered, not remembered.
    let complete = true;
    const ancestors: string[] = [];
    if (relationship === "subagent" && parentThreadId !== null) {
      ancestors.push(parentThreadId);
      const parent = await this.resolve(parentThreadId);
      // The parent's own chain is known whole (or not): take it instead of walking it again.
      if (parent === null) complete = false;
      else {
        ancestors.push(...parent.ancestors.slice(0, MAX_DEPTH - 1));
        complete = this.places.has(parentThreadId);
      }
    }
    const place: ThreadPlace = { projectId: thread.projectId, parentThreadId, relationship, ancestors };
    // An unknown thread is not remembered: its creation may simply not be read yet.
    if (complete) {
      if (this.places.size >= CAPACITY) this.places.delete(this.places.keys().next().value!);
      this.places.set(threadId, place);
    }
    return place;
  }
}

/**
 * Whether a thread in `place` is `ancestorId` or one of its sub-agent children, at any depth.
 * Children are sub-agent threads (delegated tasks and router children); a fork is a peer, not a child.
 */
export function isWithin(threadId: string, place: ThreadPlace | null, ancestorId: string): boolean {
  if (threadId === ancestorId) return true;
  return place !== null && place.ancestors.includes(ancestorId);
}
