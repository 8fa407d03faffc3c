import { API_BASE } from "./client.js";
import type { StreamedEvent } from "./types.js";

/** The pushed event types the UI reacts to (GET /api/v1/events). */
const TYPES = [
  "thread.created",
  "thread.settled",
  "thread.renamed",
  "run.started",
  "run.finished",
  "message",
  "item",
  "task.updated",
  "request.opened",
  "request.answered",
  "request.closed",
] as const;

export type StreamState = "connecting" | "live" | "reconnecting" | "closed";

/**
 * Follows the API's event stream with the browser's EventSource, which reconnects by itself
 * and sends Last-Event-ID, so nothing is missed or seen twice across a drop. The stream is
 * the UI's only source of change: there is no polling. A stream that drops before its first
 * event has no id to resume from, so `onResync` asks for a fresh read once it is back.
 */
export function followEvents(onEvent: (event: StreamedEvent) => void, onState: (state: StreamState) => void, onResync: () => void): () => void {
  const source = new EventSource(`${API_BASE}/events`);
  let seenEvent = false;
  let dropped = false;
  onState("connecting");
  source.onopen = () => {
    onState("live");
    if (dropped && !seenEvent) onResync();
    dropped = false;
  };
  // CLOSED: the server refused the stream (a session that ended); the app checks the session.
  source.onerror = () => {
    dropped = true;
    onState(source.readyState === EventSource.CLOSED ? "closed" : "reconnecting");
  };
  const handle = (message: MessageEvent<string>) => {
    seenEvent = true;
    try {
      onEvent(JSON.parse(message.data) as StreamedEvent);
    } catch {
      // A frame that is not an event is ignored.
    }
  };
  for (const type of TYPES) source.addEventListener(type, handle as EventListener);
  return () => source.close();
}
