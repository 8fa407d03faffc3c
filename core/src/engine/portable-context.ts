import type { ThreadRecord } from "../store/records.js";
import type { ProjectionReader } from "./run-lifecycle.js";

/**
 * A thread's visible conversation as portable context (what a provider that cannot copy or
 * resume a conversation gets in its first prompt), newest last, within a character budget.
 * `beforeRunOrdinal` leaves out the run about to start; `upToRunId` cuts after a given run.
 */
export function portableContext(
  reader: ProjectionReader,
  source: ThreadRecord,
  maxChars: number,
  options: { upToRunId?: string | undefined; beforeRunOrdinal?: number } = {},
): string {
  let items = reader.store.select(
    "item",
    "thread_id = ? AND kind IN ('user_message', 'assistant_message', 'proposed_plan')",
    [source.id],
    "ORDER BY position",
  );
  const cut = options.upToRunId === undefined ? null : reader.store.get("run", options.upToRunId);
  const ordinalOf = (runId: string | null) => (runId === null ? 0 : (reader.store.get("run", runId)?.ordinal ?? 0));
  if (cut !== null) items = items.filter((item) => ordinalOf(item.runId) <= cut.ordinal);
  if (options.beforeRunOrdinal !== undefined)
    items = items.filter((item) => ordinalOf(item.runId) < options.beforeRunOrdinal!);
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
