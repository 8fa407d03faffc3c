import type { IncomingMessage, ServerResponse } from "node:http";
import type { ServerConfig } from "../../../config/config-schema.js";
import { ApiFailure } from "./api-errors.js";
import type { Logger } from "../../../logging/logger.js";
import type { Caller } from "../../../services/caller.js";
import type { EventCursor, EventSink } from "../../../services/events/event-cursor.js";
import type { EventStreamService, OpenEventStreamInput } from "../../../services/events/event-stream-service.js";
import type { FeedEvent } from "../../../services/events/public-event-feed.js";

/** The server config fields that bound event streams (see README, `server.*`). */
export type EventStreamLimits = Pick<
  ServerConfig,
  | "maxEventStreams"
  | "maxEventStreamsPerCredential"
  | "eventStreamHeartbeatMs"
  | "eventStreamMaxBufferedBytes"
  | "eventStreamMaxBufferedEvents"
>;

/** How many streams one credential may hold: its setting, or an eighth of the server's, at least one and at most all. */
export function eventStreamsPerCredential(
  limits: Pick<EventStreamLimits, "maxEventStreams" | "maxEventStreamsPerCredential">,
): number {
  return Math.min(
    limits.maxEventStreams,
    limits.maxEventStreamsPerCredential ?? Math.max(1, Math.floor(limits.maxEventStreams / 8)),
  );
}

/** How long a client that lost its stream waits before reconnecting (the SSE `retry` field). */
const RECONNECT_MS = 2_000;

/** One SSE frame per event, built once and shared by every stream that sends it. */
const frames = new WeakMap<FeedEvent, string>();

function frameOf(feedEvent: FeedEvent): string {
  let frame = frames.get(feedEvent);
  if (frame === undefined) {
    frame = `id: ${feedEvent.event.sequence}\nevent: ${feedEvent.event.type}\ndata: ${feedEvent.json}\n\n`;
    frames.set(feedEvent, frame);
  }
  return frame;
}

/** One open stream: an SSE response with bounded buffers, heartbeats and a cursor behind it. */
class EventStreamConnection implements EventSink {
  private unflushedEvents = 0;
  private cursor: EventCursor | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  /** Writes handed to the socket and not flushed yet, and writes flushed so far. */
  private pendingWrites = 0;
  private flushedWrites = 0;
  private lastTick = { waiting: false, flushed: 0 };
  private readonly waiters: ((ok: boolean) => void)[] = [];
  private closed = false;
  private readonly highWaterBytes: number;
  private readonly highWaterEvents: number;

  constructor(
    private readonly res: ServerResponse,
    private readonly limits: EventStreamLimits,
    private readonly logger: Logger,
    private readonly onClose: () => void,
  ) {
    this.highWaterBytes = Math.max(1, Math.min(64 * 1024, Math.floor(limits.eventStreamMaxBufferedBytes / 2)));
    this.highWaterEvents = Math.max(1, Math.floor(limits.eventStreamMaxBufferedEvents / 2));
    res.on("close", () => this.close());
  }

  start(cursor: EventCursor): void {
    this.cursor = cursor;
    // The client may have gone while the request waited for its turn.
    if (this.res.destroyed) this.close();
    if (this.closed) return;
    this.res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      // Proxies that buffer responses would hold events back.
      "x-accel-buffering": "no",
    });
    this.res.write(`retry: ${RECONNECT_MS}\n: switchyard events after ${cursor.sequence}\n\n`);
    this.heartbeat = setInterval(() => this.tick(), this.limits.eventStreamHeartbeatMs);
    this.heartbeat.unref();
    cursor.start();
  }

  get saturated(): boolean {
    return this.res.writableLength >= this.highWaterBytes || this.unflushedEvents >= this.highWaterEvents;
  }

  send(events: readonly FeedEvent[]): boolean {
    if (this.closed) return false;
    // Measured before the write: one large batch does not cut a reading client off, a client
    // that has not taken what it already had does.
    if (
      this.res.writableLength > this.limits.eventStreamMaxBufferedBytes ||
      this.unflushedEvents > this.limits.eventStreamMaxBufferedEvents
    ) {
      this.cutOff("slow_client");
      return false;
    }
    const chunk = events.length === 1 ? frameOf(events[0]!) : events.map(frameOf).join("");
    this.unflushedEvents += events.length;
    this.pendingWrites += 1;
    this.res.write(chunk, () => {
      this.unflushedEvents -= events.length;
      this.flushed();
    });
    return true;
  }

  /**
   * A frame that is not in the log (live output): written while the client keeps up, dropped
   * (never queued, never a reason to cut the client off) when it has enough unread already.
   */
  sendUnlogged(type: string, json: string): boolean {
    if (this.closed || this.saturated) return false;
    this.pendingWrites += 1;
    this.res.write(`event: ${type}\ndata: ${json}\n\n`, () => this.flushed());
    return true;
  }

  drained(): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    if (!this.saturated) return Promise.resolve(true);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private flushed(): void {
    this.pendingWrites -= 1;
    this.flushedWrites += 1;
    if (this.closed || this.saturated) return;
    for (const resolve of this.waiters.splice(0)) resolve(true);
  }

  /**
   * A heartbeat, and the check that the client still reads: one that had writes waiting at the
   * last heartbeat and has taken none of them since is cut off.
   */
  private tick(): void {
    if (this.closed) return;
    if (this.lastTick.waiting && this.pendingWrites > 0 && this.flushedWrites === this.lastTick.flushed) {
      this.cutOff("client_not_reading");
      return;
    }
    this.lastTick = { waiting: this.pendingWrites > 0, flushed: this.flushedWrites };
    this.pendingWrites += 1;
    this.res.write(": ping\n\n", () => this.flushed());
  }

  /** Ends a client that fell behind at once: it resumes from its last event id and loses nothing. */
  private cutOff(reason: string): void {
    this.logger.info("event stream cut off", {
      reason,
      bufferedBytes: this.res.writableLength,
      bufferedEvents: this.unflushedEvents,
      sequence: this.cursor?.sequence ?? null,
    });
    this.res.destroy();
    this.close();
  }

  /** Ends the response and the stream (the server is stopping). */
  end(): void {
    if (!this.closed) this.res.end();
    this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.heartbeat !== null) clearInterval(this.heartbeat);
    this.cursor?.close();
    for (const resolve of this.waiters.splice(0)) resolve(false);
    this.onClose();
  }
}

