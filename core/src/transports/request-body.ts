import type { IncomingMessage } from "node:http";

/** What was wrong with a request body. */
export type BodyProblem = "too_large" | "empty" | "cut_off" | "not_json";

/** Thrown when a body is too large, empty, cut off or not JSON; carries the HTTP status to answer with. */
export class BodyError extends Error {
  readonly status: 400 | 413;
  constructor(
    readonly problem: BodyProblem,
    message: string,
  ) {
    super(message);
    this.status = problem === "too_large" ? 413 : 400;
  }
}

/**
 * How much of a body over the limit is read and dropped before the refusal is answered. A
 * server that answers and closes while the client is still sending makes the client's TCP
 * stack see a reset, and a client that sends its whole request before reading (as many do)
 * then gets an EPIPE or ECONNRESET instead of the 413: so the rest of the body is read and
 * thrown away first, up to this much (and within the server's request timeout, which Node
 * enforces on the whole request). A client even further over is answered at once and cut off.
 */
export const MAX_DISCARDED_BODY_BYTES = 64 * 1024 * 1024;

/**
 * Reads a request body's bytes, at most `maxBytes` (`limitName` is the setting that sets it, for
 * the message). A body over the limit, declared by Content-Length or found while reading a
 * chunked one, is refused only once the client has sent it (see {@link MAX_DISCARDED_BODY_BYTES}),
 * and none of it is kept. How long the client may take is the server's request timeout, not
 * this function's concern. An empty body is `Buffer.alloc(0)`.
 */
export function readRequestBytes(
  request: IncomingMessage,
  maxBytes: number,
  limitName = "server.maxRequestBodyBytes",
): Promise<Buffer> {
  const tooLarge = () =>
    new BodyError("too_large", `The request body is larger than the ${maxBytes}-byte limit (${limitName}).`);
  const declared = request.headers["content-length"];
  if (declared !== undefined && Number(declared) > maxBytes + MAX_DISCARDED_BODY_BYTES)
    return Promise.reject(tooLarge());
  // Read to its end already: no event would come (an async iterator answers nothing too).
  if (request.readableEnded) return Promise.resolve(Buffer.alloc(0));
  // Listeners rather than `for await`: the async iterator costs a generator, a promise per chunk
  // and the hops between them, on every MCP and API request (most bodies are one chunk).
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = [];
    let size = 0;
    const settle = () => {
      request.off("data", onData);
      request.off("end", onEnd);
      request.off("error", onCutOff);
      request.off("close", onCutOff);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes + MAX_DISCARDED_BODY_BYTES) {
        // Only at the bound: destroying the request closes the connection. (With no listener
        // left, a request emits no "error" for it.)
        settle();
        request.destroy();
        reject(tooLarge());
      } else if (size > maxBytes) chunks = [];
      else chunks.push(chunk);
    };
    const onEnd = () => {
      settle();
      if (size > maxBytes) reject(tooLarge());
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    };
    const onCutOff = () => {
      settle();
      reject(new BodyError("cut_off", "The request body was cut off before it ended."));
    };
    request.on("data", onData);
    request.on("end", onEnd);
    request.on("error", onCutOff);
    request.on("close", onCutOff);
  });
}

/** Reads a JSON request body of at most `maxBytes` (see {@link readRequestBytes}). */
export async function readJsonBody(
  request: IncomingMessage,
  maxBytes: number,
): Promise<{ readonly value: unknown; readonly text: string }> {
  const bytes = await readRequestBytes(request, maxBytes);
  if (bytes.length === 0) throw new BodyError("empty", "The request body is empty; send a JSON-RPC message.");
  const text = bytes.toString("utf8");
  try {
    return { value: JSON.parse(text) as unknown, text };
  } catch {
    throw new BodyError("not_json", "The request body is not valid JSON.");
  }
}

/**
 * The path of the first `__proto__` key in a parsed body, or null. JSON.parse keeps such a key
 * as an own property, but the MCP SDK's schemas copy objects by assignment, which drops it
 * silently, so a strict tool schema would never see it: it has to be caught on the raw body.
 */
export function protoKeyPath(value: unknown, path: readonly (string | number)[] = []): (string | number)[] | null {
  if (typeof value !== "object" || value === null || path.length > 64) return null;
  if (!Array.isArray(value) && Object.prototype.hasOwnProperty.call(value, "__proto__")) return [...path, "__proto__"];
  for (const [key, child] of Object.entries(value)) {
    const found = protoKeyPath(child, [...path, Array.isArray(value) ? Number(key) : key]);
    if (found !== null) return found;
  }
  return null;
}
