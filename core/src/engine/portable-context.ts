import type { ThreadRecord } from "../store/records.js";
import type { ProjectionReader } from "./run-lifecycle.js";

/**
 * A thread's visible conversation as portable context (what a provider that cannot copy or
 * resume a conversation gets in its first prompt), newest last, within a character budget.
 * `beforeRunOrdinal` leaves out the run about to start; `upToRunId` cuts after a given run.
 */
export async function portableContext(
  reader: ProjectionReader,
  source: ThreadRecord,
  maxChars: number,
  options: { upToRunId?: string | undefined; beforeRunOrdinal?: number } = {},
): Promise<string> {
  let items = await reader.select(
    "item",
    "thread_id = ? AND kind IN ('user_message', 'assistant_message', 'proposed_plan')",
    [source.id],
    "ORDER BY position",
  );
  const cut = options.upToRunId === undefined ? null : await reader.get("run", options.upToRunId);
  const ordinalOf = async (runId: string | null) =>
    runId === null ? 0 : ((await reader.get("run", runId))?.ordinal ?? 0);
  // One item after another (never a promise as a filter's answer), reading each item's run.
  const kept: typeof items = [];
  for (const item of items) {
    if (cut === null && options.beforeRunOrdinal === undefined) break;
    const ordinal = await ordinalOf(item.runId);
    if (cut !== null && ordinal > cut.ordinal) continue;
    if (options.beforeRunOrdinal !== undefined && ordinal >= options.beforeRunOrdinal) continue;
    kept.push(item);
  }
  if (cut !== null || options.beforeRunOrdinal !== undefined) items = kept;
  if (items.length === 0) return "";
  const lines = items.map(
    (item) =>
      `${item.kind === "user_message" ? "User" : item.kind === "proposed_plan" ? "Plan" : "Assistant"}: ${item.text}`,
  );
  const header = `This conversation continues thread "${source.title}" (${source.id}). Its history so far:`;
  let body = lines.join("\n\n");
  const budget = Math.max(500, maxChars - header.length - 40);
  if (body.length > budget) body = `…(earlier history omitted)\n\n${body.slice(body.length - budget)}`;
  return `<switchyard_context>\n${header}\n\n${body}\n</switchyard_context>`;
}
