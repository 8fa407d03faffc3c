import { Agent, request as httpsRequest } from "node:https";
import { Readable } from "node:stream";
import { connect as tlsConnect, type TLSSocket } from "node:tls";

/** A server presented a certificate other than the pinned one; nothing was sent to it. */
export class LinkCertificateError extends Error {
  constructor(
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`The server's certificate has SHA-256 fingerprint ${actual}, not the pinned ${expected}.`);
    this.name = "LinkCertificateError";
  }
}

/** A SHA-256 fingerprint as links store it: 64 lowercase hex digits (colons and case dropped), or null if it is not one. */
export function normalizeFingerprint(value: string): string | null {
  const hex = value
    .trim()
    .replace(/^sha256[:=]?/i, "")
    .replace(/:/g, "")
    .toLowerCase();
  return /^[0-9a-f]{64}$/.test(hex) ? hex : null;
}

/** A fingerprint as people compare it: `AB:CD:…`, the way openssl and browsers show it. */
export function displayFingerprint(fingerprint: string): string {
  return fingerprint.toUpperCase().match(/.{2}/g)!.join(":");
}

function fingerprintOf(socket: TLSSocket): string {
  return normalizeFingerprint(socket.getPeerCertificate().fingerprint256 ?? "") ?? "";
}

/** Waits for a TLS socket's handshake and checks its certificate against the pin (once per socket). */
function verifySocket(socket: TLSSocket, expected: string, verified: WeakSet<TLSSocket>): Promise<void> {
  if (verified.has(socket)) return Promise.resolve();
  const check = () => {
    const actual = fingerprintOf(socket);
    if (actual !== expected) {
      const error = new LinkCertificateError(expected, actual);
      socket.destroy(error);
      throw error;
    }
    verified.add(socket);
  };
  // A reused keep-alive socket finished its handshake long ago.
  if (!socket.connecting && socket.getPeerCertificate().fingerprint256 !== undefined)
    return Promise.resolve().then(check);
  return new Promise((resolve, reject) => {
    socket.once("secureConnect", () => {
      try {
        check();
        resolve();
      } catch (error) {
        reject(error);
      }
    });
    socket.once("error", reject);
  });
}

/**
 * A `fetch` for the MCP SDK's transport that talks TLS to a server whose certificate is pinned
 * by its SHA-256 fingerprint instead of a CA (a self-signed certificate is the usual case). The
 * request (its Authorization header included) is written only after the handshake showed the
 * pinned certificate; any other certificate ends the connection with a LinkCertificateError.
 */
/** A pinned `fetch`, and `close()` to end its kept-alive connections. */
export type PinnedFetch = typeof fetch & { close(): void };

export function pinnedFetch(fingerprint: string): PinnedFetch {
  const expected = normalizeFingerprint(fingerprint);
  if (expected === null) throw new Error(`${fingerprint} is not a SHA-256 fingerprint`);
  // Certificate checks are the pin's job: the CA chain and host name mean nothing for a self-signed certificate.
  // No TLS session resumption: a resumed session shows no peer certificate to check.
  const agent = new Agent({ keepAlive: true, rejectUnauthorized: false, maxCachedSessions: 0 });
  const verified = new WeakSet<TLSSocket>();
  const pinned = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
    if (url.protocol !== "https:") throw new Error(`A pinned link speaks https only, not ${url.protocol}`);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, key) => (headers[key] = value));
    const body =
      init.body === undefined || init.body === null
        ? null
        : typeof init.body === "string"
          ? init.body
          : String(init.body);
    if (body !== null) headers["content-length"] = String(Buffer.byteLength(body));
    return new Promise<Response>((resolve, reject) => {
      const req = httpsRequest({
        host: url.hostname.replace(/^\[|\]$/g, ""),
        port: url.port || 443,
        path: `${url.pathname}${url.search}`,
        method: init.method ?? "GET",
        headers,
        agent,
      });
      const signal = init.signal;
      const onAbort = () => req.destroy(signal?.reason instanceof Error ? signal.reason : new Error("aborted"));
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      req.once("error", reject);
      req.once("socket", (socket) => {
        verifySocket(socket as TLSSocket, expected, verified).then(
          () => req.end(body ?? undefined),
          (error: unknown) => {
            req.destroy();
            reject(error);
          },
        );
      });
      req.once("response", (res) => {
        const responseHeaders = new Headers();
        for (const [key, value] of Object.entries(res.headers)) {
          if (Array.isArray(value)) for (const item of value) responseHeaders.append(key, item);
          else if (value !== undefined) responseHeaders.set(key, value);
        }
        const status = res.statusCode ?? 500;
        const hasBody = status !== 204 && status !== 304 && init.method !== "HEAD";
        if (!hasBody) res.resume();
        res.once("close", () => signal?.removeEventListener("abort", onAbort));
        resolve(
          new Response(hasBody ? (Readable.toWeb(res) as ReadableStream) : null, {
            status,
            statusText: res.statusMessage,
            headers: responseHeaders,
          }),
        );
      });
    });
  };
  return Object.assign(pinned as typeof fetch, { close: () => agent.destroy() });
}

/**
 * The SHA-256 fingerprint of the certificate an https server presents (what `link add` pins on
 * first contact). Sends nothing but the TLS handshake. Unreachable: rejects with the socket error.
 */
export function fetchCertificateFingerprint(url: string, timeoutMs = 10_000): Promise<string> {
  const target = new URL(url);
  const host = target.hostname.replace(/^\[|\]$/g, "");
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({
      host,
      port: Number(target.port || 443),
      rejectUnauthorized: false,
      ...(/^[\d.]+$|:/.test(host) ? {} : { servername: host }),
    });
    const timer = setTimeout(
      () => socket.destroy(Object.assign(new Error(`no TLS handshake within ${timeoutMs} ms`), { code: "ETIMEDOUT" })),
      timeoutMs,
    );
    socket.once("secureConnect", () => {
      clearTimeout(timer);
      const fingerprint = fingerprintOf(socket);
      socket.end();
      resolve(fingerprint);
    });
    socket.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}
