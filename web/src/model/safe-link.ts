/** The schemes a link in an agent's text may open: anything else (javascript:, data:, file:) stays text. */
const SAFE_SCHEMES = new Set(["http:", "https:", "mailto:"]);

/**
 * A link target an agent wrote, if a person may safely open it: an absolute http(s) or mailto
 * URL, normalized by the URL parser (so `java\nscript:` and other tricks fail to parse or show
 * their real scheme). Relative links would point into this server's own pages: refused too.
 */
export function safeHref(href: string): string | null {
  let url: URL;
  try {
    url = new URL(href.trim());
  } catch {
    return null;
  }
  return SAFE_SCHEMES.has(url.protocol) ? url.href : null;
}