/**
 * `GET /api/v1/events`: Server-Sent Events for one authenticated caller. Counts its streams
 * against `server.maxEventStreams` (each is also a connection under `server.maxConnections`),
 * and against its credential's share of them, so one token cannot hold every stream.
 */
export class EventStreams {
  private readonly open = new Set<EventStreamConnection>();
  /** Open streams per credential (see {@link holderOf}). */
  private readonly held = new Map<string, number>();
  private readonly closeWaiters: (() => void)[] = [];
  private readonly perCredential: number;

  constructor(
    private readonly service: EventStreamService,
    private readonly limits: EventStreamLimits,
    private readonly logger: Logger,
  ) {
    this.perCredential = eventStreamsPerCredential(limits);
  }

  /** Streams open now. */
  get size(): number {
    return this.open.size;
  }

  /** Resolves when the next stream closes (whoever ends it). */
  nextClose(): Promise<void> {
    return new Promise((resolve) => this.closeWaiters.push(resolve));
  }

  private closed(connection: EventStreamConnection, holder: string): void {
    if (!this.open.delete(connection)) return;
    const count = (this.held.get(holder) ?? 1) - 1;
    if (count > 0) this.held.set(holder, count);
    else this.held.delete(holder);
    for (const resolve of this.closeWaiters.splice(0)) resolve();
  }

  /**
   * Streams to a caller whose request is read already (`input`: the query, and `after` from
   * Last-Event-ID when the request has one): what the API's `GET /events` route calls. A
   * refusal is thrown as a typed failure before anything is written.
   */
  async serve(req: IncomingMessage, res: ServerResponse, caller: Caller, input: OpenEventStreamInput): Promise<void> {
    const holder = holderOf(caller);
    const holding = this.held.get(holder) ?? 0;
    if (holding >= this.perCredential) {
      throw new ApiFailure(
        "too_many_streams",
        `This credential already holds ${holding} open event streams, its share of the server's ${this.limits.maxEventStreams} (server.maxEventStreamsPerCredential is ${this.perCredential}); close one (each web UI tab holds one) before opening another.`,
        { maxEventStreamsPerCredential: this.perCredential, open: holding },
      );
    }
    if (this.open.size >= this.limits.maxEventStreams) {
      throw new ApiFailure(
        "server_busy",
        `Switchyard has ${this.open.size} open event streams (server.maxEventStreams); retry shortly.`,
        { maxEventStreams: this.limits.maxEventStreams },
        503,
        { "retry-after": "1" },
      );
    }
    const connection: EventStreamConnection = new EventStreamConnection(res, this.limits, this.logger, () =>
      this.closed(connection, holder),
    );
    let cursor: EventCursor;
    try {
      cursor = await this.service.open(caller, input, connection);
    } catch (error) {
      // A refused request (typed failure) is answered by the router: nothing is written yet.
      connection.close();
      throw error;
    }
    this.open.add(connection);
    this.held.set(holder, holding + 1);
    // No socket timeout: the heartbeat is what finds a dead client.
    req.socket.setTimeout(0);
    connection.start(cursor);
  }

  /** Ends every stream (the server is stopping). */
  closeAll(): void {
    for (const connection of [...this.open]) connection.end();
  }
}

/** Whose share a stream counts against: the caller's credential (a web UI session counts as its token). */
function holderOf(caller: Caller): string {
  return caller.credentialId ?? caller.requestScope;
}
