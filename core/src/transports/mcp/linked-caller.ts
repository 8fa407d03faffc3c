import { interactionModeRank } from "../../spec/index.js";
import type { McpInvocationScope, ModeCeiling } from "../../services/credentials/mcp-session-registry.js";
import { intersectCeiling } from "../../services/reach/foreign-tasks.js";
import type { ReachGrant } from "../../services/credentials/reach-grant.js";
import { REACH_META_KEY } from "../../services/reach/forwarded-tools.js";
import type { ReachCallMeta } from "../../services/reach/link-calls.js";

/** The grant of a linked environment's call (its link secret's), or null for any other caller. */
export function linkedGrantOf(scope: McpInvocationScope): ReachGrant | null {
  return scope.kind === "environment" && scope.grant !== undefined ? scope.grant : null;
}

/**
 * A linked environment's ceiling for one call: the grant's, narrowed by the ceiling its caller
 * has there when the call says so (a forwarded call does): never broader than either.
 */
export function linkedCeiling(scope: McpInvocationScope, meta: unknown): ModeCeiling | null {
  const grant = linkedGrantOf(scope);
  const stated = typeof meta === "object" && meta !== null && REACH_META_KEY in meta;
  if (grant === null || !stated) return scope.ceiling;
  const claimed = reachMetaOf(meta).ceiling;
  const narrowed = intersectCeiling(claimed, grant.maxRuntimeMode);
  const granted = scope.ceiling?.interactionMode ?? "default";
  return {
    runtimeMode: narrowed.runtimeMode,
    interactionMode:
      interactionModeRank(narrowed.interactionMode) <= interactionModeRank(granted)
        ? narrowed.interactionMode
        : granted,
  };
}

/**
 * What a linked environment's call says about its caller there (its ceiling, a delegation's
 * parent), from the call's `_meta`; malformed parts are dropped. Claims, which only ever narrow:
 * the grant is what authorizes.
 */
export function reachMetaOf(meta: unknown): ReachCallMeta {
  const raw = typeof meta === "object" && meta !== null ? (meta as Record<string, unknown>)[REACH_META_KEY] : undefined;
  const record = typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>) : {};
  const text = (value: unknown, max = 300) =>
    typeof value === "string" && value.length > 0 && value.length <= max ? value : null;
  const ceiling =
    typeof record.ceiling === "object" && record.ceiling !== null ? (record.ceiling as Record<string, unknown>) : {};
  const delegation =
    typeof record.delegation === "object" && record.delegation !== null
      ? (record.delegation as Record<string, unknown>)
      : null;
  const parent =
    delegation !== null &&
    text(delegation.environmentId) !== null &&
    text(delegation.threadId) !== null &&
    text(delegation.runId) !== null &&
    text(delegation.rootThreadId) !== null &&
    Number.isInteger(delegation.depth) &&
    Number.isInteger(delegation.maxDepth)
      ? {
          environmentId: text(delegation.environmentId)!,
          threadId: text(delegation.threadId)!,
          runId: text(delegation.runId)!,
          rootThreadId: text(delegation.rootThreadId)!,
          depth: Math.max(1, delegation.depth as number),
          maxDepth: Math.max(0, delegation.maxDepth as number),
        }
      : undefined;
  return {
    environmentId: text(record.environmentId) ?? "unknown",
    callerThreadId: text(record.callerThreadId),
    // A ceiling not stated is the narrowest (intersectCeiling treats unknown modes so).
    ceiling: {
      runtimeMode: text(ceiling.runtimeMode, 40) ?? "",
      interactionMode: text(ceiling.interactionMode, 40) ?? "",
    },
    ...(parent !== undefined ? { delegation: parent } : {}),
  };
}
