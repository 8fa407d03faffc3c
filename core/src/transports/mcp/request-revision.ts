import {
  classifyInboundRequest,
  PROTOCOL_VERSION_META_KEY,
  type InboundClassificationOutcome,
} from "@modelcontextprotocol/server";

/** The first revision of the per-request `_meta` envelope (the SDK compares revisions as strings too). */
const FIRST_MODERN_REVISION = "2026-07-28";

function claimsEnvelope(message: unknown): boolean {
  const meta = (message as { params?: { _meta?: unknown } } | null)?.params?._meta;
  return typeof meta === "object" && meta !== null && !Array.isArray(meta) && PROTOCOL_VERSION_META_KEY in meta;
}

/** Whether the SDK's classifier serves (or refuses) a request as the 2026 revision's, not as no revision's (not JSON-RPC). */
export function classifiedModern(outcome: InboundClassificationOutcome): boolean {
  if (outcome.kind !== "reject") return outcome.kind === "modern";
  return outcome.rung !== "jsonrpc-shape" || outcome.cell === "batch-with-modern-element";
}

/**
 * Whether a POST is the 2026-07-28 revision's (or a later one's), as that revision tells a server
 * that serves both eras to decide: a message that carries the per-request envelope claim
 * (`_meta["io.modelcontextprotocol/protocolVersion"]`), or an `MCP-Protocol-Version` header that
 * names such a revision on a request the SDK's classifier then serves (or refuses) as that
 * revision's. Everything else is a 2025 client's, whatever else is wrong with it: a body that is
 * not JSON-RPC names no revision, and gets the answer 2025 clients always got.
 *
 * A 2025 call (no claim, no such header) is decided without the SDK's classifier, which
 * validates every message against its JSON-RPC schemas: tens of microseconds a call that the
 * 2025 path, which makes the same checks itself, need not pay twice. A claim always goes to the
 * 2026 revision, which answers even a malformed one in its own words.
 * core/test/mcp/request-revision.test.ts holds this to the classifier.
 */
export function namesModernRevision(versionHeader: string | string[] | undefined, body: unknown): boolean {
  if (Array.isArray(body) ? body.some(claimsEnvelope) : claimsEnvelope(body)) return true;
  // A repeated header is not one value; header values may carry optional whitespace.
  const header = typeof versionHeader === "string" ? versionHeader.replace(/^[ \t]+|[ \t]+$/g, "") : undefined;
  if (header === undefined || header < FIRST_MODERN_REVISION) return false;
  return classifiedModern(classifyInboundRequest({ httpMethod: "POST", body, protocolVersionHeader: header }));
}
