import { RegistryError } from "./errors.js";

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * Remote content we execute (the index decides what runs; archives ARE what runs) must come
 * over TLS. Plain http is allowed only for loopback, which is what tests and local mirrors
 * use. Credentials in URLs are refused because they would end up in receipts and logs.
 */
export function checkRemoteUrl(raw: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RegistryError(
      "url_not_allowed",
      `The ${what} URL "${raw}" is not a valid absolute URL. Pass an https:// URL.`,
      {
        details: { url: raw },
      },
    );
  }
  if (url.username !== "" || url.password !== "") {
    throw new RegistryError(
      "url_not_allowed",
      `The ${what} URL must not embed credentials. Remove the user:password part from ${describeUrl(url)}.`,
      { details: { url: describeUrl(url) } },
    );
  }
  const isLoopback = LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol === "https:" || (url.protocol === "http:" && isLoopback)) return url;
  throw new RegistryError(
    "url_not_allowed",
    `The ${what} URL ${describeUrl(url)} is not allowed: only https:// is accepted (http:// only for 127.0.0.1 or localhost).`,
    { details: { url: describeUrl(url) } },
  );
}

/**
 * A URL as it may appear in logs and messages: no credentials and no query string, which is
 * where signed download URLs keep their tokens.
 */
export function describeUrl(url: URL | string): string {
  let parsed: URL;
  try {
    parsed = typeof url === "string" ? new URL(url) : url;
  } catch {
    return "<invalid url>";
  }
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}
