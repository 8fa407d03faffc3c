import type { AdapterEvent } from "../spec/index.js";
import type { AttemptRecord } from "../store/records.js";
import type { CommandContext } from "./command-context.js";
import { putItem } from "./run-lifecycle.js";

// The timeline items a provider turn's events write: what the harness said, thought and did.

const MAX_TOOL_OUTPUT_CHARS = 8_000;

type TurnEvent<T extends AdapterEvent["type"]> = Extract<AdapterEvent, { type: T }>;

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}\n…[truncated ${text.length - max} characters]` : text;
}

/** The durable item id of a provider item within an attempt. */
export function providerItemId(attemptId: string, kind: string, nativeId: string): string {
  return `item:${attemptId}:${kind}:${nativeId}`;
}

/** What every item of the attempt carries. */
export function turnItemBase(attempt: AttemptRecord) {
  return {
    threadId: attempt.threadId,
    runId: attempt.runId,
    attemptId: attempt.id,
    createdBy: "provider" as const,
    creationSource: "provider" as const,
  };
}

/** A completed assistant message; its text becomes the run's summary. */
export async function recordAssistantMessage(
  ctx: CommandContext,
  attempt: AttemptRecord,
  event: TurnEvent<"message.completed">,
): Promise<void> {
  await putItem(ctx, {
    ...turnItemBase(attempt),
    id: providerItemId(attempt.id, "message", event.itemId),
    kind: "assistant_message",
    status: "completed",
    text: event.text,
    data: { role: "assistant" },
  });
  if (event.text.trim() !== "") await ctx.update("run", attempt.runId, (run) => ({ ...run, summary: event.text }));
}

export async function recordReasoning(
  ctx: CommandContext,
  attempt: AttemptRecord,
  event: TurnEvent<"reasoning.completed">,
): Promise<void> {
  await putItem(ctx, {
    ...turnItemBase(attempt),
    id: providerItemId(attempt.id, "reasoning", event.itemId),
    kind: "reasoning",
    status: "completed",
    text: event.text,
    data: {},
  });
}

export async function recordToolCallStarted(
  ctx: CommandContext,
  attempt: AttemptRecord,
  event: TurnEvent<"tool_call.started">,
): Promise<void> {
  await putItem(ctx, {
    ...turnItemBase(attempt),
    id: providerItemId(attempt.id, "tool", event.itemId),
    kind: "tool_call",
    status: "in_progress",
    text: event.title,
    data: {
      toolKind: event.kind,
      name: event.name,
      ...(event.server ? { server: event.server } : {}),
      ...(event.input !== undefined ? { input: event.input } : {}),
    },
  });
}

/** A finished tool call keeps what its start recorded, with its output (truncated) and exit code. */
export async function recordToolCallCompleted(
  ctx: CommandContext,
  attempt: AttemptRecord,
  event: TurnEvent<"tool_call.completed">,
): Promise<void> {
  const id = providerItemId(attempt.id, "tool", event.itemId);
  const existing = await ctx.get("item", id);
  await putItem(ctx, {
    ...turnItemBase(attempt),
    id,
    kind: "tool_call",
    status: event.status,
    text: existing?.text ?? "tool call",
    data: {
      ...(existing?.data ?? {}),
      ...(event.output !== undefined ? { output: truncate(event.output, MAX_TOOL_OUTPUT_CHARS) } : {}),
      ...(typeof event.exitCode === "number" && Number.isInteger(event.exitCode) ? { exitCode: event.exitCode } : {}),
    },
  });
}

export async function recordProposedPlan(
  ctx: CommandContext,
  attempt: AttemptRecord,
  event: TurnEvent<"plan.proposed">,
): Promise<void> {
  await putItem(ctx, {
    ...turnItemBase(attempt),
    id: providerItemId(attempt.id, "plan", event.itemId),
    kind: "proposed_plan",
    status: "completed",
    text: event.text,
    data: {},
  });
}
