import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { SwitchyardError } from "../../spec/index.js";

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
  /** Starts handling requests, first the ones that arrived meanwhile. */
  serve(handler: RequestHandler): void;
  /** Stops listening and ends every connection. */
  close(): Promise<void>;
}

/**
 * Binds 127.0.0.1:`port` (0 picks a free port). A taken or forbidden port fails with a
 * `conflict` error whose details name the port.
 */
export async function bindLoopbackListener(port: number): Promise<LoopbackListener> {
  const server = createServer();
  const waiting: [IncomingMessage, ServerResponse][] = [];
  let handler: RequestHandler | null = null;
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
