import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";
import type { WebSessionRejection } from "../../../services/credentials/web-sessions.js";
import { ApiFailure, BEARER_CHALLENGE } from "./api-errors.js";

/**
 * The header that carries a web UI session's page secret on every cookie-authenticated request.
 * The secret is handed to the page once, in the sign-in answer, and kept by the page in storage
 * scoped to its origin (scheme, host and port). A browser sends this server's cookie to every
 * web server on the same host name, whatever its port; it never hands another origin's pages
 * this server's storage, so a cookie captured elsewhere is useless without it.
 */
export const PAGE_SECRET_HEADER = "x-switchyard-page-secret";

/** Whether the request came over TLS (then the cookie is `Secure` and `__Host-` prefixed). */
export function isTlsRequest(req: IncomingMessage): boolean {
  return (req.socket as Partial<TLSSocket>).encrypted === true;
}

/**
 * The session cookie's name on this server: one per home (its environment id), so two
 * Switchyard servers on one host, whose cookies the browser sends to both, never overwrite
 * each other's, and a restart keeps the browser signed in. Over TLS it carries the `__Host-`
 * prefix: the browser then accepts it only with `Secure`, `Path=/` and no `Domain`.
 */
export function sessionCookieName(environmentId: string, tls: boolean): string {
  return `${tls ? "__Host-" : ""}switchyard_session_${environmentId}`;
}

/** The origin the request was sent to: its scheme and Host, as the browser's Origin spells it. */
export function requestOrigin(req: IncomingMessage): string {
  return `${isTlsRequest(req) ? "https" : "http"}://${(req.headers.host ?? "").toLowerCase()}`;
}

/** This server's session cookie in a request (other servers' cookies are sent here too), or null. */
export function readSessionCookie(req: IncomingMessage, environmentId: string): string | null {
  const header = req.headers.cookie;
  if (header === undefined) return null;
  const name = sessionCookieName(environmentId, isTlsRequest(req));
  for (const part of header.split(";")) {
    const [key, ...rest] = part.split("=");
    if (key?.trim() === name) {
      const value = rest.join("=").trim();
      return value === "" ? null : value;
    }
  }
  return null;
}

/** The page secret a request carries, or null. */
export function readPageSecret(req: IncomingMessage): string | null {
  const value = req.headers[PAGE_SECRET_HEADER];
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined || text.trim() === "" ? null : text.trim();
}

function attributes(req: IncomingMessage): string {
  return `Path=/; HttpOnly; SameSite=Strict${isTlsRequest(req) ? "; Secure" : ""}`;
}

/** The Set-Cookie value that stores a session until `expiresAtMs`. */
export function sessionCookie(
  req: IncomingMessage,
  environmentId: string,
  secret: string,
  expiresAtMs: number,
  nowMs: number,
): string {
  const maxAge = Math.max(0, Math.floor((expiresAtMs - nowMs) / 1000));
  return `${sessionCookieName(environmentId, isTlsRequest(req))}=${secret}; ${attributes(req)}; Max-Age=${maxAge}`;
}

/** The Set-Cookie value that removes the session cookie. */
export function clearedSessionCookie(req: IncomingMessage, environmentId: string): string {
  return `${sessionCookieName(environmentId, isTlsRequest(req))}=; ${attributes(req)}; Max-Age=0`;
}

/** The 401 for a web UI session a request cannot use, saying why (`details.reason`) and what to do. */
export function webSessionRefused(reason: WebSessionRejection, origin: string): ApiFailure {
  const why: Record<WebSessionRejection, string> = {
    unknown: "The web UI session is unknown; sign in again.",
    session_ended: "The web UI session was signed out; sign in again.",
    expired: "The web UI session or its token expired; sign in again.",
    idle_expired: "The session's token expired while idle; sign in again.",
    revoked: "The session's token was revoked; sign in again.",
    page_secret_missing: `The web UI session cookie is not enough: send the session's page secret in ${PAGE_SECRET_HEADER}. Only the page that signed in holds it; a page without it signs in again.`,
    page_secret_mismatch: `The ${PAGE_SECRET_HEADER} header does not belong to this web UI session; sign in again.`,
    other_origin: `This web UI session was signed in at another address than ${origin}; sign in at this one.`,
  };
  return new ApiFailure("invalid_token", why[reason], { reason }, 401, { "www-authenticate": BEARER_CHALLENGE });
}

function refused(message: string, details: Record<string, unknown>): ApiFailure {
  return new ApiFailure("cross_origin_refused", message, details, 403);
}

/**
 * Defence in depth for a cookie-authenticated (or sign-in) request; the page secret is what
 * proves the request comes from the UI's own page. Its Origin, when sent, must be this server's
 * own origin (the Host it was sent to), and a browser's Sec-Fetch-Site must say same-origin; a
 * change must also send Origin (browsers always do). A forged request from outside a browser
 * can say all of this, so none of it is the lock. Bearer-token requests are not checked: a
 * browser never adds a token on its own.
 */
export function checkSameOrigin(req: IncomingMessage, mutation: boolean): void {
  const host = req.headers.host ?? "";
  const origin = req.headers.origin;
  const own = [`http://${host}`, `https://${host}`];
  if (origin !== undefined && !own.includes(origin.toLowerCase())) {
    throw refused(
      `Origin ${JSON.stringify(origin)} is not this server's origin (http://${host}); a session cookie is only honoured from the web UI itself.`,
      { origin },
    );
  }
  const site = req.headers["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin" && site !== "none") {
    throw refused(`A ${site} request cannot use the web UI's session; only the UI's own pages can.`, {
      secFetchSite: site,
    });
  }
  if (mutation && origin === undefined)
    throw refused("A change made with the web UI's session must send Origin (browsers do).", {
      field: "header.Origin",
    });
}
