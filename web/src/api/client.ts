import { ApiError } from "./types.js";

/** Where the API lives: the same origin that served the UI. */
export const API_BASE = "/api/v1";

/**
 * Calls the API with the session cookie (same origin only). Every call sends the CSRF header
 * the server demands of cookie-authenticated changes; a page on another origin cannot.
 */
export async function api<T>(method: "GET" | "POST", path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const response = await fetch(`${API_BASE}${path}`, {
    method,
    ...(signal !== undefined ? { signal } : {}),
    credentials: "same-origin",
    headers: { "x-switchyard-csrf": "1", ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text === "" ? null : JSON.parse(text);
  } catch {
    throw new ApiError(response.status, "not_json", `The server answered ${response.status} with something that is not JSON.`);
  }
  if (!response.ok) {
    const failure = (parsed as { error?: { code?: string; message?: string; details?: Record<string, unknown> } } | null)?.error;
    throw new ApiError(response.status, failure?.code ?? "http_error", failure?.message ?? `The server answered ${response.status}.`, failure?.details ?? {});
  }
  return parsed as T;
}

/** A query string from defined values (arrays repeat the name). */
export function query(values: Record<string, string | number | boolean | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) if (value !== undefined) params.set(name, String(value));
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}
