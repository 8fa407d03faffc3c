import type { RunRecord, TimelineItemRecord } from "../store/records.js";
import type { CommandContext } from "./command-context.js";

// A provider-native sub-agent runs inside its parent's turn: when that turn ends (completed,
// stopped, failed, or abandoned by a host that restarted), the child ends with it. Most adapters
// close their open children themselves (the harness kit's `NativeSubagentBook.closeOpen`), but a
// turn the host ends on its own (a hard stop, an exited session, a restart) hears nothing more
// from the harness: without this, such a child would show `running` forever. Imported by the
// run lifecycle, so it touches items directly (no import back into the recording module).

/** The summary of a native sub-agent its parent's turn outlived: no result ever came. */
export const PARENT_TURN_ENDED_SUMMARY = "Its parent's turn ended before this sub-agent reported a result.";

function openNativeChild(item: TimelineItemRecord): boolean {
  return (
    item.kind === "subagent" &&
    (item.status === "in_progress" || item.status === "pending") &&
    (item.data as { origin?: unknown }).origin === "provider_native"
  );
}

/**
 * Marks `failed` every native sub-agent of the run's given attempts still open, with why. Reads
 * the run's part of the timeline only: the items after the message that started the run
 * (`items` is indexed by thread and position).
 */
export async function endOpenNativeSubagents(
  ctx: CommandContext,
  run: RunRecord,
  attemptIds: readonly string[],
): Promise<void> {
  if (attemptIds.length === 0) return;
  const start = (await ctx.get("item", run.messageId))?.position ?? 0;
  const items = await ctx.select("item", "thread_id = ? AND position > ? AND kind = 'subagent'", [run.threadId, start]);
  for (const item of items) {
    if (item.runId !== run.id || item.attemptId === null || !attemptIds.includes(item.attemptId)) continue;
    if (!openNativeChild(item)) continue;
    const data = item.data as { summary?: unknown };
    ctx.put("item", {
      ...item,
      status: "failed",
      data: {
        ...item.data,
        ...(typeof data.summary === "string" ? {} : { summary: PARENT_TURN_ENDED_SUMMARY }),
        endedWithParentTurn: true,
      },
      updatedAt: ctx.now,
    });
  }
}
