import type { InteractionMode, ProviderLimit, RuntimeMode, TurnTerminalStatus } from "../spec/index.js";
import {
  isTerminalRunStatus,
  type Actor,
  type AttemptRecord,
  type CreationSource,
  type RunKind,
  type RunRecord,
  type RunStatus,
  type ThreadRecord,
  type TimelineItemRecord,
} from "../store/records.js";
import { derive } from "../util/ids.js";
import type { CommandContext } from "./command-context.js";
import { endOpenNativeSubagents } from "./native-subagent-endings.js";
import { ItemsTable } from "../store/tables/items.js";

import type { ProjectionReader } from "./projection-reader.js";
export type { ProjectionReader } from "./projection-reader.js";
import { EFFECT, type TurnInterruptPayload, type TurnStartPayload } from "./effects.js";

/** The thread's active run (starting, running or waiting), if any. */
export async function activeRun(ctx: ProjectionReader, threadId: string): Promise<RunRecord | null> {
  return (
    (
      await ctx.select(
        "run",
        "thread_id = ? AND status IN ('starting', 'running', 'waiting')",
        [threadId],
        "ORDER BY ordinal DESC LIMIT 1",
      )
    )[0] ?? null
  );
}

/**
 * A thread's queued runs, as a WHERE clause over runs. The unary plus keeps SQLite off the
 * runs-by-status index, which it otherwise chose: that walked every queued run in the store to
 * find one thread's, where the thread's own runs (runs_thread) are a handful.
 */
export const QUEUED_RUNS_OF_THREAD = "thread_id = ? AND +status = 'queued'";

/** The thread's queued runs, in the order they will start. */
export async function queuedRuns(ctx: ProjectionReader, threadId: string): Promise<RunRecord[]> {
  const runs = await ctx.select("run", QUEUED_RUNS_OF_THREAD, [threadId]);
  return runs.sort((a, b) => a.queueOrder - b.queueOrder || a.ordinal - b.ordinal);
}

/** The newest run of a thread. */
export async function latestRun(ctx: ProjectionReader, threadId: string): Promise<RunRecord | null> {
  return (await ctx.select("run", "thread_id = ?", [threadId], "ORDER BY ordinal DESC LIMIT 1"))[0] ?? null;
}

/** The next item position in a thread. */
export async function nextItemPosition(ctx: ProjectionReader, threadId: string): Promise<number> {
  return (await ctx.table(ItemsTable).lastPosition(threadId)) + 1;
}

/** Adds (or updates, keeping its position) a timeline item. */
export async function putItem(
  ctx: CommandContext,
  item: Omit<TimelineItemRecord, "position" | "createdAt" | "updatedAt"> & { position?: number },
): Promise<TimelineItemRecord> {
  const existing = await ctx.get("item", item.id);
  // Read only when neither the stored item nor the caller gives a position (as before).
  const position = existing?.position ?? item.position ?? (await nextItemPosition(ctx, item.threadId));
  return ctx.put("item", {
    ...item,
    position,
    createdAt: existing?.createdAt ?? ctx.now,
    updatedAt: ctx.now,
  });
}

/** Touches a thread's activity time. */
export async function touchThread(ctx: CommandContext, threadId: string): Promise<ThreadRecord> {
  const thread = await ctx.require("thread", threadId);
  // Touched already in this change (a thread created with its first message): the same record
  // again would only be another event and upsert.
  if (thread.updatedAt === ctx.now) return thread;
  return ctx.put("thread", { ...thread, updatedAt: ctx.now });
}

/** What a new run needs. */
export interface NewRunInput {
  readonly threadId: string;
  readonly messageId: string;
  readonly text: string;
  readonly instructions: string | null;
  readonly kind: RunKind;
  readonly createdBy: Actor;
  readonly creationSource: CreationSource;
  readonly delegatedTaskId: string | null;
  readonly notifiesRequestId?: string | null;
  /** The delegated task whose result this notification run delivers (a local task id, or a linked environment's task key). */
  readonly deliversResultOf?: string | null;
  readonly model?: string | null;
  readonly runtimeMode?: RuntimeMode;
  readonly interactionMode?: InteractionMode;
}

