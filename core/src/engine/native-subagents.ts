import type { AdapterEvent, ProviderCapabilities, TurnUsageReport } from "../spec/index.js";
import type { AttemptRecord, TimelineItemRecord } from "../store/records.js";
import type { CommandContext } from "./command-context.js";
import { putItem } from "./run-lifecycle.js";
import { providerItemId, turnItemBase } from "./turn-items.js";

// A provider-native sub-agent is recorded as the `subagent` item of the parent's turn that
// spawned it, its `data` carrying what the harness reported. Not an entity of its own: it has no
// thread, run or session Switchyard could drive (it is observed, never owned), its life is inside
// one parent turn, and its usage is a breakdown of that turn's. The item already has the views
// need: it belongs to the thread, run and attempt, it is stored in SQLite and PostgreSQL alike,
// and the web UI hears of each change on the event stream.

/** At most this many transcript messages are kept per native sub-agent: the newest. */
export const NATIVE_TRANSCRIPT_MAX_MESSAGES = 40;
/** Each transcript message is kept up to this many characters. */
export const NATIVE_TRANSCRIPT_MAX_MESSAGE_CHARS = 2_000;
/** A native sub-agent's task and summary are kept up to this many characters. */
const NATIVE_TEXT_MAX_CHARS = 8_000;

type TurnEvent<T extends AdapterEvent["type"]> = Extract<AdapterEvent, { type: T }>;

/** One message of a native sub-agent's transcript, as stored. */
export type NativeTranscriptMessage = {
  readonly itemId: string;
  readonly role: "user" | "assistant";
  readonly text: string;
  /** The message was longer than the bound: `text` is its start. */
  readonly truncated: boolean;
};

/** A native sub-agent's usage figures as the provider reported them (tokens and cost). */
export type NativeSubagentUsage = {
  readonly inputTokens: number | null;
  readonly outputTokens: number | null;
  readonly cacheReadInputTokens: number | null;
  readonly cacheCreationInputTokens: number | null;
  readonly reasoningOutputTokens: number | null;
  readonly costUsd: number | null;
};

/** What a native sub-agent's `subagent` item keeps in its `data`. */
export type NativeSubagentData = {
  readonly origin: "provider_native";
  readonly nativeId: string;
  readonly providerInstanceId: string | null;
  readonly summary?: string;
  readonly nativeThreadId?: string;
  /** The timeline item of the parent's tool call that spawned it. */
  readonly parentItemId?: string;
  readonly task?: string;
  readonly agentType?: string;
  readonly model?: string;
  /**
   * Its usage, when the provider reports usage per sub-agent. Always a breakdown of the parent
   * turn's usage (the spec's contract for `subagent.observed`), never added to any total.
   */
  readonly usage?: NativeSubagentUsage;
  readonly transcript?: readonly NativeTranscriptMessage[];
  /** Transcript messages dropped (the oldest) to keep the bound. */
  readonly transcriptDropped?: number;
};

