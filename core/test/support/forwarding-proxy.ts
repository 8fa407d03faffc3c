import { createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A listening forwarding proxy. */
export interface ForwardingProxy {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * A forwarding proxy on another loopback port, like an SSH port-forward or a credential-adding
 * gateway in front of Switchyard: it adds `Authorization: Bearer <token>` and passes the method,
 * path, body and every other header (Host and Origin included) unchanged, streaming both ways.
 * So the Host header a request carries names the proxy's port, never the server's.
 */
export async function startForwardingProxy(targetPort: number, token: string): Promise<ForwardingProxy> {
  const server = createServer((incoming: IncomingMessage, outgoing: ServerResponse) => {
    const upstream = request(
      {
        host: "127.0.0.1",
        port: targetPort,
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, authorization: `Bearer ${token}` },
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    upstream.on("error", (error) => {
      if (!outgoing.headersSent) outgoing.writeHead(502, { "content-type": "text/plain" });
      outgoing.end(`forwarding failed: ${error.message}`);
    });
    outgoing.on("close", () => upstream.destroy());
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
