import type { IncomingMessage } from "node:http";

/** Why a request was refused before any of its content was looked at. */
export interface RefusedRequest {
  readonly status: 400 | 403;
  readonly error: "bad_request" | "forbidden";
  readonly description: string;
}

/**
 * A loopback name with an optional port. DNS-rebinding protection needs the *name*: a page on
 * another site that resolves its own name to 127.0.0.1 still sends that name. The port is not
 * checked, so an SSH port-forward or a local proxy (whose port the Host names) keeps working.
 */
const LOOPBACK_HOST = /^(?:localhost|127\.0\.0\.1|\[::1\])(?::(\d{1,5}))?$/i;
const LOOPBACK_ORIGIN_HOSTNAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);

const NAMES = "localhost, 127.0.0.1 or [::1], any port";

/** How many times each of `names` occurs in the raw request (Node keeps only the first Host). */
function occurrences(request: IncomingMessage, names: readonly string[]): Map<string, number> {
  const counts = new Map(names.map((name) => [name, 0]));
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    const name = request.rawHeaders[i]!.toLowerCase();
    const count = counts.get(name);
    if (count !== undefined) counts.set(name, count + 1);
  }
  return counts;
}

function isLoopbackHost(host: string): boolean {
  const match = LOOPBACK_HOST.exec(host);
  if (match === null) return false;
  return match[1] === undefined || Number(match[1]) <= 65535;
}

function isBoundHost(host: string, boundHost: string): boolean {
  const match = /^(.*?)(?::(\d{1,5}))?$/.exec(host);
  return (
    match !== null &&
    match[1]!.toLowerCase() === boundHost.toLowerCase() &&
    (match[2] === undefined || Number(match[2]) <= 65535)
  );
}

/**
 * A loopback origin, or one naming the loopback address `serve --host` bound (127.0.0.2, …: its
 * own web UI's pages). A bound address beyond loopback adds no origin: the web UI stays for this
 * machine (docs/multi-machine.md).
 */
function isAllowedOrigin(origin: string, boundHost: string | undefined): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  const hostname = url.hostname.toLowerCase();
  return (
    (url.protocol === "http:" || url.protocol === "https:") &&
    (LOOPBACK_ORIGIN_HOSTNAMES.has(hostname) ||
      (boundHost !== undefined && boundHost.startsWith("127.") && hostname === boundHost))
  );
}

/**
 * Checks the headers that say who a request is for before the server acts on it: exactly one
 * Host, naming a loopback name; at most one Origin and one Authorization; an Origin (from a
 * browser) must be a loopback origin too (or name the loopback address bound). Returns why the request is refused, or null.
 * `anyHostName` keeps every check but the Host's name: webhooks are sent by outside services
 * through a tunnel or proxy that keeps its public Host, and they carry no ambient credential a
 * rebinding page could borrow.
 */
export function checkLoopbackRequest(
  request: IncomingMessage,
  options: { readonly anyHostName?: boolean; readonly boundHost?: string } = {},
): RefusedRequest | null {
  const counts = occurrences(request, ["host", "origin", "authorization"]);
  const hosts = counts.get("host")!;
  if (hosts !== 1) {
    return {
      status: 400,
      error: "bad_request",
      description:
        hosts === 0 ? "The request has no Host header." : `The request has ${hosts} Host headers; send exactly one.`,
    };
  }
  for (const [name, label] of [
    ["origin", "Origin"],
    ["authorization", "Authorization"],
  ] as const) {
    const count = counts.get(name)!;
    if (count > 1)
      return {
        status: 400,
        error: "bad_request",
        description: `The request has ${count} ${label} headers; send at most one.`,
      };
  }
  const host = request.headers.host ?? "";
  // `boundHost`: the loopback address `serve --host` bound (127.0.0.2, …), which a client of it names.
  if (
    options.anyHostName !== true &&
    !isLoopbackHost(host) &&
    !(options.boundHost !== undefined && isBoundHost(host, options.boundHost))
  ) {
    return {
      status: 403,
      error: "forbidden",
      description: `Host ${JSON.stringify(host)} is not a loopback name (${NAMES}); refused as DNS-rebinding protection.`,
    };
  }
  const origin = request.headers.origin;
  // "null" is what a browser sends for opaque origins (file:, sandboxed frames); it names no site to refuse.
  if (origin !== undefined && origin !== "null" && !isAllowedOrigin(origin, options.boundHost)) {
    return {
      status: 403,
      error: "forbidden",
      description: `Origin ${JSON.stringify(origin)} is not a loopback origin (http or https; ${NAMES}); refused as DNS-rebinding protection.`,
    };
  }
  return null;
}
