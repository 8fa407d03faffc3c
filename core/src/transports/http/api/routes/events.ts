import { OrchestratorFailure } from "../../../../engine/orchestrator-failure.js";
import { EventsQuery, StreamFrame } from "../../../../contract/stream-events.js";
import { defineRoute } from "../api-route.js";

function lastEventId(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header[0]! : header;
  if (!/^\d{1,15}$/.test(value.trim()))
    throw new OrchestratorFailure(
      "invalid_request",
      `Last-Event-ID must be an event id (a whole number), not ${JSON.stringify(value)}.`,
      { field: "Last-Event-ID" },
    );
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
  output: StreamFrame,
  outputName: "StreamedEvent",
  produces: "text/event-stream",
  handle: async (input, { caller, services, request, response }) => {
    await services.eventStreams.serve(request, response, caller, {
      ...input,
      after: lastEventId(request.headers["last-event-id"]) ?? input.after,
      allowedProjects: caller.projects,
    });
  },
});