/** Creates a run, queued (`queueOrder` decides its place) or started now. */
export async function createRun(
  ctx: CommandContext,
  input: NewRunInput,
  start: boolean,
  queueOrder?: number,
): Promise<RunRecord> {
  const thread = await ctx.require("thread", input.threadId);
  const ordinal = (await ctx.count("run", "thread_id = ?", [input.threadId])) + 1;
  const id = derive.run(input.threadId, ordinal);
  const order = queueOrder ?? ordinal;
  const run: RunRecord = {
    id,
    threadId: input.threadId,
    ordinal,
    status: "queued",
    kind: input.kind,
    messageId: input.messageId,
    text: input.text,
    instructions: input.instructions,
    model: input.model ?? thread.model,
    effort: thread.effort ?? null,
    runtimeMode: input.runtimeMode ?? thread.runtimeMode,
    interactionMode: input.interactionMode ?? thread.interactionMode,
    createdBy: input.createdBy,
    creationSource: input.creationSource,
    delegatedTaskId: input.delegatedTaskId,
    queueOrder: order,
    held: false,
    currentAttemptId: null,
    attemptCount: 0,
    summary: null,
    error: null,
    terminalReason: null,
    interruptRequested: false,
    notifiesRequestId: input.notifiesRequestId ?? null,
    deliversResultOf: input.deliversResultOf ?? null,
    interruptedOnRequest: false,
    createdAt: ctx.now,
    startedAt: null,
    endedAt: null,
  };
  ctx.put("run", run);
  ctx.put("node", {
    id: derive.runNode(id),
    threadId: input.threadId,
    runId: id,
    kind: "run_root",
    parentNodeId: null,
    status: "queued",
    createdAt: ctx.now,
    updatedAt: ctx.now,
  });
  return start ? await startRun(ctx, run) : run;
}

/** Creates an attempt for a run and queues its provider turn. */
export async function createAttempt(
  ctx: CommandContext,
  run: RunRecord,
  input: {
    text: string;
    instructions: string | null;
    reason: AttemptRecord["reason"];
    restartOfAttemptId: string | null;
  },
  enqueueStart: boolean,
): Promise<AttemptRecord> {
  const ordinal = run.attemptCount + 1;
  const attempt: AttemptRecord = {
    id: derive.attempt(run.id, ordinal),
    runId: run.id,
    threadId: run.threadId,
    ordinal,
    status: "pending",
    providerSessionId: null,
    providerTurnId: null,
    text: input.text,
    instructions: input.instructions,
    restartOfAttemptId: input.restartOfAttemptId,
    reason: input.reason,
    createdAt: ctx.now,
    startedAt: null,
    endedAt: null,
    error: null,
  };
  ctx.put("attempt", attempt);
  ctx.put("run", {
    ...(await ctx.require("run", run.id)),
    attemptCount: ordinal,
    ...(enqueueStart ? { currentAttemptId: attempt.id } : {}),
  });
  if (enqueueStart) {
    ctx.effect({
      id: derive.effect(EFFECT.turnStart, attempt.id),
      lane: run.threadId,
      type: EFFECT.turnStart,
      payload: { attemptId: attempt.id } satisfies TurnStartPayload,
    });
  }
  return attempt;
}

/** Moves a queued run to starting, with its first attempt. */
export async function startRun(ctx: CommandContext, run: RunRecord): Promise<RunRecord> {
  const started: RunRecord = { ...run, status: "starting", held: false, startedAt: ctx.now };
  ctx.put("run", started);
  await setNodeStatus(ctx, run.id, "starting");
  await createAttempt(
    ctx,
    started,
    { text: run.text, instructions: run.instructions, reason: "initial", restartOfAttemptId: null },
    true,
  );
  return await ctx.require("run", run.id);
}

