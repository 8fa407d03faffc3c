import type { LiveOutputChunk, LiveOutputFeed } from "../../engine/ports.js";
import { providerItemId } from "../../engine/turn-items.js";
import type { EventFilter } from "./event-filter.js";
import type { ThreadDirectory, ThreadPlace } from "./thread-directory.js";

/** The SSE event type of a piece of streamed output. */
export const LIVE_OUTPUT_EVENT = "output.delta";

/** Where a stream's live output goes: written at once, or dropped when the client has enough unread. */
export interface LiveOutputSink {
  /** Writes one frame without an id (it is not in the log); false when the client was too far behind to take it. */
  sendUnlogged(type: string, json: string): boolean;
}

/** How many items' positions one stream remembers before starting over (each then resends its text whole once). */
const MAX_TRACKED_ITEMS = 1_000;

/**
 * One stream's share of the live output (`liveOutput=true`): assistant text and reasoning as the
 * provider streams it, before the item is complete and written to the log. Frames carry no id,
 * so Last-Event-ID stays the log's: a client that reconnects gets the completed item from the
 * log and no stale fragments. The first frame this stream sends for an item carries its whole
 * text so far (offset 0), later ones only what was added; a frame dropped because the client
 * had enough unread makes the next one whole again, so a client's text never has a hole.
 * Deltas exist only in the process whose harness streams them: nothing is stored.
 */
export class LiveOutputRelay {
  /** Items this stream has sent text of, to the offset it reached. */
  private readonly sent = new Map<string, number>();
  private stop: (() => void) | null = null;

  constructor(
    private readonly feed: LiveOutputFeed,
    private readonly filter: EventFilter,
    private readonly directory: ThreadDirectory,
    private readonly sink: LiveOutputSink,
    /** False while the stream replays the log: deltas wait until it is live. */
    private readonly isLive: () => boolean,
  ) {}

  start(): void {
    this.stop ??= this.feed.onChunk((chunk) => {
      // The feed calls listeners inside the provider's event handling: nothing may escape.
      const place = this.directory.known(chunk.threadId);
      if (place !== undefined) {
        this.relayPlaced(chunk, place);
        return;
      }
      // A thread not placed yet: its chunks wait for one shared read, in the order they came,
      // and what arrives after the read sees it known.
      this.directory.resolve(chunk.threadId).then(
        (resolved) => this.relayPlaced(chunk, resolved),
        () => this.sent.delete(this.keyOf(chunk)),
      );
    });
  }

  private relayPlaced(chunk: LiveOutputChunk, place: ThreadPlace | null): void {
    if (this.stop === null) return;
    try {
      this.relay(chunk, place);
    } catch {
      this.sent.delete(this.keyOf(chunk));
    }
  }

  /**
   * Sends what is streaming now, whole (the stream just caught up with the log, so a reader
   * that arrived mid-reply sees the reply so far without waiting for its next piece).
   */
  catchUp(): void {
    for (const buffered of this.feed.buffered()) {
      const whole = { ...buffered, delta: buffered.text };
      this.sent.delete(this.keyOf(buffered));
      const place = this.directory.known(buffered.threadId);
      if (place !== undefined) this.relayPlaced(whole, place);
      else
        this.directory.resolve(buffered.threadId).then(
          (resolved) => this.relayPlaced(whole, resolved),
          () => this.sent.delete(this.keyOf(buffered)),
        );
    }
  }

  close(): void {
    this.stop?.();
    this.stop = null;
    this.sent.clear();
  }

  private keyOf(chunk: Pick<LiveOutputChunk, "attemptId" | "itemId" | "kind">): string {
    return providerItemId(chunk.attemptId, chunk.kind === "assistant_message" ? "message" : "reasoning", chunk.itemId);
  }

  private relay(chunk: LiveOutputChunk, place: ThreadPlace | null): void {
    const itemId = this.keyOf(chunk);
    if (!this.isLive()) {
      this.sent.delete(itemId);
      return;
    }
    const projectId = place?.projectId ?? null;
    if (!this.filter.matchesPlace(chunk.threadId, place)) return;
    const whole = this.feed.textSoFar(chunk.attemptId, chunk.itemId, chunk.kind) ?? chunk.delta;
    const reached = this.sent.get(itemId);
    const offset = reached !== undefined && reached === whole.length - chunk.delta.length ? reached : 0;
    const delta = offset === 0 ? whole : chunk.delta;
    const json = JSON.stringify({
      type: LIVE_OUTPUT_EVENT,
      projectId,
      threadId: chunk.threadId,
      data: { itemId, kind: chunk.kind, offset, delta },
    });
    if (!this.sink.sendUnlogged(LIVE_OUTPUT_EVENT, json)) {
      this.sent.delete(itemId);
      return;
    }
    if (!this.sent.has(itemId) && this.sent.size >= MAX_TRACKED_ITEMS) this.sent.clear();
    this.sent.set(itemId, whole.length);
  }
}
