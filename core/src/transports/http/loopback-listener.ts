import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import { isIP, type AddressInfo, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { SwitchyardError } from "../../spec/index.js";
import { certificateFingerprint, type TlsIdentity } from "./tls-identity.js";
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
  /** The address it is bound on (`127.0.0.1` unless `serve --host` chose another). */
  readonly host: string;
  /** `https` when it serves TLS. */
  readonly protocol: "http" | "https";
  /** Its base URL, `<protocol>://<host>:<port>`. */
  readonly url: string;
  /** The SHA-256 fingerprint of the certificate it serves (what links pin); null without TLS. */
  readonly tlsFingerprint: string | null;
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
  // Bytes already written on this connection are an answer to the request before the broken
  // one (a DELETE's body that Node's client sends without a length, read as a second request
  // after the first was answered): a second answer behind it would reach the client as garbage
  // after its `Connection: close`. The answer already given stands; the connection ends.
  if ("bytesWritten" in socket && (socket as Socket).bytesWritten > 0) {
    socket.end();
    return;
  }
  const [status, reason] = CLIENT_ERROR_STATUS[error.code ?? ""] ?? [400, "Bad Request"];
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: null,
    error: {
      code: -32600,
      message: `${reason}: the server could not read this HTTP request (${error.code ?? "parse error"}).`,
    },
  });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * Whether an address stays on this machine: 127.0.0.0/8, ::1 and `localhost`. Only the kernel's
 * own processes reach them, so they may be served without TLS; every other address needs it.
 */
export function isLoopbackAddress(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (bare === "localhost" || bare === "::1") return true;
  return isIP(bare) === 4 && bare.startsWith("127.");
}

/** A host as it appears in a URL (IPv6 in brackets). */
export function urlHost(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}

/**
 * Binds `host`:`port` (default 127.0.0.1; port 0 picks a free one) under the server's limits
 * (applied before listening, as Node requires), serving TLS when `tls` is given. An address
 * beyond loopback without TLS is refused (`invalid_input`) before anything is bound. A taken or
 * forbidden port fails with a `conflict` error whose details name the port.
 */
export async function bindLoopbackListener(
  port: number,
  limits: ServerLimits,
  options: { host?: string; tls?: TlsIdentity | null } = {},
): Promise<LoopbackListener> {
  const host = (options.host ?? "127.0.0.1").replace(/^\[|\]$/g, "");
  const tls = options.tls ?? null;
  if (tls === null && !isLoopbackAddress(host)) {
    throw new SwitchyardError(
      "invalid_input",
      `Serving on ${host} needs TLS: it is not a loopback address, and link secrets and tokens must not cross a network in clear. Give a certificate (--tls-cert and --tls-key) or --tls-self-signed, or reach this machine through an SSH tunnel instead.`,
      { host },
    );
  }
  const server: Server =
    tls === null ? createServer() : (createTlsServer({ cert: tls.cert, key: tls.key }) as unknown as Server);
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
      if (error.code === "EADDRINUSE")
        reject(
          new SwitchyardError("conflict", `Port ${port} on ${host} is already in use.`, { port, reason: "in_use" }),
        );
      else if (error.code === "EADDRNOTAVAIL")
        reject(
          new SwitchyardError("conflict", `${host} is not an address of this machine, so it cannot be listened on.`, {
            port,
            host,
            reason: "no_such_address",
          }),
        );
      else if (error.code === "EACCES")
        reject(
          new SwitchyardError(
            "conflict",
            `This process may not listen on port ${port} (ports below 1024 need privileges).`,
            { port, reason: "forbidden" },
          ),
        );
      else reject(error);
    };
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const protocol = tls === null ? "http" : "https";
  return {
    server,
    port: bound,
    host,
    protocol,
    url: `${protocol}://${urlHost(host)}:${bound}`,
    tlsFingerprint: tls === null ? null : certificateFingerprint(tls.cert),
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
