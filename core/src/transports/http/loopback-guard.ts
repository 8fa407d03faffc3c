import type { IncomingMessage } from "node:http";

/**
 * DNS-rebinding protection for a loopback server: a browser page on another origin that
 * resolves its name to 127.0.0.1 still sends its own Host and Origin, so both must name this
 * server. Returns why the request is refused, or null.
 */
export function checkLoopbackRequest(request: IncomingMessage, port: number): string | null {
  const allowedHosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
  const host = request.headers.host;
  if (host === undefined || !allowedHosts.has(host.toLowerCase())) return `Host header ${JSON.stringify(host ?? null)} is not this loopback server`;
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== "null") {
    let originHost: string;
    try {
      originHost = new URL(origin).host.toLowerCase();
    } catch {
      return `Origin ${JSON.stringify(origin)} is not a URL`;
    }
    if (!allowedHosts.has(originHost)) return `Origin ${JSON.stringify(origin)} is not this loopback server`;
  }
  return null;
}
