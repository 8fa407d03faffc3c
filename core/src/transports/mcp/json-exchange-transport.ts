import type { ServerResponse } from "node:http";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, MessageExtraInfo, RequestId } from "@modelcontextprotocol/sdk/types.js";

/** One POST being answered: its response, and each request's answer once it has one (in message order). */
interface Exchange {
  readonly res: ServerResponse;
  /** Headers the answer carries besides its content type and length (an initialize's session id). */
  readonly headers: Readonly<Record<string, string>>;
  readonly answers: Map<RequestId, JSONRPCMessage | undefined>;
  unanswered: number;
}

/**
 * The MCP server side of a POST answered with one JSON body: what the SDK's
 * StreamableHTTPServerTransport does with `enableJsonResponse` in stateless mode, on Node's
 * request and response directly. The SDK's transport converts every request to a web `Request`
 * and every answer to a web `Response` (streams, header objects, a copied body) and back: under
 * bench/mcp.bench.js that conversion was most of the transport's cost per call, for nothing a
 * JSON answer needs.
 *
 * It serves one exchange at a time and can serve any number in turn, so one `Server` connected to
 * it is reused from call to call instead of being built and closed per request. Messages arrive
 * already checked against the SDK's JSON-RPC schemas (see {@link checkPostMessages}).
 */
export class JsonExchangeTransport implements Transport {
  onmessage?: Transport["onmessage"];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private exchange: Exchange | null = null;
  /** Whether a request was cancelled here: its handler may still be winding down. */
  cancelledAny = false;

  /** Whether an exchange is open (delivered and not yet answered in full). */
  get busy(): boolean {
    return this.exchange !== null;
  }

  async start(): Promise<void> {}

  /**
   * Delivers one POST's messages. A POST with requests is answered on `res` once each has its
   * response (one object, or an array for a batch); one with only notifications or responses is
   * answered 202 at once, as the SDK's transport does.
   */
  deliver(
    messages: readonly JSONRPCMessage[],
    res: ServerResponse,
    extra: MessageExtraInfo,
    headers: Readonly<Record<string, string>> = {},
  ): void {
    const answers = new Map<RequestId, JSONRPCMessage | undefined>();
    // The messages passed the SDK's strict schemas: a request is the one kind with both.
    for (const message of messages) if ("method" in message && "id" in message) answers.set(message.id, undefined);
    if (answers.size === 0) {
      for (const message of messages) this.onmessage?.(message, extra);
      res.writeHead(202).end();
      return;
    }
    this.exchange = { res, headers, answers, unanswered: answers.size };
    for (const message of messages) this.onmessage?.(message, extra);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    // Notifications and requests to the client have no stream to go on in a JSON answer; the
    // SDK's transport drops them too (a call that wants progress is answered as SSE instead).
    if (!("result" in message) && !("error" in message)) return;
    const exchange = this.exchange;
    const id = message.id;
    if (exchange === null || id === undefined || !exchange.answers.has(id) || exchange.answers.get(id) !== undefined) {
      throw new Error(`No connection established for request ID: ${String(id)}`);
    }
    exchange.answers.set(id, message);
    exchange.unanswered -= 1;
    if (exchange.unanswered === 0) this.finish(exchange);
  }

  /**
   * Ends a request of the open exchange without an answer: the client cancelled it. The cancel
   * notification goes to the server, whose protocol aborts the request's handler and sends
   * nothing for it; the exchange is answered with what its other requests answered, or 202.
   */
  cancel(id: RequestId, notification: JSONRPCMessage, extra: MessageExtraInfo): void {
    const exchange = this.exchange;
    if (exchange === null || !exchange.answers.has(id) || exchange.answers.get(id) !== undefined) return;
    this.cancelledAny = true;
    exchange.answers.delete(id);
    exchange.unanswered -= 1;
    this.onmessage?.(notification, extra);
    if (exchange.unanswered === 0) this.finish(exchange);
  }

  private finish(exchange: Exchange): void {
    this.exchange = null;
    if (exchange.res.destroyed) return;
    const answers = [...exchange.answers.values()];
    if (answers.length === 0) {
      exchange.res.writeHead(202).end();
      return;
    }
    const body = JSON.stringify(answers.length === 1 ? answers[0] : answers);
    // With a Content-Length the client has the whole answer the moment it has these bytes, and
    // its connection is free for its next call (a chunked body ends only with its last chunk).
    exchange.res
      .writeHead(200, {
        ...exchange.headers,
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
      })
      .end(body);
  }

  async close(): Promise<void> {
    this.exchange = null;
    this.onclose?.();
  }
}
