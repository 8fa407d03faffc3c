import type { IncomingMessage } from "node:http";
import { ApiFailure } from "./api-errors.js";

/** The web UI's session cookie: HttpOnly (no script reads it) and SameSite=Strict. */
export const SESSION_COOKIE = "switchyard_session";

/**
 * The header every cookie-authenticated request that changes something must carry. A page on
 * another origin cannot add a custom header to a cross-origin request without a CORS preflight,
 * which this server never approves; SameSite=Strict alone is not enough here, since every
 * loopback port is the same *site* (a page served by another local dev server on
 * localhost:3000 is same-site with localhost:4000).
 */
export const CSRF_HEADER = "x-switchyard-csrf";

/** The session cookie's value in a request, or null. */
export function readSessionCookie(req: IncomingMessage): string | null {
  const header = req.headers.cookie;
  if (header === undefined) return null;
  for (const part of header.split(";")) {
    const [name, ...rest] = part.split("=");
    if (name?.trim() === SESSION_COOKIE) {
      const value = rest.join("=").trim();
      return value === "" ? null : value;
    }
  }
  return null;
}

/** The Set-Cookie value that stores a session until `expiresAtMs`. */
export function sessionCookie(secret: string, expiresAtMs: number, nowMs: number): string {
  const maxAge = Math.max(0, Math.floor((expiresAtMs - nowMs) / 1000));
  return `${SESSION_COOKIE}=${secret}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}`;
}

/** The Set-Cookie value that removes the session cookie. */
export function clearedSessionCookie(): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`;
}

function refused(message: string, details: Record<string, unknown>): ApiFailure {
  return new ApiFailure("cross_origin_refused", message, details, 403);
}

/**
 * Refuses a cookie-authenticated (or sign-in) request that may come from another page: its
 * Origin, when sent, must be this server's own origin (the Host it was sent to), and a
 * browser's Sec-Fetch-Site must say same-origin; a mutation must also send Origin and the
 * {@link CSRF_HEADER}. Bearer-token requests are not checked: a browser never adds a token
 * on its own.
 */
export function checkSameOrigin(req: IncomingMessage, mutation: boolean): void {
  const host = req.headers.host ?? "";
  const origin = req.headers.origin;
  const own = [`http://${host}`, `https://${host}`];
  if (origin !== undefined && !own.includes(origin.toLowerCase())) {
    throw refused(`Origin ${JSON.stringify(origin)} is not this server's origin (http://${host}); a session cookie is only honoured from the web UI itself.`, { origin });
  }
  const site = req.headers["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin" && site !== "none") {
    throw refused(`A ${site} request cannot use the web UI's session; only the UI's own pages can.`, { secFetchSite: site });
  }
  if (!mutation) return;
  if (origin === undefined) throw refused("A change made with the web UI's session must send Origin (browsers do).", { field: "header.Origin" });
  if (req.headers[CSRF_HEADER] !== "1") {
    throw refused(`A change made with the web UI's session must send the header ${CSRF_HEADER}: 1 (the UI does; other pages cannot).`, { field: `header.${CSRF_HEADER}` });
  }
}
