/**
 * The other environment's web page for its child, kept only when it is a plain http(s) URL: it
 * is shown to people and clients here, so a `javascript:` or credential-carrying value a linked
 * environment sends is dropped, not relayed.
 */
export function webPageOf(value: unknown): { childThreadWebUrl?: string } {
  if (typeof value !== "string" || value.length > 2_000) return {};
  try {
    const url = new URL(value);
    if ((url.protocol !== "https:" && url.protocol !== "http:") || url.username !== "" || url.password !== "")
      return {};
    return { childThreadWebUrl: url.href };
  } catch {
    return {};
  }
}
