import { forgetPageSecret, keepPageSecret, pageSecret } from "./page-secret.js";
import { ApiError, type SessionView } from "./types.js";

/** Where the API lives: the same origin that served the UI. */
export const API_BASE = "/api/v1";

/** The header that carries the session's page secret (the cookie alone authorises nothing). */
export const PAGE_SECRET_HEADER = "x-switchyard-page-secret";

/** The headers every call of this page sends: its session's page secret, when it has one. */
export function sessionHeaders(): Record<string, string> {
  const secret = pageSecret();
  return secret === null ? {} : { [PAGE_SECRET_HEADER]: secret };
}

/**
 * Calls the API with the session cookie (same origin only) and the session's page secret,
 * which only this origin's pages hold.
 */
export async function api<T>(method: "GET" | "POST", path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const response = await fetch(`${API_BASE}${path}`, {
    method,
    ...(signal !== undefined ? { signal } : {}),
    credentials: "same-origin",
    headers: { ...sessionHeaders(), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text === "" ? null : JSON.parse(text);
  } catch {
    throw new ApiError(
      response.status,
      "not_json",
      `The server answered ${response.status} with something that is not JSON.`,
    );
  }
  if (!response.ok) {
    const failure = (
      parsed as { error?: { code?: string; message?: string; details?: Record<string, unknown> } } | null
    )?.error;
    throw new ApiError(
      response.status,
      failure?.code ?? "http_error",
      failure?.message ?? `The server answered ${response.status}.`,
      failure?.details ?? {},
    );
  }
  return parsed as T;
}

/** Signs in with a token or a one-time code, keeping the page secret the answer carries. */
export async function signIn(credential: { readonly token: string } | { readonly code: string }): Promise<SessionView> {
  const { pageSecret: secret, ...session } = await api<SessionView & { pageSecret: string }>(
    "POST",
    "/ui/session",
    credential,
  );
  keepPageSecret(secret);
  return session;
}

/** Signs out: ends the session on the server (when it still can) and forgets the page secret. */
export async function signOut(): Promise<void> {
  try {
    await api("POST", "/ui/session/end", {});
  } finally {
    forgetPageSecret();
  }
}

/** A query string from defined values (arrays repeat the name). */
export function query(values: Record<string, string | number | boolean | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) if (value !== undefined) params.set(name, String(value));
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}
