import { inject, injectable } from "tsyringe";
import { EngineToken } from "../../engine/ports.js";
import type { Engine } from "../../engine/engine.js";
import { type Logger, LoggerToken } from "../../logging/logger.js";
import type { StoredEvent } from "../../store/records.js";
import { PublicEventProjector } from "./public-event-projector.js";
import type { PublicEvent } from "./public-events.js";
import { ThreadDirectory } from "./thread-directory.js";

/** A public event ready to send: with its thread's project, serialized once for every stream. */
export interface FeedEvent {
  readonly event: PublicEvent;
  readonly projectId: string | null;
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
 */
@injectable()
export class PublicEventFeed {
  readonly directory: ThreadDirectory;
  private readonly projector: PublicEventProjector;
  private readonly listeners = new Set<(batch: FeedBatch) => void>();
  private stopHearing: (() => void) | null = null;
  private published = 0;
  private pending: StoredEvent[] = [];
  private scheduled = false;

  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(LoggerToken) private readonly logger: Logger,
  ) {
    this.directory = new ThreadDirectory(engine.store);
    this.projector = new PublicEventProjector(engine.store);
  }

  /** Hears every batch from now on, until the returned function is called. */
  subscribe(listener: (batch: FeedBatch) => void): () => void {
    if (this.stopHearing === null) {
      // eslint-disable-next-line no-restricted-syntax -- the ordered stream's synchronous stage; async with the port (docs/decisions/0010)
      this.published = this.engine.store.lastSequence();
      this.stopHearing = this.engine.onEvents((events) => this.hear(events));
    }
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0 && this.stopHearing !== null) {
        this.stopHearing();
        this.stopHearing = null;
        this.pending = [];
        // Events from now on go unseen: what the projector remembers would go stale.
        this.projector.reset();
      }
    };
  }

  /** The envelope of a public event (replays build theirs the same way, so both send the same bytes). */
  envelope(event: PublicEvent): FeedEvent {
    const projectId = this.directory.place(event.threadId)?.projectId ?? null;
    return {
      event,
      projectId,
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

  /** Projects one upsert (replays use their own projector, in their own order). */
  projectWith(projector: PublicEventProjector, stored: StoredEvent): FeedEvent | null {
    let event: PublicEvent | null;
    try {
      event = projector.project(stored);
    } catch (error) {
      this.logger.error("event projection failed", {
        sequence: stored.sequence,
        entity: stored.entity,
        error: (error as Error).message,
      });
      return null;
    }
    return event === null ? null : this.envelope(event);
  }

  private hear(events: readonly StoredEvent[]): void {
    for (const event of events) this.pending.push(event);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.flush);
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    const stored = this.pending;
    this.pending = [];
    const events: FeedEvent[] = [];
    for (const event of stored) {
      const projected = this.projectWith(this.projector, event);
      if (projected !== null) events.push(projected);
    }
    const batch: FeedBatch = {
      afterSequence: this.published,
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
  };
}
