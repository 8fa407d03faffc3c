import { createParser, type EventSourceMessage } from "eventsource-parser";
import { API_BASE, sessionHeaders } from "./client.js";
import type { StreamFrame } from "./types.js";

/** The pushed event types the UI reacts to (GET /api/v1/events). */
const TYPES = new Set<string>([
  "thread.created",
  "thread.settled",
  "thread.snoozed",
  "thread.renamed",
  "run.started",
  "run.finished",
  "message",
  "item",
  "task.updated",
  "request.opened",
  "request.answered",
  "request.closed",
  "workspace.updated",
  // Text as it streams (liveOutput=true): no id, not in the log.
  "output.delta",
]);

export type StreamState = "connecting" | "live" | "reconnecting" | "closed";

/** How long to wait before reconnecting until the server says (its `retry:` field). */
const DEFAULT_RETRY_MS = 2_000;
/** The longest wait between attempts while the server keeps refusing (a busy server, a full share). */
const MAX_RETRY_MS = 30_000;

/**
 * Follows the API's event stream over fetch, as an EventSource would (reconnecting by itself,
 * sending Last-Event-ID, so nothing is missed or seen twice across a drop), but with the
 * session's page secret in a header: an EventSource cannot send one, and a URL must never
 * carry it. The stream is the UI's only source of change: there is no polling. A stream that
 * drops before its first event has no id to resume from, so `onResync` asks for a fresh read
 * once it is back. It asks for live output too (text as an agent writes it: frames without an
 * id, so they never move the resume point). A refusal of the session (401, 403) closes it for good: the app then checks
 * the session.
 */
export function followEvents(
  onEvent: (event: StreamFrame) => void,
  onState: (state: StreamState) => void,
  onResync: () => void,
): () => void {
  const stopped = new AbortController();
  let lastEventId: string | null = null;
  let retryMs = DEFAULT_RETRY_MS;
  let seenEvent = false;
  let dropped = false;
  let failures = 0;

  const parser = createParser({
    onEvent: (message: EventSourceMessage) => {
      if (message.id !== undefined) lastEventId = message.id;
      if (message.event === undefined || !TYPES.has(message.event)) return;
      // Only a logged event gives a resume point; live output has none.
      if (message.id !== undefined) seenEvent = true;
      try {
        onEvent(JSON.parse(message.data) as StreamFrame);
      } catch {
        // A frame that is not an event is ignored.
      }
    },
    onRetry: (ms) => (retryMs = ms),
  });

  /** One connection: "dropped" when it ended or failed on the way, "refused" when the session was. */
  const connect = async (): Promise<"dropped" | "refused"> => {
    const response = await fetch(`${API_BASE}/events?liveOutput=true`, {
      credentials: "same-origin",
      cache: "no-store",
      signal: stopped.signal,
      headers: {
        accept: "text/event-stream",
        ...sessionHeaders(),
        ...(lastEventId !== null ? { "last-event-id": lastEventId } : {}),
      },
    });
    if (response.status === 401 || response.status === 403) return "refused";
    if (response.status !== 200 || response.body === null) {
      await response.body?.cancel();
      return "dropped";
    }
    failures = 0;
    onState("live");
    if (dropped && !seenEvent) onResync();
    dropped = false;
    parser.reset();
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return "dropped";
      parser.feed(value);
    }
  };

  const run = async () => {
    onState("connecting");
    while (!stopped.signal.aborted) {
      let outcome: "dropped" | "refused";
      try {
        outcome = await connect();
      } catch {
        outcome = "dropped";
      }
      if (stopped.signal.aborted) return;
      if (outcome === "refused") {
        onState("closed");
        return;
      }
      dropped = true;
      failures += 1;
      onState("reconnecting");
      const wait = Math.min(MAX_RETRY_MS, retryMs * 2 ** Math.max(0, failures - 1));
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  };
  void run();
  return () => stopped.abort();
}
