import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ReachAuditTarget } from "./reach-audit.js";

/** A tool result's outcome for the audit: "ok", or its failure code with a short machine reason. */
export function outcomeOf(result: CallToolResult): { outcome: string; reason: string | null } {
  if (result.isError !== true) return { outcome: "ok", reason: null };
  try {
    const text = (result.content[0] as { text?: string } | undefined)?.text ?? "";
    const error = (JSON.parse(text) as { error?: { code?: string; details?: Record<string, unknown> } }).error;
    const details = error?.details ?? {};
    const reason =
      typeof details.reason === "string"
        ? details.reason
        : typeof details.verb === "string"
          ? "verb"
          : typeof details.runtimeMode === "string"
            ? "runtime_mode"
            : typeof details.projectId === "string"
              ? "project"
              : null;
    return { outcome: error?.code ?? "orchestration_error", reason };
  } catch {
    return { outcome: "orchestration_error", reason: null };
  }
}

/** Ids a structured result names under `field` (top level and in top-level arrays). */
function resultIds(result: CallToolResult | null, field: string): string[] {
  const structured = result?.structuredContent;
  if (result === null || result.isError === true || typeof structured !== "object" || structured === null) return [];
  const found: string[] = [];
  // A thread shell nests its id (`{ thread: { threadId } }`), at the top and in `threads` entries.
  const take = (value: unknown, nested = true) => {
    if (typeof value !== "object" || value === null) return;
    const id = (value as Record<string, unknown>)[field];
    if (typeof id === "string") found.push(id);
    if (nested) take((value as Record<string, unknown>).thread, false);
  };
  take(structured);
  for (const value of Object.values(structured)) if (Array.isArray(value)) for (const entry of value) take(entry);
  return found;
}

/**
 * The ids a call input names, by the field names every tool uses (`projectId`, `threadId`,
 * `parentThreadId`, `taskId`), at the top level and in entries of top-level arrays: the
 * transports' scope check reads the same fields.
 */
function inputRefs(input: unknown): { projectIds: string[]; threadIds: string[]; taskIds: string[] } {
  const refs = { projectIds: [] as string[], threadIds: [] as string[], taskIds: [] as string[] };
  const collect = (value: unknown) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return;
    const record = value as Record<string, unknown>;
    for (const field of ["threadId", "parentThreadId"])
      if (typeof record[field] === "string") refs.threadIds.push(record[field]);
    if (typeof record.taskId === "string") refs.taskIds.push(record.taskId);
    if (typeof record.projectId === "string") refs.projectIds.push(record.projectId);
  };
  collect(input);
  if (typeof input === "object" && input !== null)
    for (const value of Object.values(input)) if (Array.isArray(value)) value.forEach(collect);
  return refs;
}

/** What a call touched, for the audit: the ids its input names and the ones its result created or names. */
export function auditTargetOf(input: unknown, result: CallToolResult | null): ReachAuditTarget {
  const refs = inputRefs(input);
  return {
    projectIds: refs.projectIds,
    threadIds: [...refs.threadIds, ...resultIds(result, "threadId"), ...resultIds(result, "childThreadId")],
    taskIds: [...refs.taskIds, ...resultIds(result, "taskId")],
  };
}
