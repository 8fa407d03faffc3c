import { inject, injectable } from "tsyringe";
import type { Engine } from "../../engine/engine.js";
import { type LiveOutputFeed, EngineToken, LiveOutputToken } from "../../engine/ports.js";
import { OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import type { Caller } from "../caller.js";
import { EventCursor, type EventSink } from "./event-cursor.js";
import { EventFilter, type EventFilterSpec } from "./event-filter.js";
import { PublicEventFeed } from "./public-event-feed.js";
import { PUBLIC_EVENT_TYPES, type PublicEventType } from "./public-events.js";

/** What a client asks a stream for (`GET /api/v1/events` query and `Last-Event-ID`). */
export interface OpenEventStreamInput {
  readonly projectId?: string | undefined;
  readonly threadId?: string | undefined;
  readonly descendants?: boolean | undefined;
  readonly taskId?: string | undefined;
  readonly types?: readonly string[] | undefined;
  /** Also send `output.delta` frames: assistant text and reasoning as they stream (not in the log, no id). */
  readonly liveOutput?: boolean | undefined;
  /** Start after this log sequence (the last event id the client saw); omitted: from now on. */
  readonly after?: number | undefined;
  /**
   * The projects the caller's token may use ("*" or omitted: every project). The stream carries
   * nothing from other projects, and naming a thread or task there answers as if it did not exist.
   */
  readonly allowedProjects?: "*" | readonly string[] | undefined;
}

/**
 * Opens event streams: checks what a caller asks for against the store (every named project,
 * thread and task must exist, a resume point must be in the log) and hands back a cursor that
 * replays from the log and then follows the live feed.
 */
@injectable()
export class EventStreamService {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    private readonly feed: PublicEventFeed,
    @inject(LiveOutputToken) private readonly liveOutput: LiveOutputFeed,
  ) {}

  /**
   * Validates the request and returns a cursor writing to `sink`, not started yet: the transport
   * answers its headers first, then calls `start()`. Throws typed failures.
   */
  async open(caller: Caller, input: OpenEventStreamInput, sink: EventSink): Promise<EventCursor> {
    if (!caller.capabilities.has("orchestration:read")) {
      throw new OrchestratorFailure(
        "capability_denied",
        "This credential lacks the orchestration:read capability that the event stream needs.",
        { required: "orchestration:read" },
      );
    }
    return new EventCursor(
      this.feed,
      this.engine.reader,
      new EventFilter(await this.filterSpec(input)),
      await this.startAfter(input.after),
      sink,
      input.liveOutput === true ? this.liveOutput : null,
    );
  }

  private async startAfter(after: number | undefined): Promise<number> {
    const newest = await this.engine.reader.lastSequence();
    if (after === undefined) return newest;
    if (!Number.isSafeInteger(after) || after < 0) {
      throw new OrchestratorFailure(
        "invalid_request",
        `The resume point must be an event id (a whole number of at least 0), not ${JSON.stringify(after)}.`,
        { field: "Last-Event-ID" },
      );
    }
    if (after > newest) {
      throw new OrchestratorFailure(
        "invalid_request",
        `Event id ${after} is newer than this server's newest event (${newest}): it comes from another Switchyard home. Reconnect without Last-Event-ID (or with after=0 to replay the whole log).`,
        { field: "Last-Event-ID", newest },
      );
    }
    return after;
  }

  private async filterSpec(input: OpenEventStreamInput): Promise<EventFilterSpec> {
    const allowed = input.allowedProjects === undefined || input.allowedProjects === "*" ? null : input.allowedProjects;
    const visible = (projectId: string) => allowed === null || allowed.includes(projectId);
    if (input.projectId !== undefined && (await this.engine.reader.get("project", input.projectId)) === null) {
      throw new OrchestratorFailure("invalid_request", `Project ${input.projectId} does not exist.`, {
        projectId: input.projectId,
      });
    }
    if (input.projectId !== undefined && !visible(input.projectId)) {
      throw new OrchestratorFailure(
        "capability_denied",
        `This token may use only the projects ${allowed!.join(", ") || "(none)"}, not ${input.projectId}.`,
        { projectId: input.projectId },
      );
    }
    if (input.threadId !== undefined) {
      const thread = await this.engine.reader.get("thread", input.threadId);
      if (thread === null || thread.deletedAt !== null || !visible(thread.projectId))
        throw new OrchestratorFailure("thread_not_found", `Thread ${input.threadId} does not exist.`, {
          threadId: input.threadId,
        });
    } else if (input.descendants === true) {
      throw new OrchestratorFailure(
        "invalid_request",
        "descendants needs threadId: it widens a thread's stream to the thread's children.",
        { field: "descendants" },
      );
    }
    let task: EventFilterSpec["task"];
    if (input.taskId !== undefined) {
      const record = await this.engine.reader.get("delegatedTask", input.taskId);
      const parent = record === null ? null : await this.engine.reader.get("thread", record.parentThreadId);
      if (record === null || parent === null || !visible(parent.projectId))
        throw new OrchestratorFailure("task_not_found", `Task ${input.taskId} does not exist.`, {
          taskId: input.taskId,
        });
      task = { taskId: record.id, childThreadId: record.childThreadId };
    }
    let types: PublicEventType[] | undefined;
    if (input.types !== undefined) {
      const unknown = input.types.filter((type) => !(PUBLIC_EVENT_TYPES as readonly string[]).includes(type));
      if (unknown.length > 0) {
        throw new OrchestratorFailure(
          "invalid_request",
          `Unknown event type ${unknown.map((type) => JSON.stringify(type)).join(", ")}; the types are ${PUBLIC_EVENT_TYPES.join(", ")}.`,
          { field: "types", unknown },
        );
      }
      types = input.types as PublicEventType[];
    }
    return {
      ...(input.projectId !== undefined ? { projectId: input.projectId } : {}),
      ...(input.threadId !== undefined ? { threadId: input.threadId, descendants: input.descendants === true } : {}),
      ...(task !== undefined ? { task } : {}),
      ...(types !== undefined ? { types } : {}),
      ...(allowed !== null ? { allowedProjects: allowed } : {}),
    };
  }
}