/** Starts the next queued (unheld) run if the thread is idle and not stopped. */
export async function startNextQueued(ctx: CommandContext, threadId: string): Promise<RunRecord | null> {
  if ((await activeRun(ctx, threadId)) !== null) return null;
  const thread = await ctx.require("thread", threadId);
  if (thread.deletedAt !== null) return null;
  const next = (await queuedRuns(ctx, threadId)).find((run) => !run.held && !thread.stopped);
  return next ? await startRun(ctx, next) : null;
}

/**
 * Resume after Stop: the thread is no longer stopped and its held queued runs are released, to
 * start in their queue order once the thread is idle. Returns the released runs, oldest first.
 */
export async function resumeThread(ctx: CommandContext, threadId: string): Promise<RunRecord[]> {
  const released = await releaseHeldRuns(ctx, threadId);
  await startNextQueued(ctx, threadId);
  const runs: RunRecord[] = [];
  for (const run of released) runs.push(await ctx.require("run", run.id));
  return runs;
}

/** Clears Stop and un-holds the held queued runs without starting any (the caller decides). */
export async function releaseHeldRuns(ctx: CommandContext, threadId: string): Promise<RunRecord[]> {
  const thread = await ctx.require("thread", threadId);
  if (thread.stopped) ctx.put("thread", { ...thread, stopped: false, updatedAt: ctx.now });
  const held = (await queuedRuns(ctx, threadId)).filter((run) => run.held);
  return held.map((run) => ctx.put("run", { ...run, held: false }));
}

/** The thread's newest run that reached a provider (queued runs that never started do not count). */
export async function latestExecutedRun(ctx: ProjectionReader, threadId: string): Promise<RunRecord | null> {
  return (
    (await ctx.select("run", "thread_id = ?", [threadId], "ORDER BY ordinal DESC")).find(
      (run) => run.startedAt !== null,
    ) ?? null
  );
}

/** Sets the status of a run's root node. */
export async function setNodeStatus(ctx: CommandContext, runId: string, status: RunStatus): Promise<void> {
  const node = await ctx.get("node", derive.runNode(runId));
  if (node !== null && node.status !== status) ctx.put("node", { ...node, status, updatedAt: ctx.now });
}

/** Marks an attempt as handed to the provider. */
export async function markAttemptStarting(
  ctx: CommandContext,
  attemptId: string,
  providerSessionId: string,
): Promise<AttemptRecord | null> {
  const attempt = await ctx.get("attempt", attemptId);
  if (attempt === null || attempt.status !== "pending") return null;
  return ctx.put("attempt", { ...attempt, status: "starting", providerSessionId });
}

/** Marks an attempt (and its run) running once the provider accepted the turn. */
export async function markAttemptRunning(
  ctx: CommandContext,
  attemptId: string,
  providerTurnId: string | null,
): Promise<void> {
  const attempt = await ctx.get("attempt", attemptId);
  if (attempt === null || (attempt.status !== "starting" && attempt.status !== "pending")) return;
  ctx.put("attempt", {
    ...attempt,
    status: "running",
    providerTurnId: providerTurnId ?? attempt.providerTurnId,
    startedAt: attempt.startedAt ?? ctx.now,
  });
  const run = await ctx.require("run", attempt.runId);
  if (run.currentAttemptId === attempt.id && run.status === "starting") {
    ctx.put("run", { ...run, status: "running" });
    await setNodeStatus(ctx, run.id, "running");
  }
}

function runStatusFor(attemptStatus: TurnTerminalStatus, run: RunRecord): RunStatus {
  if (attemptStatus === "failed") return "failed";
  // Stopped because the provider could not get past a capacity or quota limit: a failure, however
  // the turn itself ended.
  if (run.terminalReason === PROVIDER_LIMIT_REASON && attemptStatus !== "cancelled") return "failed";
  if (attemptStatus === "cancelled") return "cancelled";
  if (attemptStatus === "interrupted") return "interrupted";
  // The provider finished although an interrupt was asked for: the work was stopped on
  // purpose, so a completed turn settles as interrupted.
  return run.interruptRequested ? "interrupted" : "completed";
}

