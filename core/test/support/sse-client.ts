import { request, type ClientRequest, type IncomingMessage } from "node:http";
import { createParser } from "eventsource-parser";

/** One event as an SSE client dispatched it. */
export interface ReceivedEvent {
  readonly id: string | undefined;
  readonly type: string;
  /** The parsed `data`: `{ sequence, type, at, projectId, threadId, data }`. */
  readonly payload: {
    sequence: number;
    type: string;
    at: string;
    projectId: string | null;
    threadId: string;
    data: Record<string, any>;
  };
}

/** A refused stream: the status and the typed error body. */
export interface RefusedStream {
  readonly status: number;
  readonly body: { error: { code: string; message: string; details?: Record<string, unknown> } };
  readonly headers: IncomingMessage["headers"];
}

interface Waiter {
  readonly predicate: (event: ReceivedEvent) => boolean;
  readonly resolve: (event: ReceivedEvent) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * A Server-Sent Events client over plain node:http, parsing with eventsource-parser (the parser
 * the `eventsource` package uses). It keeps every event it dispatched and the id of the last
 * one, as an EventSource does for its reconnect.
 */
export class SseClient {
  readonly events: ReceivedEvent[] = [];
  comments = 0;
  lastEventId: string | undefined;
  /** The log sequence the server started this stream after (its opening comment). */
  startedAfter: number | undefined;
  readonly ended: Promise<void>;
  private readonly waiters = new Set<Waiter>();
  private endedWaiters: (() => void)[] = [];
  private isEnded = false;

  private constructor(
    private readonly req: ClientRequest,
    readonly response: IncomingMessage,
  ) {
    const parser = createParser({
      onEvent: (message) => {
        if (message.id !== undefined) this.lastEventId = message.id;
        const event: ReceivedEvent = {
          id: message.id,
          type: message.event ?? "message",
          payload: JSON.parse(message.data),
        };
        this.events.push(event);
        for (const waiter of [...this.waiters]) {
          if (waiter.predicate(event)) {
            this.waiters.delete(waiter);
            clearTimeout(waiter.timer);
            waiter.resolve(event);
          }
        }
      },
      onComment: (comment) => {
        this.comments += 1;
        const opening = /switchyard events after (\d+)/.exec(comment);
        if (opening !== null) this.startedAfter = Number(opening[1]);
      },
    });
    response.setEncoding("utf8");
    response.on("data", (chunk: string) => parser.feed(chunk));
    this.ended = new Promise((resolve) => {
      const done = () => {
        if (this.isEnded) return;
        this.isEnded = true;
        for (const waiter of this.waiters) {
          clearTimeout(waiter.timer);
          waiter.reject(new Error(`the stream ended before the event came (${this.events.length} events received)`));
        }
        this.waiters.clear();
        resolve();
      };
      response.on("end", done);
      response.on("close", done);
      response.on("error", done);
      req.on("error", done);
    });
  }

  /** Opens `GET <url>` with a bearer token (and Last-Event-ID): a stream, or the refusal. */
  static open(
    url: string,
    options: { token?: string | null; lastEventId?: string; headers?: Record<string, string> } = {},
  ): Promise<SseClient | RefusedStream> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { accept: "text/event-stream", ...options.headers };
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      if (options.lastEventId !== undefined) headers["last-event-id"] = options.lastEventId;
      const req = request(url, { method: "GET", headers, agent: false }, (res) => {
        if (res.statusCode !== 200) {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (text += chunk));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), headers: res.headers }));
          return;
        }
        resolve(new SseClient(req, res));
      });
      req.on("error", reject);
      req.end();
    });
  }

  /** Opens a stream that must be accepted. */
  static async connect(url: string, options: { token?: string | null; lastEventId?: string } = {}): Promise<SseClient> {
    const opened = await SseClient.open(url, options);
    if (!(opened instanceof SseClient))
      throw new Error(`stream refused: ${opened.status} ${JSON.stringify(opened.body)}`);
    return opened;
  }

  /** The first event (received already or later) that matches, within `timeoutMs`. */
  waitFor(predicate: (event: ReceivedEvent) => boolean, timeoutMs = 15_000): Promise<ReceivedEvent> {
    const seen = this.events.find(predicate);
    if (seen !== undefined) return Promise.resolve(seen);
    if (this.isEnded) return Promise.reject(new Error(`the stream has ended (${this.events.length} events received)`));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        predicate,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          reject(
            new Error(
              `no matching event within ${timeoutMs} ms (${this.events.length} events received: ${this.events
                .map((e) => `${e.id}:${e.type}`)
                .slice(-20)
                .join(", ")})`,
            ),
          );
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  /** Waits until `count` heartbeat comments arrived (the opening comment counts as one). */
  async waitForComments(count: number, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (let i = 0; i < 10_000 && this.comments < count; i += 1) {
      if (this.isEnded || Date.now() > deadline) throw new Error(`only ${this.comments} comments arrived`);
      await new Promise<void>((resolve) => this.response.once("data", () => resolve()));
    }
  }

  /**
   * Stops reading from the socket (a slow client): the server's buffer for it fills up. A paused
   * client notices that the server cut it off only once it reads again (`resume`).
   */
  pause(): void {
    this.response.pause();
  }

  resume(): void {
    this.response.resume();
  }

  /** The sequences of the events received, in order. */
  sequences(): number[] {
    return this.events.map((event) => event.payload.sequence);
  }

  close(): void {
    this.req.destroy();
  }
}