function bounded(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function figure(value: number | undefined): number | null {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null;
}

/** The usage a native sub-agent reported, or null when it carries no figure at all. */
function usageOf(report: TurnUsageReport): NativeSubagentUsage | null {
  const usage: NativeSubagentUsage = {
    inputTokens: figure(report.inputTokens),
    outputTokens: figure(report.outputTokens),
    cacheReadInputTokens: figure(report.cacheReadInputTokens),
    cacheCreationInputTokens: figure(report.cacheCreationInputTokens),
    reasoningOutputTokens: figure(report.reasoningOutputTokens),
    costUsd: figure(report.costUsd),
  };
  return Object.values(usage).some((value) => value !== null) ? usage : null;
}

/** The capabilities of the session the attempt ran on, or null when it has none (yet). */
async function sessionOf(ctx: CommandContext, attempt: AttemptRecord) {
  return attempt.providerSessionId === null ? null : await ctx.get("providerSession", attempt.providerSessionId);
}

/** True when the session's provider says it reports a native sub-agent's usage (pessimistic). */
function reportsUsage(capabilities: ProviderCapabilities | undefined): boolean {
  return capabilities?.subagents?.reportsUsage === true;
}

/** The transcript fields of an item's data with held messages appended. */
function transcriptFields(before: Partial<NativeSubagentData>, pending: PendingTranscript) {
  const { transcript, dropped } = appendTranscript(before.transcript ?? [], before.transcriptDropped ?? 0, pending);
  return { transcript, ...(dropped > 0 ? { transcriptDropped: dropped } : {}) };
}

/** The item id of a native sub-agent of an attempt. */
export function nativeSubagentItemId(attemptId: string, nativeId: string): string {
  return providerItemId(attemptId, "subagent", nativeId);
}

/**
 * A sub-agent the provider ran itself, observed (Switchyard's own are delegated tasks). Each
 * event is a snapshot: fields it carries replace the stored ones, fields it leaves out keep
 * theirs, and the transcript stays; `pending` is the transcript held for it since (its final
 * event writes it).
 */
export async function recordNativeSubagent(
  ctx: CommandContext,
  attempt: AttemptRecord,
  event: TurnEvent<"subagent.observed">,
  pending: PendingTranscript | null = null,
): Promise<void> {
  const id = nativeSubagentItemId(attempt.id, event.nativeId);
  const existing = await ctx.get("item", id);
  const before = (existing?.data ?? {}) as Partial<NativeSubagentData>;
  const session = await sessionOf(ctx, attempt);
  const usage = event.usage !== undefined && reportsUsage(session?.capabilities) ? usageOf(event.usage) : null;
  const data: NativeSubagentData = {
    ...before,
    origin: "provider_native",
    nativeId: event.nativeId,
    // The child runs inside the parent's harness: the parent's provider instance.
    providerInstanceId: session?.providerInstanceId ?? before.providerInstanceId ?? null,
    ...(event.summary !== undefined ? { summary: bounded(event.summary, NATIVE_TEXT_MAX_CHARS) } : {}),
    ...(event.nativeThreadId !== undefined ? { nativeThreadId: event.nativeThreadId } : {}),
    ...(event.parentItemId !== undefined
      ? { parentItemId: providerItemId(attempt.id, "tool", event.parentItemId) }
      : {}),
    ...(event.task !== undefined ? { task: bounded(event.task, NATIVE_TEXT_MAX_CHARS) } : {}),
    ...(event.agentType !== undefined ? { agentType: event.agentType } : {}),
    ...(event.model !== undefined ? { model: event.model } : {}),
    ...(usage !== null ? { usage } : {}),
    ...(pending !== null ? transcriptFields(before, pending) : {}),
  };
  await putItem(ctx, {
    ...turnItemBase(attempt),
    id,
    kind: "subagent",
    // A late `running` snapshot never reopens a child that ended (or that its turn's end closed).
    status: event.status !== "running" ? event.status : ended(existing) ? existing!.status : "in_progress",
    text: event.title ?? existing?.text ?? "provider sub-agent",
    data,
  });
}

function ended(item: TimelineItemRecord | null): boolean {
  return item !== null && item.status !== "in_progress" && item.status !== "pending";
}

/** Transcript messages of one native sub-agent not yet written to its item. */
export interface PendingTranscript {
  readonly messages: readonly NativeTranscriptMessage[];
  /** Messages dropped from the buffer (the oldest) to keep the bound. */
  readonly dropped: number;
}

/**
 * Appends messages to a kept transcript: the same message again (a replay) replaces itself, and
 * only the newest `NATIVE_TRANSCRIPT_MAX_MESSAGES` stay, the rest counted as dropped.
 */
function appendTranscript(
  kept: readonly NativeTranscriptMessage[],
  droppedBefore: number,
  more: PendingTranscript,
): { transcript: NativeTranscriptMessage[]; dropped: number } {
  const transcript = [...kept];
  for (const message of more.messages) {
    const at = transcript.findIndex((entry) => entry.itemId === message.itemId);
    if (at >= 0) transcript[at] = message;
    else transcript.push(message);
  }
  const cut = Math.max(0, transcript.length - NATIVE_TRANSCRIPT_MAX_MESSAGES);
  // The held messages are the child's whole transcript in this turn so far (its buffer lives as
  // long as the turn), so what it dropped includes what the item counted from it before.
  return { transcript: transcript.slice(cut), dropped: Math.max(droppedBefore, more.dropped) + cut };
}

/**
 * A running turn's native sub-agents' transcript messages, held in memory until the child's
 * final `subagent.observed` (or the turn's end) writes them to its item in one change. Every
 * write of an item appends its whole record to the event log, so writing the transcript at
 * each message would log it over and over (a 40-message child: 40 copies of a growing list);
 * held here, a child's transcript is logged once. Bounded like the item: the newest
 * `NATIVE_TRANSCRIPT_MAX_MESSAGES` per child, each cut to `NATIVE_TRANSCRIPT_MAX_MESSAGE_CHARS`.
 * What a host that stops mid-turn held is lost, as streamed text is. Messages stay held until
 * the commit of their turn's end (`forget`).
 */
export class NativeTranscriptBuffer {
  private readonly pending = new Map<string, Map<string, { messages: NativeTranscriptMessage[]; dropped: number }>>();

  /** Holds a message of a child of the attempt. */
  add(attemptId: string, event: TurnEvent<"subagent.message">): void {
    let children = this.pending.get(attemptId);
    if (children === undefined) this.pending.set(attemptId, (children = new Map()));
    let child = children.get(event.nativeId);
    if (child === undefined) children.set(event.nativeId, (child = { messages: [], dropped: 0 }));
    const message: NativeTranscriptMessage = {
      itemId: event.itemId,
      role: event.role,
      text: bounded(event.text, NATIVE_TRANSCRIPT_MAX_MESSAGE_CHARS),
      truncated: event.text.length > NATIVE_TRANSCRIPT_MAX_MESSAGE_CHARS,
    };
    const at = child.messages.findIndex((entry) => entry.itemId === event.itemId);
    if (at >= 0) child.messages[at] = message;
    else child.messages.push(message);
    if (child.messages.length > NATIVE_TRANSCRIPT_MAX_MESSAGES) {
      child.messages.shift();
      child.dropped += 1;
    }
  }

  /**
   * What is held for one child, or null when nothing is. Kept until `forget`: a batch of events
   * the store refused (busy) is applied again, and must find the same messages.
   */
  peek(attemptId: string, nativeId: string): PendingTranscript | null {
    return this.pending.get(attemptId)?.get(nativeId) ?? null;
  }

  /** What is held for every child of the attempt. */
  peekAttempt(attemptId: string): [nativeId: string, pending: PendingTranscript][] {
    return [...(this.pending.get(attemptId)?.entries() ?? [])];
  }

  /** Lets go of an attempt's messages once its turn's end is committed. */
  forget(attemptId: string): void {
    this.pending.delete(attemptId);
  }
}

/**
 * Writes held transcript messages of a child to its item when its turn ends: those of a child
 * whose final event never came (a child first heard of here is recorded as running); a child
 * whose final event wrote them already is left as it is.
 */
export async function recordNativeTranscript(
  ctx: CommandContext,
  attempt: AttemptRecord,
  nativeId: string,
  pending: PendingTranscript,
): Promise<void> {
  const id = nativeSubagentItemId(attempt.id, nativeId);
  const existing: TimelineItemRecord | null = await ctx.get("item", id);
  const before = (existing?.data ?? {}) as Partial<NativeSubagentData>;
  const { transcript, dropped } = appendTranscript(before.transcript ?? [], before.transcriptDropped ?? 0, pending);
  if (
    existing !== null &&
    dropped === (before.transcriptDropped ?? 0) &&
    JSON.stringify(transcript) === JSON.stringify(before.transcript ?? [])
  )
    return;
  const session = existing === null ? await sessionOf(ctx, attempt) : null;
  const data: NativeSubagentData = {
    providerInstanceId: session?.providerInstanceId ?? null,
    ...before,
    origin: "provider_native",
    nativeId,
    transcript,
    ...(dropped > 0 ? { transcriptDropped: dropped } : {}),
  };
  await putItem(ctx, {
    ...turnItemBase(attempt),
    id,
    kind: "subagent",
    status: existing?.status ?? "in_progress",
    text: existing?.text ?? "provider sub-agent",
    data,
  });
}