/**
 * Ends an attempt. If a restart attempt waits on it, that attempt starts and the run goes on;
 * otherwise the run ends, its open requests are cancelled and the next queued run starts.
 */
export async function finishAttempt(
  ctx: CommandContext,
  attemptId: string,
  status: TurnTerminalStatus,
  error: { code?: string; message: string } | null,
  reason: string | null = null,
): Promise<void> {
  const attempt = await ctx.get("attempt", attemptId);
  if (attempt === null || ["completed", "failed", "interrupted", "cancelled"].includes(attempt.status)) return;
  ctx.put("attempt", { ...attempt, status, endedAt: ctx.now, error });
  const run = await ctx.require("run", attempt.runId);
  // The turn is over, and so are the native sub-agents it ran (even if a restart follows).
  await endOpenNativeSubagents(ctx, run, [attempt.id]);
  if (isTerminalRunStatus(run.status)) return;
  const restart = (await ctx.select("attempt", "run_id = ? AND status = 'pending'", [run.id])).find(
    (candidate) => candidate.restartOfAttemptId === attempt.id,
  );
  // A restart waiting on the attempt does not outlive a limit the provider reported: the run fails.
  if (restart !== undefined && status !== "failed" && run.terminalReason !== PROVIDER_LIMIT_REASON) {
    ctx.put("run", { ...run, status: "starting", currentAttemptId: restart.id, interruptRequested: false });
    ctx.effect({
      id: derive.effect(EFFECT.turnStart, restart.id),
      lane: run.threadId,
      type: EFFECT.turnStart,
      payload: { attemptId: restart.id } satisfies TurnStartPayload,
    });
    return;
  }
  if (restart !== undefined) ctx.put("attempt", { ...restart, status: "cancelled", endedAt: ctx.now });
  if (run.currentAttemptId !== attempt.id && run.currentAttemptId !== null) return;
  await finishRun(ctx, run.id, runStatusFor(status, run), error, reason);
}

/** Ends a run with a terminal status (idempotent). */
export async function finishRun(
  ctx: CommandContext,
  runId: string,
  status: RunStatus,
  error: { code?: string; message: string } | null,
  reason: string | null,
): Promise<RunRecord> {
  const run = await ctx.require("run", runId);
  if (isTerminalRunStatus(run.status)) return run;
  const ended: RunRecord = {
    ...run,
    status,
    endedAt: ctx.now,
    error: error ?? run.error,
    terminalReason: reason ?? run.terminalReason,
    interruptRequested: false,
  };
  ctx.put("run", ended);
  await setNodeStatus(ctx, run.id, status);
  for (const request of await ctx.select("runtimeRequest", "run_id = ? AND status = 'pending'", [run.id])) {
    ctx.put("runtimeRequest", { ...request, status: "cancelled", resolvedAt: ctx.now });
    const item = await ctx.get("item", request.itemId);
    if (item !== null) ctx.put("item", { ...item, status: "cancelled", updatedAt: ctx.now });
  }
  const liveAttempts = await ctx.select("attempt", "run_id = ? AND status IN ('pending', 'starting', 'running')", [
    run.id,
  ]);
  for (const attempt of liveAttempts)
    ctx.put("attempt", { ...attempt, status: status === "failed" ? "failed" : "cancelled", endedAt: ctx.now });
  await endOpenNativeSubagents(
    ctx,
    run,
    liveAttempts.filter((attempt) => attempt.status !== "pending").map((attempt) => attempt.id),
  );
  await touchThread(ctx, run.threadId);
  for (const hook of ctx.hooks.runTerminal) await hook(ctx, ended);
  await startNextQueued(ctx, run.threadId);
  return await ctx.require("run", runId);
}

