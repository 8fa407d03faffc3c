import { SCRATCH_PROJECT_ID } from "../services/thread-launch-service.js";

/** The threads, tasks and projects a call names, which a project-scoped token must be allowed to use. */
export interface ScopeRefs {
  readonly threadIds: string[];
  readonly taskIds: string[];
  readonly projectIds: string[];
}

const THREAD_FIELDS = ["threadId", "parentThreadId"] as const;

function collect(value: Record<string, unknown>, refs: ScopeRefs): void {
  for (const field of THREAD_FIELDS) if (typeof value[field] === "string") refs.threadIds.push(value[field]);
  if (typeof value.taskId === "string") refs.taskIds.push(value.taskId);
  if (typeof value.projectId === "string") refs.projectIds.push(value.projectId);
  if (value.scratch === true) refs.projectIds.push(SCRATCH_PROJECT_ID);
}

/**
 * Finds the references in a validated call input, by the field names every tool and API
 * operation uses (`threadId`, `parentThreadId`, `taskId`, `projectId`, `scratch`), at the top
 * level and in the entries of top-level arrays (create_threads' `threads`). Both transports run
 * it on the whole input before the operation reads anything, so a field a later change adds
 * under one of these names is checked without anyone remembering to.
 */
export function scopeRefs(input: unknown): ScopeRefs {
  const refs: ScopeRefs = { threadIds: [], taskIds: [], projectIds: [] };
  if (typeof input !== "object" || input === null) return refs;
  const record = input as Record<string, unknown>;
  collect(record, refs);
  for (const value of Object.values(record)) {
    if (!Array.isArray(value)) continue;
    for (const entry of value)
      if (typeof entry === "object" && entry !== null && !Array.isArray(entry))
        collect(entry as Record<string, unknown>, refs);
  }
  return refs;
}
