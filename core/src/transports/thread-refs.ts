/** The input fields that name a thread of this environment, which accept its link or web URL too. */
const THREAD_FIELDS = ["threadId", "parentThreadId", "childThreadId"] as const;

/** Turns a link or web URL into the thread id it names, or refuses it (field is the input's path). */
export type ThreadIdResolver = (value: string, field: string) => string;

function resolved(record: Record<string, unknown>, resolve: ThreadIdResolver, path: string): Record<string, unknown> {
  let copy: Record<string, unknown> | null = null;
  for (const field of THREAD_FIELDS) {
    const value = record[field];
    if (typeof value !== "string") continue;
    const id = resolve(value, `${path}${field}`);
    if (id === value) continue;
    copy ??= { ...record };
    copy[field] = id;
  }
  return copy ?? record;
}

/**
 * A validated call input with every thread reference as a thread id: each tool and API operation
 * takes `threadId`, `parentThreadId` or `childThreadId` as the id, the thread's
 * `switchyard-thread://` link or its web UI URL. Found by field name, at the top level and in the
 * entries of top-level arrays (create_threads' `threads`), as scopeRefs finds them, so both
 * transports resolve every operation's inputs in one place before the scope check reads them.
 */
export function resolveThreadRefs(input: unknown, resolve: ThreadIdResolver): unknown {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return input;
  let record = resolved(input as Record<string, unknown>, resolve, "");
  for (const [key, value] of Object.entries(record)) {
    if (!Array.isArray(value)) continue;
    let changed = false;
    const entries = value.map((entry: unknown, index) => {
      if (typeof entry !== "object" || entry === null || Array.isArray(entry)) return entry;
      const next = resolved(entry as Record<string, unknown>, resolve, `${key}[${index}].`);
      if (next !== entry) changed = true;
      return next;
    });
    if (changed) record = { ...record, [key]: entries };
  }
  return record;
}
