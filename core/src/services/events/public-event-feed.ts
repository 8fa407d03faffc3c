import { inject, injectable } from "tsyringe";
import { EngineToken } from "../../engine/ports.js";
import type { Engine } from "../../engine/engine.js";
import { type Logger, LoggerToken } from "../../logging/logger.js";
import type { StoredEvent } from "../../store/records.js";
import { PublicEventProjector } from "./public-event-projector.js";
import type { PublicEvent } from "./public-events.js";
import { ThreadDirectory, type ThreadPlace } from "./thread-directory.js";

/** A public event ready to send: with its thread's project, serialized once for every stream. */
export interface FeedEvent {
  readonly event: PublicEvent;
  readonly projectId: string | null;
  /** The thread's place (project, sub-agent ancestors) as the stage read it: what filters decide on. */
  readonly place: ThreadPlace | null;
  /** `{ sequence, type, at, projectId, threadId, data }` as JSON. */
  readonly json: string;
}

/** One step of the live feed: every log sequence in (afterSequence, lastSequence] was looked at. */
export interface FeedBatch {
  readonly afterSequence: number;
  readonly lastSequence: number;
  /** The public events among them, in sequence order. */
  readonly events: readonly FeedEvent[];
}

/**
 * The live side of the event streams: hears every committed batch of upserts, projects each
 * into its public event once, and hands the result to every subscriber. It is off while nobody
 * subscribes. The commit path only queues the events: projection and fan-out run in a later
 * event-loop turn, and subscribers must not block (a stream writes or cuts its client off, it
 * never waits), so no client can slow a command down.
 *
 * The stage reads (a record's previous state, a thread's place) asynchronously, so it is a FIFO:
 * one worker takes everything queued as one batch, reads and projects it, hands it out, and only
 * then takes what was queued meanwhile. Batches leave in commit order, each event in exactly one.
 */
@injectable()
export class PublicEventFeed {
  readonly directory: ThreadDirectory;
  private projector: PublicEventProjector;
  private readonly listeners = new Set<(batch: FeedBatch) => void>();
  private stopHearing: (() => void) | null = null;
  /** The last sequence handed out since the feed started hearing; null before its first batch. */
  private published: number | null = null;
  private pending: StoredEvent[] = [];
  /** A worker is scheduled or working: what is heard meanwhile waits for it. */
  private working = false;
  /** Changes when the feed stops hearing: a worker of an earlier generation drops what it holds. */
  private generation = 0;

  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(LoggerToken) private readonly logger: Logger,
  ) {
    this.directory = new ThreadDirectory(engine.reader);
    this.projector = new PublicEventProjector(engine.reader);
  }

  /** Hears every batch from now on, until the returned function is called. */
  subscribe(listener: (batch: FeedBatch) => void): () => void {
    if (this.stopHearing === null) {
      // Hearing starts now, so the first batch starts at its first event: nothing committed
      // after this moment is missed, and what came before is the cursors' replays' to read.
      this.published = null;
      this.stopHearing = this.engine.onEvents((events) => this.hear(events));
    }
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0 && this.stopHearing !== null) {
        this.stopHearing();
        this.stopHearing = null;
        this.pending = [];
        this.generation += 1;
        this.working = false;
        // Events from now on go unseen: what the projector remembers would go stale. A new one,
        // not a cleared one: a worker of the ended generation may still be inside a projection.
        this.projector = new PublicEventProjector(this.engine.reader);
      }
    };
  }

  /** The envelope of a public event (replays build theirs the same way, so both send the same bytes). */
  async envelope(event: PublicEvent): Promise<FeedEvent> {
    const place = await this.directory.resolve(event.threadId);
    const projectId = place?.projectId ?? null;
    return {
      event,
      projectId,
      place,
      json: JSON.stringify({
        sequence: event.sequence,
        type: event.type,
        at: event.at,
        projectId,
        threadId: event.threadId,
        data: event.data,
      }),
    };
  }

  /**
   * Projects one upsert (replays use their own projector, in their own order). Await each before
   * projecting the next with the same projector.
   */
  async projectWith(projector: PublicEventProjector, stored: StoredEvent): Promise<FeedEvent | null> {
    try {
      const event = await projector.project(stored);
      return event === null ? null : await this.envelope(event);
    } catch (error) {
      this.logger.error("event projection failed", {
        sequence: stored.sequence,
        entity: stored.entity,
        error: (error as Error).message,
      });
      return null;
    }
  }

  private hear(events: readonly StoredEvent[]): void {
    for (const event of events) this.pending.push(event);
    if (this.working) return;
    this.working = true;
    const generation = this.generation;
    setImmediate(() => void this.work(generation));
  }

  /** The stage's one worker: a batch at a time, each read and handed out before the next is taken. */
  private async work(generation: number): Promise<void> {
    try {
      while (generation === this.generation && this.pending.length > 0) {
        const stored = this.pending;
        this.pending = [];
        const events: FeedEvent[] = [];
        for (const event of stored) {
          const projected = await this.projectWith(this.projector, event);
          if (generation !== this.generation) return;
          if (projected !== null) events.push(projected);
        }
        const batch: FeedBatch = {
          afterSequence: this.published ?? stored[0]!.sequence - 1,
          lastSequence: stored[stored.length - 1]!.sequence,
          events,
        };
        this.published = batch.lastSequence;
        for (const listener of [...this.listeners]) {
          try {
            listener(batch);
          } catch (error) {
            this.logger.error("event stream listener failed", { error: (error as Error).message });
          }
        }
      }
    } finally {
      // Synchronous from the empty queue to here: what is heard next starts the next worker.
      if (generation === this.generation) this.working = false;
    }
  }
}
