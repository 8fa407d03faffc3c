import type { AdapterEvent } from "../spec/index.js";
import type { AttemptRecord, RuntimeRequestNativeOrigin, RuntimeRequestRecord } from "../store/records.js";
import type { CommandContext } from "./command-context.js";
import { putItem, setNodeStatus } from "./run-lifecycle.js";
import { nativeSubagentItemId } from "./native-subagents.js";
import { providerItemId, turnItemBase } from "./turn-items.js";

// A turn's runtime requests (approvals, questions): opened by the provider's event, settled by
// an answer, the provider, or the end of the turn. A blocking one holds its run in `waiting`.

/** The durable id of a runtime request. */
export function runtimeRequestId(attemptId: string, nativeId: string): string {
  return `request:${attemptId}:${nativeId}`;
}

/**
 * The native sub-agent a request came from, named by its item when the adapter reported it
 * (a harness may ask for a child before it reports the child itself: then no title yet).
 */
async function nativeOriginOf(
  ctx: CommandContext,
  attempt: AttemptRecord,
  nativeId: string | undefined,
): Promise<RuntimeRequestNativeOrigin | null> {
  if (nativeId === undefined) return null;
  const itemId = nativeSubagentItemId(attempt.id, nativeId);
  const item = await ctx.get("item", itemId);
  return { nativeId, itemId, title: item?.text ?? null };
}

/** Opens a request the provider raised (once: a repeated event changes nothing), with its timeline item. */
export async function openRuntimeRequest(
  ctx: CommandContext,
  attempt: AttemptRecord,
  event: Extract<AdapterEvent, { type: "runtime_request.opened" }>,
): Promise<void> {
  const id = runtimeRequestId(attempt.id, event.requestId);
  if ((await ctx.get("runtimeRequest", id)) !== null) return;
  const itemId = providerItemId(attempt.id, "request", event.requestId);
  const request = event.request;
  const blocking = request.kind === "approval" ? true : request.blocking;
  const title = request.kind === "approval" ? request.title : request.questions.map((q) => q.question).join("\n");
  const nativeSubagent = await nativeOriginOf(ctx, attempt, event.subagentNativeId);
  await putItem(ctx, {
    ...turnItemBase(attempt),
    id: itemId,
    kind: "runtime_request",
    status: "pending",
    text: title,
    data: {
      requestId: id,
      requestKind: request.kind,
      ...(request.kind === "approval" ? { approvalKind: request.approvalKind } : {}),
      blocking,
      ...(nativeSubagent !== null ? { nativeSubagent } : {}),
    },
  });
  const record: RuntimeRequestRecord = {
    id,
    threadId: attempt.threadId,
    runId: attempt.runId,
    attemptId: attempt.id,
    providerSessionId: attempt.providerSessionId ?? "",
    nativeRequestId: event.requestId,
    kind: request.kind,
    approvalKind: request.kind === "approval" ? request.approvalKind : null,
    blocking,
    status: "pending",
    request,
    response: null,
    itemId,
    nativeSubagent,
    parentNotice: null,
    createdAt: ctx.now,
    resolvedAt: null,
  };
  ctx.put("runtimeRequest", record);
  if (blocking) {
    const run = await ctx.require("run", attempt.runId);
    if (run.status === "running" || run.status === "starting") {
      ctx.put("run", { ...run, status: "waiting" });
      await setNodeStatus(ctx, run.id, "waiting");
    }
  }
  for (const hook of ctx.hooks.runtimeRequestChanged) await hook(ctx, id);
}

/** Settles a runtime request and, if nothing else blocks its run, lets the run go on. */
export async function resolveRuntimeRequest(
  ctx: CommandContext,
  request: RuntimeRequestRecord,
  status: "answered" | "cancelled" | "expired",
  response: RuntimeRequestRecord["response"],
): Promise<RuntimeRequestRecord> {
  const resolved = ctx.put("runtimeRequest", {
    ...request,
    status,
    response: response ?? request.response,
    resolvedAt: ctx.now,
  });
  const item = await ctx.get("item", request.itemId);
  if (item !== null) {
    ctx.put("item", {
      ...item,
      status: status === "answered" ? "completed" : "cancelled",
      data: { ...item.data, resolution: status },
      updatedAt: ctx.now,
    });
  }
  const run = await ctx.get("run", request.runId);
  if (run !== null && run.status === "waiting") {
    const stillBlocked = (await ctx.select("runtimeRequest", "run_id = ? AND status = 'pending'", [run.id])).some(
      (r) => r.blocking,
    );
    if (!stillBlocked) {
      ctx.put("run", { ...run, status: "running" });
      await setNodeStatus(ctx, run.id, "running");
    }
  }
  for (const hook of ctx.hooks.runtimeRequestChanged) await hook(ctx, request.id);
  return resolved;
}
