import { z } from "zod";
import { OrchestratorFailure } from "../../../../engine/orchestrator-failure.js";
import { PUBLIC_EVENT_TYPES } from "../../../../services/events/public-events.js";
import { defineRoute } from "../api-route.js";

const EventsQuery = z
  .object({
    projectId: z.string().min(1).optional().describe("Only events of this project."),
    threadId: z.string().min(1).optional().describe("Only events of this thread (and, with descendants, of its children)."),
    descendants: z.boolean().optional().describe("With threadId: the thread's children, grandchildren… too."),
    taskId: z.string().min(1).optional().describe("Only events of this delegated task and its child thread."),
    types: z.array(z.string().min(1)).optional().describe(`Only these event types (repeated or comma-separated): ${PUBLIC_EVENT_TYPES.join(", ")}.`),
    liveOutput: z
      .boolean()
      .optional()
      .describe(
        "Also send output.delta frames: assistant text and reasoning as the provider streams them, before the item is complete. They are not in the log and have no id; the completed item follows as a message or item event. The first frame for an item carries its text so far (offset 0).",
      ),
    after: z.number().int().min(0).optional().describe("Replay from the log after this event id (0: the whole log). A Last-Event-ID header wins: a reconnecting EventSource keeps its URL."),
  })
  .strict();

/** One event as the stream sends it: its `id:` is `sequence`, its `event:` is `type`, this is its `data:`. */
const StreamedEvent = z.object({
  sequence: z.number().int(),
  type: z.enum(PUBLIC_EVENT_TYPES),
  at: z.string().describe("When the change committed."),
  projectId: z.string().nullable(),
  threadId: z.string().describe("The thread it belongs to (a task's parent thread for task.updated)."),
  data: z.record(z.string(), z.unknown()),
});

/** An output.delta frame (liveOutput=true): a piece of streamed text, not in the log, so without sequence or id. */
const LiveOutputDelta = z.object({
  type: z.literal("output.delta"),
  projectId: z.string().nullable(),
  threadId: z.string(),
  data: z.object({
    itemId: z.string().describe("The id the completed item will have (its message or item event)."),
    kind: z.enum(["assistant_message", "reasoning"]),
    offset: z.number().int().describe("Where delta starts in the item's text: 0 carries the whole text so far (the first frame of an item on this stream, or after frames were dropped)."),
    delta: z.string(),
  }),
});

function lastEventId(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header[0]! : header;
  if (!/^\d{1,15}$/.test(value.trim())) throw new OrchestratorFailure("invalid_request", `Last-Event-ID must be an event id (a whole number), not ${JSON.stringify(value)}.`, { field: "Last-Event-ID" });
  return Number(value.trim());
}

export const eventsRoute = defineRoute({
  method: "GET",
  path: "/events",
  operationId: "streamEvents",
  summary: "Push events as Server-Sent Events, resumable with Last-Event-ID",
  description:
    "A text/event-stream of what happens to threads, runs, messages, items, delegated tasks and pending requests, projected from the event log: each frame's id is the log sequence, so a client that reconnects with Last-Event-ID (or after=) misses nothing and sees nothing twice. Without a resume point the stream starts at the newest event. Heartbeat comments keep it open; a client that cannot keep up is cut off and resumes from its last id. With liveOutput=true it also carries output.delta frames (no id) with text as it streams. Counted against server.maxEventStreams.",
  tag: "events",
  requires: "orchestration:read",
  query: EventsQuery,
  input: EventsQuery,
  output: z.union([StreamedEvent, LiveOutputDelta]),
  outputName: "StreamedEvent",
  produces: "text/event-stream",
  handle: (input, { caller, services, request, response }) => {
    services.eventStreams.serve(request, response, caller, { ...input, after: lastEventId(request.headers["last-event-id"]) ?? input.after, allowedProjects: caller.projects });
  },
});
