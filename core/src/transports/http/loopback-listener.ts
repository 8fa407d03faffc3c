import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { SwitchyardError } from "../../spec/index.js";
import { applyServerLimits, type ConnectionCap, type ServerLimits } from "./server-limits.js";

/** Handles one HTTP request. */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * An HTTP socket bound on 127.0.0.1 before the host behind it is ready: the port is known (and
 * a taken port fails) before plugins load, and requests that arrive while the host boots wait
 * until a handler is attached instead of being refused.
 */
export interface LoopbackListener {
  readonly server: Server;
  readonly port: number;
  /** Its open connections, counted against `server.maxConnections`. */
  readonly cap: ConnectionCap;
  /** Starts handling requests, first the ones that arrived meanwhile. */
  serve(handler: RequestHandler): void;
  /** Stops listening and ends every connection. */
  close(): Promise<void>;
}

/** The statuses Node itself gives the parser's failures; any other failure is a 400. */
const CLIENT_ERROR_STATUS: Readonly<Record<string, [number, string]>> = {
  HPE_HEADER_OVERFLOW: [431, "Request Header Fields Too Large"],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, "Payload Too Large"],
  ERR_HTTP_REQUEST_TIMEOUT: [408, "Request Timeout"],
};

/**
 * Answers bytes Node's HTTP parser cannot read (or a request that timed out) with the same typed
 * JSON-RPC error body the endpoints give, instead of Node's bodiless default, then closes the
 * connection: what follows a broken request on it cannot be trusted either.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason] = CLIENT_ERROR_STATUS[error.code ?? ""] ?? [400, "Bad Request"];
  const body = JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message: `${reason}: the server could not read this HTTP request (${error.code ?? "parse error"}).` } });
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/**
 * Binds 127.0.0.1:`port` (0 picks a free port) under the server's limits (applied before
 * listening, as Node requires). A taken or forbidden port fails with a `conflict` error whose
 * details name the port.
 */
export async function bindLoopbackListener(port: number, limits: ServerLimits): Promise<LoopbackListener> {
  const server = createServer();
  const cap = applyServerLimits(server, limits);
  const waiting: [IncomingMessage, ServerResponse][] = [];
  let handler: RequestHandler | null = null;
  server.on("clientError", answerClientError);
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    if (handler !== null) handler(req, res);
    else waiting.push([req, res]);
  });
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE") reject(new SwitchyardError("conflict", `Port ${port} on 127.0.0.1 is already in use.`, { port, reason: "in_use" }));
      else if (error.code === "EACCES") reject(new SwitchyardError("conflict", `This process may not listen on port ${port} (ports below 1024 need privileges).`, { port, reason: "forbidden" }));
      else reject(error);
    };
    server.once("error", onError);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", onError);
      resolve();
    });
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    cap,
    serve: (next) => {
      handler = next;
      for (const [req, res] of waiting.splice(0)) next(req, res);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
