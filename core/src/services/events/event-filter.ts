import type { PublicEventType } from "./public-events.js";
import type { FeedEvent } from "./public-event-feed.js";
import { isWithin, type ThreadPlace } from "./thread-directory.js";

/**
 * Which events a stream carries. Every condition given must hold (they combine with AND); none
 * given means every event.
 */
export interface EventFilterSpec {
  /** Events of threads in this project. */
  readonly projectId?: string;
  /** Events of this thread (and of its children at any depth with `descendants`). */
  readonly threadId?: string;
  /** With `threadId`: also the events of its sub-agent children, delegated or router-created, at any depth. */
  readonly descendants?: boolean;
  /**
   * A delegated task: its own `task.updated` events and every event of its child thread and of
   * that thread's children at any depth (nested tasks included).
   */
  readonly task?: { readonly taskId: string; readonly childThreadId: string };
  /** Only these event types. */
  readonly types?: readonly PublicEventType[];
  /** The projects the caller's token may use (omitted: every project): nothing else is carried. */
  readonly allowedProjects?: readonly string[];
}

/**
 * Decides, per event, whether a stream carries it. Synchronous: an event comes with its thread's
 * place (project and sub-agent ancestors), resolved once by the ordered stream's stage.
 */
export class EventFilter {
  private readonly types: ReadonlySet<PublicEventType> | null;
  private readonly allowedProjects: ReadonlySet<string> | null;

  constructor(readonly spec: EventFilterSpec) {
    this.types = spec.types !== undefined && spec.types.length > 0 ? new Set(spec.types) : null;
    this.allowedProjects = spec.allowedProjects === undefined ? null : new Set(spec.allowedProjects);
  }

  matches(feedEvent: FeedEvent): boolean {
    const { event } = feedEvent;
    if (this.types !== null && !this.types.has(event.type)) return false;
    const ownTaskUpdate =
      this.spec.task !== undefined &&
      event.type === "task.updated" &&
      (event.data.task as { taskId?: string } | undefined)?.taskId === this.spec.task.taskId;
    return this.matchesPlace(event.threadId, feedEvent.place, ownTaskUpdate);
  }

  /**
   * Whether something of a thread in a project belongs on the stream, whatever its type: the
   * project, thread and task conditions (live output, which has no event type, is placed so).
   */
  matchesPlace(threadId: string, place: ThreadPlace | null, ownTaskUpdate = false): boolean {
    const projectId = place?.projectId ?? null;
    if (this.allowedProjects !== null && (projectId === null || !this.allowedProjects.has(projectId))) return false;
    if (this.spec.projectId !== undefined && projectId !== this.spec.projectId) return false;
    if (this.spec.threadId !== undefined) {
      if (
        threadId !== this.spec.threadId &&
        !(this.spec.descendants === true && isWithin(threadId, place, this.spec.threadId))
      )
        return false;
    }
    const task = this.spec.task;
    if (task !== undefined && !ownTaskUpdate && !isWithin(threadId, place, task.childThreadId)) return false;
    return true;
  }
}