/** The terminal reason of a run stopped because its provider reported a limit it could not get past. */
export const PROVIDER_LIMIT_REASON = "provider_limit";

/**
 * The provider reported a capacity or quota limit its turn cannot get past (a used-up free tier,
 * a rate limit it keeps retrying): harnesses often retry such a request on their own, so the run
 * would stay running with the failure only in its timeline. The run fails instead, with the limit
 * as its error (`provider_capacity` or `provider_quota`), and the provider is asked to stop the
 * turn; the turn's end settles the run as failed, which its parent's row and task then show.
 */
export async function failRunOnProviderLimit(
  ctx: CommandContext,
  attempt: AttemptRecord,
  limit: ProviderLimit,
  message: string,
): Promise<void> {
  const run = await ctx.get("run", attempt.runId);
  if (run === null || isTerminalRunStatus(run.status) || run.currentAttemptId !== attempt.id) return;
  if (!["starting", "running"].includes(attempt.status) || run.terminalReason === PROVIDER_LIMIT_REASON) return;
  const error = {
    code: `provider_${limit.kind}`,
    message: `The provider hit a ${limit.kind} limit${limit.code !== undefined ? ` (${limit.code})` : ""}: ${message}`,
  };
  ctx.put("run", { ...run, error, interruptRequested: true, terminalReason: PROVIDER_LIMIT_REASON });
  ctx.effect({
    id: derive.effect(EFFECT.turnInterrupt, `${attempt.id}:${PROVIDER_LIMIT_REASON}`),
    lane: run.threadId,
    type: EFFECT.turnInterrupt,
    payload: { attemptId: attempt.id, reason: PROVIDER_LIMIT_REASON, hard: false } satisfies TurnInterruptPayload,
  });
}

/**
 * A run as the stop policy sees it (`decideRunStop`): whether its current turn was handed to
 * the provider, the line {@link requestInterrupt} draws between ending a run itself and asking
 * the provider.
 */
export async function stoppableRun(
  ctx: ProjectionReader,
  run: RunRecord,
): Promise<{ readonly status: RunStatus; readonly reachedProvider: boolean }> {
  const attempt = run.currentAttemptId === null ? null : await ctx.get("attempt", run.currentAttemptId);
  return { status: run.status, reachedProvider: attempt !== null && attempt.status !== "pending" };
}

/**
 * Asks the provider to interrupt a run's live attempt: the explicit interrupt and Stop path. A run
 * that has not reached the provider yet (queued, or an attempt still pending) ends at once.
 */
export async function requestInterrupt(
  ctx: CommandContext,
  runId: string,
  reason: string,
  hard: boolean,
): Promise<RunRecord> {
  const current = await ctx.require("run", runId);
  if (isTerminalRunStatus(current.status)) return current;
  // Marked before it ends, so the run-terminal reactions know the run was stopped on purpose.
  const run = ctx.put("run", { ...current, interruptedOnRequest: true });
  if (run.status === "queued") return await finishRun(ctx, run.id, "cancelled", null, reason);
  const attempt = run.currentAttemptId === null ? null : await ctx.get("attempt", run.currentAttemptId);
  if (attempt === null || attempt.status === "pending") {
    if (attempt !== null) ctx.put("attempt", { ...attempt, status: "cancelled", endedAt: ctx.now });
    return await finishRun(ctx, run.id, "interrupted", null, reason);
  }
  ctx.put("run", { ...run, interruptRequested: true, terminalReason: reason });
  ctx.effect({
    id: derive.effect(EFFECT.turnInterrupt, `${attempt.id}:${ctx.commandId ?? ctx.nowMs}`),
    lane: run.threadId,
    type: EFFECT.turnInterrupt,
    payload: { attemptId: attempt.id, reason, hard } satisfies TurnInterruptPayload,
  });
  return await ctx.require("run", runId);
}
