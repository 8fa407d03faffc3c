/**
 * What travels between environments besides the MCP call itself. A link client puts the caller
 * it acts for in each tool call's `_meta` under this key, as `{ environmentId, threadId }`; the
 * receiving server records it in its audit. It is a claim, never trusted for authorization:
 * the grant is what authorizes.
 */
export const REMOTE_CALLER_META_KEY = "dev.switchyard/caller";

/** The caller claim a link client sends (see {@link REMOTE_CALLER_META_KEY}). */
export interface RemoteCallerClaim {
  readonly environmentId: string | null;
  readonly threadId: string | null;
}

/** Reads a caller claim from a tool call's `_meta`, ignoring anything malformed. */
export function remoteCallerFrom(meta: unknown): RemoteCallerClaim {
  const claim =
    typeof meta === "object" && meta !== null ? (meta as Record<string, unknown>)[REMOTE_CALLER_META_KEY] : undefined;
  const record = typeof claim === "object" && claim !== null ? (claim as Record<string, unknown>) : {};
  const text = (value: unknown) =>
    typeof value === "string" && value.length > 0 && value.length <= 200 ? value : null;
  return { environmentId: text(record.environmentId), threadId: text(record.threadId) };
}
