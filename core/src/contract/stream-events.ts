import { z } from "zod";
import { threadReference } from "./fields.js";
import { PUBLIC_EVENT_TYPES } from "../services/events/public-events.js";

/** streamEvents (HTTP API): what happens to threads, runs, tasks and requests, as it commits. */
export const EventsQuery = z
  .object({
    projectId: z.string().min(1).optional().describe("Only events of this project."),
    threadId: threadReference(
      "Only events of this thread (and, with descendants, of its children). The thread",
    ).optional(),
    descendants: z.boolean().optional().describe("With threadId: the thread's children, grandchildren… too."),
    taskId: z.string().min(1).optional().describe("Only events of this delegated task and its child thread."),
    types: z
      .array(z.string().min(1))
      .optional()
      .describe(`Only these event types (repeated or comma-separated): ${PUBLIC_EVENT_TYPES.join(", ")}.`),
    liveOutput: z
      .boolean()
      .optional()
      .describe(
        "Also send output.delta frames: assistant text and reasoning as the provider streams them, before the item is complete. They are not in the log and have no id; the completed item follows as a message or item event. The first frame for an item carries its text so far (offset 0).",
      ),
    after: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        "Replay from the log after this event id (0: the whole log). A Last-Event-ID header wins: a reconnecting EventSource keeps its URL.",
      ),
  })
  .strict();

/** One event as the stream sends it: its `id:` is `sequence`, its `event:` is `type`, this is its `data:`. */
export const StreamedEvent = z.object({
  sequence: z.number().int(),
  type: z.enum(PUBLIC_EVENT_TYPES),
  at: z.string().describe("When the change committed."),
  projectId: z.string().nullable(),
  threadId: z.string().describe("The thread it belongs to (a task's parent thread for task.updated)."),
  data: z.record(z.string(), z.unknown()),
});

/** An output.delta frame (liveOutput=true): a piece of streamed text, not in the log, so without sequence or id. */
export const LiveOutputDelta = z.object({
  type: z.literal("output.delta"),
  projectId: z.string().nullable(),
  threadId: z.string(),
  data: z.object({
    itemId: z.string().describe("The id the completed item will have (its message or item event)."),
    kind: z.enum(["assistant_message", "reasoning"]),
    offset: z
      .number()
      .int()
      .describe(
        "Where delta starts in the item's text: 0 carries the whole text so far (the first frame of an item on this stream, or after frames were dropped).",
      ),
    delta: z.string(),
  }),
});

/** One frame of the stream: a logged event, or (liveOutput=true) a piece of streamed text. */
export const StreamFrame = z.union([StreamedEvent, LiveOutputDelta]);
