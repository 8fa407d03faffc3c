import type { LiveOutputFeed } from "../../engine/ports.js";
import type { CommittedReader } from "../../engine/projection-reader.js";
import type { EventFilter } from "./event-filter.js";
import { LiveOutputRelay, type LiveOutputSink } from "./live-output-relay.js";
import type { FeedBatch, FeedEvent, PublicEventFeed } from "./public-event-feed.js";
import { PublicEventProjector } from "./public-event-projector.js";

/** Where a cursor's events go: a client connection that may fill up. */
export interface EventSink extends LiveOutputSink {
  /**
   * Hands events to the client without waiting. Returns false when the client has fallen too
   * far behind and was cut off (the sink closes itself); the cursor stops then.
   */
  send(events: readonly FeedEvent[]): boolean;
  /** True while the client has enough unread: a replay waits for `drained` before reading on. */
  readonly saturated: boolean;
  /** Resolves true once the client read enough to go on, false if it is gone. */
  drained(): Promise<boolean>;
}

/** How many log events a replay reads at a time. */
const REPLAY_PAGE = 500;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * One client's position in the event log: everything after `after`, in sequence order, each
 * event once. It subscribes to the live feed first, then replays the log in bounded pages at the
 * client's pace, then takes the live batches, skipping what the replay already covered. Live
 * batches never wait on the client: a client that cannot keep up is cut off by its sink, and
 * resumes from its last event id without losing anything.
 *
 * The hand-over from replay to live: the log is read asynchronously, so batches keep arriving
 * while a page is being read. The cursor notes the newest sequence the live feed has handed it
 * meanwhile (`liveReached`) and goes live only when a page came back short (the end of the log
 * as that read saw it) and its position has reached `liveReached`; otherwise it reads again from
 * its position. From then on every batch starts at or before the position (the feed hands out
 * batches in commit order, each after the last), so nothing is skipped, and events at or before
 * the position are dropped, so nothing is sent twice. A batch that starts after the position
 * (the feed restarted) sends the cursor back to the log.
 */
export class EventCursor {
  private position: number;
  private replaying = false;
  /** The newest sequence a live batch handed this cursor while it was replaying. */
  private liveReached = 0;
  private closed = false;
  private unsubscribe: (() => void) | null = null;
  private readonly liveOutput: LiveOutputRelay | null;

  constructor(
    private readonly feed: PublicEventFeed,
    private readonly reader: CommittedReader,
    private readonly filter: EventFilter,
    after: number,
    private readonly sink: EventSink,
    /** Also relay streamed output (`liveOutput=true`), once the replay has caught up. */
    liveOutput: LiveOutputFeed | null = null,
  ) {
    this.position = after;
    this.liveOutput =
      liveOutput === null
        ? null
        : new LiveOutputRelay(liveOutput, filter, feed.directory, sink, () => !this.replaying && !this.closed);
  }

  /** The newest log sequence this cursor has looked at (sent or filtered out). */
  get sequence(): number {
    return this.position;
  }

  start(): void {
    this.unsubscribe = this.feed.subscribe((batch) => this.onBatch(batch));
    this.liveOutput?.start();
    void this.replay();
  }

  close(): void {
    this.closed = true;
    this.liveOutput?.close();
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  private onBatch(batch: FeedBatch): void {
    if (this.closed) return;
    if (this.replaying) {
      // The replay reads the log until it has reached this batch too.
      this.liveReached = Math.max(this.liveReached, batch.lastSequence);
      return;
    }
    if (batch.afterSequence > this.position) {
      // Only a replay knows what lies in between.
      this.liveReached = Math.max(this.liveReached, batch.lastSequence);
      void this.replay();
      return;
    }
    const out: FeedEvent[] = [];
    for (const feedEvent of batch.events)
      if (feedEvent.event.sequence > this.position && this.filter.matches(feedEvent)) out.push(feedEvent);
    this.position = Math.max(this.position, batch.lastSequence);
    if (out.length > 0 && !this.sink.send(out)) this.close();
  }

  /**
   * Reads the log from the position on until it has caught up with the log's end and with every
   * live batch heard meanwhile; live batches wait meanwhile (see the class).
   */
  private async replay(): Promise<void> {
    if (this.replaying) return;
    this.replaying = true;
    const projector = new PublicEventProjector(this.reader);
    try {
      while (!this.closed) {
        const page = await this.reader.eventsAfter(this.position, REPLAY_PAGE);
        for (const stored of page) {
          if (this.closed) return;
          const feedEvent = await this.feed.projectWith(projector, stored);
          if (this.closed) return;
          this.position = stored.sequence;
          if (feedEvent === null || !this.filter.matches(feedEvent)) continue;
          if (!this.sink.send([feedEvent])) {
            this.close();
            return;
          }
          if (this.sink.saturated && !(await this.sink.drained())) {
            this.close();
            return;
          }
        }
        // Caught up: the end of the log as this read saw it, and every batch heard meanwhile.
        if (page.length < REPLAY_PAGE && this.position >= this.liveReached) return;
        await nextTurn();
      }
    } finally {
      // Synchronous from the caught-up check to here: no live batch can slip between them.
      this.replaying = false;
      if (!this.closed) this.liveOutput?.catchUp();
    }
  }
}
