import type { ServerResponse } from "node:http";

/** One parsed Server-Sent Events record. */
export interface SseEvent {
  /** The `event:` field, when the stream names its events (OpenAI Responses, Anthropic). */
  event?: string;
  /** The `data:` lines joined with `\n`, unparsed (`[DONE]` stays a string). */
  data: string;
}

/**
 * Writes an SSE response. Writes after the client went away are dropped rather than thrown,
 * because a harness that is interrupted mid-stream simply closes its socket.
 */
export class SseWriter {
  #closed = false;

  constructor(private readonly res: ServerResponse) {
    res.once("close", () => {
      this.#closed = true;
    });
  }

  /** True once the client disconnected or {@link end} ran. */
  get closed(): boolean {
    return this.#closed || this.res.destroyed || this.res.writableEnded;
  }

  /** Sends the 200 status and the event-stream headers. Idempotent. */
  open(): void {
    if (this.res.headersSent) return;
    this.res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    this.res.flushHeaders();
  }

  /** Writes one record; `data` objects are JSON-encoded on a single line. */
  send(data: unknown, event?: string): void {
    if (this.closed) return;
    this.open();
    const payload = typeof data === "string" ? data : JSON.stringify(data);
    const head = event === undefined ? "" : `event: ${event}\n`;
    this.res.write(`${head}data: ${payload}\n\n`);
  }

  /** Ends the response (no-op when the client is already gone). */
  end(): void {
    if (this.closed) return;
    this.open();
    this.res.end();
    this.#closed = true;
  }
}

/**
 * Parses a complete SSE body into records: the inverse of {@link SseWriter}, for tests that
 * read a scripted stream with plain `fetch`. Comment lines and `id:`/`retry:` fields are skipped.
 */
export function parseSse(body: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of body.replace(/\r\n/g, "\n").split(/\n\n+/)) {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith(":") || line === "") continue;
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") event = value;
      else if (field === "data") data.push(value);
    }
    if (data.length > 0 || event !== undefined) {
      events.push(event === undefined ? { data: data.join("\n") } : { event, data: data.join("\n") });
    }
  }
  return events;
}

/**
 * Reads a fetch `Response` to the end and parses it as SSE, decoding each `data` as JSON
 * where it is JSON (`[DONE]` stays a string).
 */
export async function readSseJson(response: Response): Promise<Array<{ event?: string; data: unknown }>> {
  const text = await response.text();
  return parseSse(text).map((record) => {
    let data: unknown = record.data;
    try {
      data = JSON.parse(record.data);
    } catch {
      // not JSON ([DONE] or plain text): keep the string
    }
    return record.event === undefined ? { data } : { event: record.event, data };
  });
}
