import type { NativeSubagentData } from "../engine/native-subagents.js";
import type { TimelineItemRecord } from "../store/records.js";
import type { TableHost } from "../store/table-sql.js";
import { NativeSubagentItemsTable } from "../store/tables/native-subagent-items.js";

// The provider-native sub-agents a thread's turns reported, as the tree views show them: under
// the run that spawned them, beside (never among) the thread's orchestrator-owned children.

/** How many native sub-agents a thread's views list: the newest. */
export const NATIVE_SUBAGENTS_LISTED = 20;
/** How many `subagent` items (orchestrator-owned ones included) a listing reads to find them. */
const SUBAGENT_ITEMS_READ = 200;
/** How far back in a thread's timeline a listing looks for them: its newest this many items. */
export const NATIVE_SUBAGENT_WINDOW = 2_000;
const TASK_PREVIEW_CHARS = 500;
const SUMMARY_PREVIEW_CHARS = 1_000;
const MESSAGE_PREVIEW_CHARS = 500;

function preview(text: string | undefined, max: number): string | null {
  if (text === undefined) return null;
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** True for the `subagent` item of a provider-native sub-agent (not a delegated task's). */
export function isNativeSubagentItem(item: TimelineItemRecord): boolean {
  return item.kind === "subagent" && (item.data as { origin?: unknown }).origin === "provider_native";
}

/** A native sub-agent's usage as a view shows it: a breakdown of its parent turn's, never added. */
function usageView(usage: NativeSubagentData["usage"]) {
  if (usage === undefined) return null;
  const input = usage.inputTokens ?? 0;
  const output = usage.outputTokens ?? 0;
  const cacheRead = usage.cacheReadInputTokens ?? 0;
  const cacheWrite = usage.cacheCreationInputTokens ?? 0;
  return {
    tokens: {
      input,
      output,
      cacheRead,
      cacheWrite,
      reasoning: usage.reasoningOutputTokens ?? 0,
      total: input + output + cacheRead + cacheWrite,
    },
    costUsd: usage.costUsd,
    countedIn: "parent_turn" as const,
  };
}

/** A native sub-agent's item as the tree views show it. */
export function nativeSubagentView(item: TimelineItemRecord) {
  const data = item.data as Partial<NativeSubagentData>;
  const transcript = data.transcript ?? [];
  const latest = transcript[transcript.length - 1];
  return {
    origin: "provider_native" as const,
    itemId: item.id,
    nativeId: data.nativeId ?? "",
    runId: item.runId,
    title: item.text,
    status:
      item.status === "completed"
        ? ("completed" as const)
        : item.status === "in_progress" || item.status === "pending"
          ? ("running" as const)
          : ("failed" as const),
    providerInstanceId: data.providerInstanceId ?? null,
    model: data.model ?? null,
    agentType: data.agentType ?? null,
    task: preview(data.task, TASK_PREVIEW_CHARS),
    taskChars: data.task?.length ?? null,
    summary: preview(data.summary, SUMMARY_PREVIEW_CHARS),
    parentItemId: data.parentItemId ?? null,
    nativeThreadId: data.nativeThreadId ?? null,
    usage: usageView(data.usage),
    transcript: {
      messages: transcript.length,
      dropped: data.transcriptDropped ?? 0,
      latest: latest === undefined ? null : { role: latest.role, text: preview(latest.text, MESSAGE_PREVIEW_CHARS)! },
    },
    createdAt: item.createdAt,
    updatedAt: item.updatedAt,
  };
}

export type NativeSubagentView = ReturnType<typeof nativeSubagentView>;

/** A native sub-agent's kept transcript as text: one `role: text` paragraph a message. */
export function nativeTranscriptText(item: TimelineItemRecord): string | null {
  if (!isNativeSubagentItem(item)) return null;
  const data = item.data as Partial<NativeSubagentData>;
  const dropped = data.transcriptDropped ?? 0;
  const messages = (data.transcript ?? []).map((message) => `${message.role}: ${message.text}`);
  return [...(dropped > 0 ? [`[${dropped} earlier messages not kept]`] : []), ...messages].join("\n\n");
}

/**
 * The newest native sub-agents a thread's turns reported (up to `NATIVE_SUBAGENTS_LISTED`),
 * oldest first. Reads the `subagent` items (delegated tasks' included) among the thread's
 * newest `NATIVE_SUBAGENT_WINDOW` items, so a read of a long thread stays one bounded scan:
 * older native sub-agents stay in the timeline but leave the list.
 */
export async function nativeSubagentsOfThread(host: TableHost, threadId: string): Promise<NativeSubagentView[]> {
  const rows = await new NativeSubagentItemsTable(host).newest(threadId, NATIVE_SUBAGENT_WINDOW, SUBAGENT_ITEMS_READ);
  const native: NativeSubagentView[] = [];
  for (const row of rows) {
    const item = JSON.parse(row.data) as TimelineItemRecord;
    if (!isNativeSubagentItem(item)) continue;
    native.push(nativeSubagentView(item));
    if (native.length === NATIVE_SUBAGENTS_LISTED) break;
  }
  return native.reverse();
}
