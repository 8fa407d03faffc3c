import type { Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { ServerConfig } from "../../config/config-schema.js";
import { SwitchyardError } from "../../spec/index.js";

/** The server config fields that bound what a client may hold (see README, `server.*`). */
export type ServerLimits = Pick<
  ServerConfig,
  "headersTimeoutMs" | "requestTimeoutMs" | "keepAliveTimeoutMs" | "maxConnections" | "maxRequestBodyBytes"
>;

/**
 * Holds the HTTP server to the limits: Node answers 408 and closes a connection that has not
 * sent its headers, or its whole request, in time. These bound only *receiving* a request (Node
 * stops the clock once the body is in), so a blocking tool call may take its time to answer.
 * Call before `listen()`: Node starts the timer that checks the timeouts when it starts
 * listening, at the interval set then.
 */
export function applyServerLimits(server: Server, limits: ServerLimits): ConnectionCap {
  if (server.listening) {
    throw new SwitchyardError(
      "internal",
      "applyServerLimits(server) must run before server.listen(): Node fixes how often it checks the request timeouts when it starts listening.",
    );
  }
  server.requestTimeout = limits.requestTimeoutMs;
  // Node refuses a headers timeout longer than the request timeout.
  server.headersTimeout = Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs);
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  // Node's default check interval (30 s) would let a short timeout run 30 s over. It is a
  // createServer option that @types/node does not declare as a property; Node reads it at listen.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.max(
    50,
    Math.min(1_000, Math.floor(server.headersTimeout / 4)),
  );
  return new ConnectionCap(server, limits.maxConnections);
}

/**
 * Caps the server's open connections. Node's own `maxConnections` drops a connection beyond the
 * cap without a word; here it stays open just long enough to read its first request and answer
 * 503 with `Connection: close`, so a client learns at once that it should come back later
 * instead of waiting for a reply that never comes. Idle keep-alive connections count: they are
 * closed after the keep-alive timeout.
 */
export class ConnectionCap {
  private readonly open = new Set<Socket>();
  private readonly overCap = new WeakSet<Socket>();

  constructor(
    server: Server,
    readonly maxConnections: number,
  ) {
    server.on("connection", (socket: Socket) => {
      this.open.add(socket);
      if (this.open.size > maxConnections) this.overCap.add(socket);
      socket.once("close", () => this.open.delete(socket));
    });
  }

  /** Whether this connection was opened beyond the cap (answer it 503 and close it). */
  isOverCap(socket: Socket): boolean {
    return this.overCap.has(socket);
  }
}

/**
 * 405 is how a stateless MCP endpoint answers the GET every Streamable HTTP client sends to open
 * its optional event stream: a normal step of a well-behaved client, not a refusal.
 */
const KEEPS_CONNECTION = new Set([405]);

/**
 * Closes the connection after a 4xx or 5xx answer (`Connection: close`), whoever writes it (our
 * handlers or the MCP SDK's transport): a client that was refused, or sent something broken,
 * does not get to keep a socket open.
 */
export function closeConnectionOnErrorStatus(res: ServerResponse): void {
  const writeHead = res.writeHead;
  res.writeHead = function writeHeadClosingOnError(
    this: ServerResponse,
    ...args: Parameters<ServerResponse["writeHead"]>
  ) {
    if (args[0] >= 400 && !KEEPS_CONNECTION.has(args[0]) && !res.headersSent) res.setHeader("connection", "close");
    return writeHead.apply(this, args);
  } as ServerResponse["writeHead"];
}
