import { createParser } from "eventsource-parser";
import { CliError, EXIT } from "./output.js";
import type { ServerApi } from "./server-api.js";

/** One event of `GET /api/v1/events` (its `data:`). */
export interface ServerEvent {
  readonly sequence: number;
  readonly type: string;
  readonly at: string;
  readonly projectId: string | null;
  readonly threadId: string;
  readonly data: Record<string, any>;
}

/** How many times in a row the stream may fail to reconnect before the command gives up. */
const MAX_RECONNECTS = 5;
const RECONNECT_DELAY_MS = 500;

/**
 * Follows the server's event stream (`GET /api/v1/events`, Server-Sent Events) from the moment
 * it is opened, buffering what arrives until `next` asks for it. A dropped stream is reopened
 * with `Last-Event-ID`, so nothing is missed and nothing is seen twice (the server replays its
 * log after that id).
 */
export class ServerEventFeed {
  private readonly queue: ServerEvent[] = [];
  private waiting: (() => void) | null = null;
  private failure: CliError | null = null;
  private lastEventId: string | null = null;
  private readonly abort = new AbortController();
  private opened!: Promise<void>;

  private constructor(
    private readonly api: ServerApi,
    private readonly query: URLSearchParams,
  ) {}

  /** Opens the stream; resolves once the server has accepted it, so no later change is missed. */
  static async open(
    api: ServerApi,
    filter: { projectId?: string; threadId?: string; types?: readonly string[] },
  ): Promise<ServerEventFeed> {
    const query = new URLSearchParams();
    if (filter.projectId !== undefined) query.set("projectId", filter.projectId);
    if (filter.threadId !== undefined) query.set("threadId", filter.threadId);
    if (filter.types !== undefined) query.set("types", filter.types.join(","));
    const feed = new ServerEventFeed(api, query);
    await new Promise<void>((accepted, refused) => {
      feed.opened = feed.run(accepted, refused);
    });
    return feed;
  }

  /** The next event, or null when `signal` aborts first. Throws when the stream cannot be kept open. */
  async next(signal?: AbortSignal): Promise<ServerEvent | null> {
    for (;;) {
      const event = this.queue.shift();
      if (event !== undefined) return event;
      if (this.failure !== null) throw this.failure;
      if (signal?.aborted) return null;
      await new Promise<void>((resolve) => {
        const onAbort = () => resolve();
        this.waiting = () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        };
        signal?.addEventListener("abort", onAbort, { once: true });
      });
      this.waiting = null;
    }
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.opened.catch(() => undefined);
  }

  private wake(): void {
    this.waiting?.();
  }

  /** Reads the stream, reconnecting after a drop, until closed or refused. */
  private async run(accepted: () => void, refused: (error: CliError) => void): Promise<void> {
    let failures = 0;
    let isOpen = false;
    while (!this.abort.signal.aborted) {
      let response: Response;
      try {
        response = await fetch(`${this.api.baseUrl}/api/v1/events?${this.query.toString()}`, {
          headers: this.api.headers({
            accept: "text/event-stream",
            ...(this.lastEventId !== null ? { "last-event-id": this.lastEventId } : {}),
          }),
          signal: this.abort.signal,
        });
      } catch (error) {
        if (this.abort.signal.aborted) return;
        if (!isOpen) return refused(this.api.unreachable(error));
        if (++failures > MAX_RECONNECTS)
          return this.fail(
            new CliError(
              `Lost the Switchyard server's event stream at ${this.api.baseUrl} (${(error as Error).message}); the work goes on in the server. \`switchyard status\` says whether it runs.`,
              EXIT.failed,
            ),
          );
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_DELAY_MS * failures));
        continue;
      }
      if (!response.ok || response.body === null) {
        const refusal = await this.api.refusal(response);
        if (!isOpen) return refused(refusal);
        return this.fail(refusal);
      }
      if (!isOpen) {
        isOpen = true;
        accepted();
      }
      failures = 0;
      const parser = createParser({
        onEvent: (message) => {
          if (message.id !== undefined) this.lastEventId = message.id;
          this.queue.push(JSON.parse(message.data) as ServerEvent);
          this.wake();
        },
      });
      try {
        for await (const chunk of response.body.pipeThrough(new TextDecoderStream())) parser.feed(chunk);
      } catch {
        // A dropped connection: reopened below with Last-Event-ID.
      }
    }
  }

  private fail(error: CliError): void {
    this.failure = error;
    this.wake();
  }
}
