import type { IncomingMessage } from "node:http";

/**
 * The credential a request presented, as a gateway would read it, recorded without the secret:
 * the header (or query parameter) it came in and the label of the configured key it matched.
 */
export interface PresentedApiKey {
  /** `authorization` (a Bearer token), `x-api-key`, `x-goog-api-key`, `api-key` or `?key`. */
  readonly via: string;
  /** The label of the key it matched in the server's `apiKeys`, or null for any other value. */
  readonly label: string | null;
}

/**
 * Where each wire carries its key: OpenAI clients and most gateways send `Authorization: Bearer`,
 * Anthropic clients `x-api-key` (or a Bearer token with `ANTHROPIC_AUTH_TOKEN`), Gemini clients
 * `x-goog-api-key` (or `?key=`), Azure-style gateways `api-key`. The first one present counts.
 */
const KEY_HEADERS = ["authorization", "x-api-key", "x-goog-api-key", "api-key"] as const;

function secretOf(req: IncomingMessage): { via: string; value: string } | null {
  for (const header of KEY_HEADERS) {
    const raw = req.headers[header];
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (value === undefined || value === "") continue;
    if (header === "authorization") {
      const bearer = /^Bearer\s+(.+)$/i.exec(value);
      if (bearer !== null) return { via: header, value: bearer[1]!.trim() };
      continue;
    }
    return { via: header, value };
  }
  const query = new URL(req.url ?? "/", "http://127.0.0.1").searchParams.get("key");
  return query !== null && query !== "" ? { via: "?key", value: query } : null;
}

/** The key a request presented and which configured key it is, or undefined when it presented none. */
export function presentedApiKey(
  req: IncomingMessage,
  apiKeys: Readonly<Record<string, string>> | undefined,
): PresentedApiKey | undefined {
  const secret = secretOf(req);
  if (secret === null) return undefined;
  const label = Object.entries(apiKeys ?? {}).find(([, key]) => key === secret.value)?.[0] ?? null;
  return { via: secret.via, label };
}

/** The 401 body each wire's clients understand (their own error shapes), naming what was wrong. */
export function unauthorizedBody(path: string, presented: PresentedApiKey | undefined): unknown {
  const message =
    presented === undefined
      ? "scripted model server: this request carried no API key (Authorization: Bearer, x-api-key, x-goog-api-key, api-key or ?key=)"
      : `scripted model server: the API key in ${presented.via} is not one this server accepts`;
  if (path.endsWith("/messages") || path.endsWith("/messages/count_tokens"))
    return { type: "error", error: { type: "authentication_error", message } };
  if (path.includes("/v1beta/")) return { error: { code: 401, message, status: "UNAUTHENTICATED" } };
  return { error: { message, type: "invalid_request_error", param: null, code: "invalid_api_key" } };
}
