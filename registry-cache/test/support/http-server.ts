import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type RouteHandler = (request: IncomingMessage, response: ServerResponse) => void | Promise<void>;

/**
 * A real HTTP server on 127.0.0.1 for registry indexes, archives and npm packuments. Routes
 * can be swapped per test; every request is counted by path.
 */
export class TestServer {
  private readonly routes = new Map<string, RouteHandler>();
  private readonly counts = new Map<string, number>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(): Promise<TestServer> {
    let instance: TestServer | undefined;
    const server = createServer((request, response) => {
      void instance?.handle(request, response);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    instance = new TestServer(server, (server.address() as AddressInfo).port);
    return instance;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  route(path: string, handler: RouteHandler): void {
    this.routes.set(path, handler);
  }

  hits(path: string): number {
    return this.counts.get(path) ?? 0;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? "/", "http://127.0.0.1").pathname;
    this.counts.set(path, (this.counts.get(path) ?? 0) + 1);
    const handler = this.routes.get(path);
    if (handler === undefined) {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    try {
      await handler(request, response);
    } catch (error) {
      response.destroy(error instanceof Error ? error : new Error(String(error)));
    }
  }
}

/** Serves bytes with a Content-Length, optionally after a delay (to make installs overlap). */
export function serveBytes(
  body: Buffer | string,
  options: { contentType?: string; delayMs?: number } = {},
): RouteHandler {
  return async (_request, response) => {
    const bytes = typeof body === "string" ? Buffer.from(body) : body;
    response.writeHead(200, {
      "content-type": options.contentType ?? "application/octet-stream",
      "content-length": String(bytes.length),
    });
    if (options.delayMs !== undefined) {
      response.write(bytes.subarray(0, 1));
      await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      response.end(bytes.subarray(1));
    } else {
      response.end(bytes);
    }
  };
}

/** Serves JSON. */
export function serveJson(value: unknown): RouteHandler {
  return serveBytes(JSON.stringify(value), { contentType: "application/json" });
}

/** Promises the full length, sends only the first `sendBytes`, then resets the connection. */
export function serveTruncated(body: Buffer, sendBytes: number): RouteHandler {
  return (_request, response) => {
    response.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(body.length) });
    response.write(body.subarray(0, sendBytes), () => {
      setTimeout(() => response.socket?.destroy(), 20);
    });
  };
}

/** Streams `totalBytes` without a Content-Length (chunked), in 64 KiB pieces. */
export function serveChunked(totalBytes: number, fill = " "): RouteHandler {
  return async (_request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    const piece = Buffer.alloc(64 * 1024, fill);
    let sent = 0;
    while (sent < totalBytes && !response.destroyed) {
      const size = Math.min(piece.length, totalBytes - sent);
      if (!response.write(piece.subarray(0, size))) await new Promise((resolve) => response.once("drain", resolve));
      sent += size;
    }
    response.end();
  };
}
