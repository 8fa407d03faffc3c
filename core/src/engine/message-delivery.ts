import type { InteractionMode, ProviderCapabilities, RuntimeMode } from "../spec/index.js";
import { decideMessageDispatch, type DispatchAction, type DispatchDecision, type SendMode } from "../policy/index.js";
import type {
  Actor,
  AttemptRecord,
  CreationSource,
  ReachOrigin,
  RunKind,
  RunRecord,
  ThreadRecord,
} from "../store/records.js";
import { derive } from "../util/ids.js";
import type { CommandContext } from "./command-context.js";
import { EFFECT, type TurnInterruptPayload, type TurnSteerPayload } from "./effects.js";
import { OrchestratorFailure } from "./orchestrator-failure.js";
import {
  activeRun,
  createAttempt,
  createRun,
  putItem,
  queuedRuns,
  releaseHeldRuns,
  startNextQueued,
  touchThread,
  type NewRunInput,
} from "./run-lifecycle.js";
import { requireLiveThread } from "./thread-records.js";

/** What a message needs to be delivered. */
export interface DeliverMessageInput {
  readonly threadId: string;
  readonly messageId: string;
  readonly text: string;
  readonly mode: SendMode;
  readonly createdBy: Actor;
  readonly creationSource: CreationSource;
  /** Instructions for the run's first attempt (role, orchestration, portable context). */
  readonly instructions?: string | null;
  readonly kind?: RunKind;
  readonly delegatedTaskId?: string | null;
  readonly notifiesRequestId?: string | null;
  /**
   * The delegated task whose result this notification delivers, local or in a linked environment
   * (a stop-and-queue-ahead message queues behind it).
   */
  readonly deliversResultOf?: string | null;
  /**
   * Queue it ahead of every queued message (behind results already queued ahead): a result that
   * was pending when a stop-and-queue-ahead send stopped the turn survives the stop and runs first.
   */
  readonly aheadOfQueuedMessages?: boolean;
  /** Facts kept on the message's timeline item (`data`), such as where a system message came from. */
  readonly details?: Readonly<Record<string, unknown>>;
  /** The target provider's capabilities (read by the caller from the provider registry). */
  readonly capabilities: ProviderCapabilities;
  readonly model?: string | null;
  readonly runtimeMode?: RuntimeMode;
  readonly interactionMode?: InteractionMode;
  /** The thread whose agent sent the message, recorded on its timeline item. */
  readonly source?: { readonly threadId: string; readonly link: string; readonly title: string } | null;
  /** The linked environment at the start of the sender's chain: the run the message starts or steers carries it. */
  readonly reachedFrom?: ReachOrigin | null;
}

/** How a message was delivered (`t3_thread_send` result `delivery`). */
export type Delivery = "started" | "queued" | "steered" | "restarted" | "interrupted_and_queued";

/** The outcome of a delivery: ids, what was done, and the policy's reasoning. */
export interface DeliveryResult {
  readonly threadId: string;
  readonly messageId: string;
  /** The run the message started or joined. */
  readonly runId: string;
  readonly delivery: Delivery;
  readonly decision: {
    readonly asked: SendMode;
    readonly action: DispatchAction;
    readonly degraded: boolean;
    readonly reason: string;
  };
}

/** Why a run was stopped by a stop-and-queue-ahead send (`restart` on a provider that can only stop a turn). */
export const STOPPED_FOR_MESSAGE = "interrupted_for_message";

/** Whether a run ended because a stop-and-queue-ahead send stopped it (not a Stop or an interrupt on request). */
export function stoppedForMessage(run: RunRecord): boolean {
  return run.terminalReason === STOPPED_FOR_MESSAGE && run.interruptedOnRequest !== true;
}

const DELIVERY: Record<DispatchAction, Delivery> = {
  start: "started",
  queue: "queued",
  steer: "steered",
  restart: "restarted",
  interrupt_then_queue_first: "interrupted_and_queued",
};

/**
 * Delivers a user-role message to a thread through the shared policy: starts a run, queues
 * one, steers the live turn, or interrupts and restarts it. The message is recorded in the
 * timeline whatever the path, so nothing accepted is lost.
 */
export async function deliverMessage(ctx: CommandContext, input: DeliverMessageInput): Promise<DeliveryResult> {
  const target = await requireLiveThread(ctx, input.threadId);
  if (target.lineage.relationship === "attached") throw attachedThreadRefusal(target);
  // A system notice never resumes a stopped thread: it waits, held, for Resume or the next
  // explicit send. An explicit send resumes the thread, and the held runs go first, in order.
  if (target.stopped && input.kind === "notification") return await holdNotice(ctx, input);
  if (target.stopped) await releaseHeldRuns(ctx, target.id);
  const thread = await ctx.require("thread", target.id);
  const active = await activeRun(ctx, thread.id);
  const attempt = active?.currentAttemptId ? await ctx.get("attempt", active.currentAttemptId) : null;
  const decision = decide(input, thread, active, attempt);
  const instructions = await takeForkHandoff(ctx, thread.id, decision.action, input.instructions ?? null);
  const { runId, action } = await carryOut(ctx, decision.action, {
    input,
    thread,
    active,
    attempt,
    runInput: newRunInput(input, instructions),
  });

  // Work another environment asked for, here or through an agent it reached, stays marked so
  // it never calls out through this environment's links (a steer marks the run it joins).
  const reachedFrom = input.reachedFrom ?? null;
  if (reachedFrom !== null)
    await ctx.update("run", runId, (run) => (run.reachedFrom !== undefined ? run : { ...run, reachedFrom }));
  await recordMessage(ctx, input, runId, action);
  return {
    threadId: thread.id,
    messageId: input.messageId,
    runId,
    delivery: DELIVERY[action],
    decision: {
      asked: decision.asked,
      action,
      degraded: decision.degraded,
      reason:
        action === decision.action
          ? decision.reason
          : "Older queued work runs first, so the message is queued behind it.",
    },
  };
}

/** The shared policy's decision for this message and the thread's active run, or its refusal (`thread_not_sendable`). */
function decide(
  input: DeliverMessageInput,
  thread: ThreadRecord,
  active: RunRecord | null,
  attempt: AttemptRecord | null,
): Extract<DispatchDecision, { ok: true }> {
  const decision = decideMessageDispatch({
    requested: input.mode,
    activeRun:
      active === null
        ? null
        : {
            status: active.status,
            providerTurnLive: attempt !== null && attempt.status === "running",
            interruptRequested: active.interruptRequested,
            text: active.text,
          },
    capabilities: input.capabilities,
    text: input.text,
    notification: input.kind === "notification",
  });
  if (!decision.ok) {
    throw new OrchestratorFailure("thread_not_sendable", decision.reason, {
      threadId: thread.id,
      asked: decision.asked,
      capability: decision.capability,
    });
  }
  return decision;
}

/** A fork whose conversation travels as portable context hands it to its first run (consumed here). */
async function takeForkHandoff(
  ctx: CommandContext,
  threadId: string,
  action: DispatchAction,
  instructions: string | null,
): Promise<string | null> {
  if (action !== "start" && action !== "queue" && action !== "interrupt_then_queue_first") return instructions;
  const handoff = (await ctx.select("contextTransfer", "target_thread_id = ? AND kind = 'fork'", [threadId])).find(
    (transfer) => transfer.status === "pending" && transfer.strategy === "portable",
  );
  if (handoff === undefined) return instructions;
  ctx.put("contextTransfer", { ...handoff, status: "consumed", consumedAt: ctx.now });
  return instructions === null ? handoff.content : `${handoff.content}\n\n${instructions}`;
}

/** What a dispatch action works on. */
interface DispatchTarget {
  readonly input: DeliverMessageInput;
  readonly thread: ThreadRecord;
  readonly active: RunRecord | null;
  readonly attempt: AttemptRecord | null;
  readonly runInput: NewRunInput;
}

/** Carries out the policy's action: the run the message started or joined, and what was done (older queued work can turn a start into a queue). */
async function carryOut(
  ctx: CommandContext,
  decided: DispatchAction,
  target: DispatchTarget,
): Promise<{ runId: string; action: DispatchAction }> {
  const { input, thread, active, attempt, runInput } = target;
  let runId: string;
  let action: DispatchAction = decided;
  switch (decided) {
    case "start": {
      // Idle, but older queued work (queued while a run was ending) goes first: queue behind
      // it and start the oldest.
      const waiting = (await queuedRuns(ctx, thread.id)).some((run) => !run.held);
      runId = (await createRun(ctx, runInput, !waiting, await aheadOrder(ctx, input))).id;
      if (waiting) {
        await startNextQueued(ctx, thread.id);
        action = "queue";
      }
      break;
    }
    case "queue":
      runId = (await createRun(ctx, runInput, false, await aheadOrder(ctx, input))).id;
      break;
    case "interrupt_then_queue_first": {
      // Ahead of other queued messages, but a delegated-task result waiting in the queue (not
      // held by Stop) survives the stop and still runs first.
      const queued = await queuedRuns(ctx, thread.id);
      const results = queued.filter((run) => !run.held && run.deliversResultOf != null);
      const base = Math.min(0, ...queued.map((run) => run.queueOrder));
      results.forEach((run, index) => ctx.put("run", { ...run, queueOrder: base - results.length - 1 + index }));
      runId = (await createRun(ctx, runInput, false, base - 1)).id;
      ctx.put("run", { ...active!, interruptRequested: true, terminalReason: STOPPED_FOR_MESSAGE });
      ctx.effect({
        id: derive.effect(EFFECT.turnInterrupt, `${attempt!.id}:${input.messageId}`),
        lane: thread.id,
        type: EFFECT.turnInterrupt,
        payload: {
          attemptId: attempt!.id,
          reason: STOPPED_FOR_MESSAGE,
          hard: false,
        } satisfies TurnInterruptPayload,
      });
      break;
    }
    case "steer":
      runId = active!.id;
      ctx.effect({
        id: derive.effect(EFFECT.turnSteer, input.messageId),
        lane: thread.id,
        type: EFFECT.turnSteer,
        payload: {
          attemptId: attempt!.id,
          runId: active!.id,
          messageId: input.messageId,
          text: input.text,
        } satisfies TurnSteerPayload,
      });
      break;
    case "restart": {
      runId = active!.id;
      await createAttempt(
        ctx,
        active!,
        { text: input.text, instructions: null, reason: "steer_restart", restartOfAttemptId: attempt!.id },
        false,
      );
      ctx.effect({
        id: derive.effect(EFFECT.turnInterrupt, `${attempt!.id}:${input.messageId}`),
        lane: thread.id,
        type: EFFECT.turnInterrupt,
        payload: { attemptId: attempt!.id, reason: "steer_restart", hard: false } satisfies TurnInterruptPayload,
      });
      break;
    }
  }
  return { runId, action };
}

/**
 * The queue order of a message asked to go ahead of the queued messages: just before the first
 * unheld one that delivers no result, so results queued ahead earlier keep their place and
 * several results delivered together keep theirs (equal orders start by ordinal). Undefined: the
 * usual order, behind everything queued.
 */
async function aheadOrder(ctx: CommandContext, input: DeliverMessageInput): Promise<number | undefined> {
  if (input.aheadOfQueuedMessages !== true) return undefined;
  const messages = (await queuedRuns(ctx, input.threadId)).filter((run) => !run.held && run.deliversResultOf == null);
  return Math.min(0, ...messages.map((run) => run.queueOrder)) - 1;
}

function newRunInput(input: DeliverMessageInput, instructions: string | null): NewRunInput {
  return {
    threadId: input.threadId,
    messageId: input.messageId,
    text: input.text,
    instructions,
    kind: input.kind ?? "work",
    createdBy: input.createdBy,
    creationSource: input.creationSource,
    delegatedTaskId: input.delegatedTaskId ?? null,
    notifiesRequestId: input.notifiesRequestId ?? null,
    deliversResultOf: input.deliversResultOf ?? null,
    ...(input.model !== undefined ? { model: input.model } : {}),
    ...(input.runtimeMode !== undefined ? { runtimeMode: input.runtimeMode } : {}),
    ...(input.interactionMode !== undefined ? { interactionMode: input.interactionMode } : {}),
  };
}

/** The message in the timeline, whatever path it took, so nothing accepted is lost. */
async function recordMessage(
  ctx: CommandContext,
  input: DeliverMessageInput,
  runId: string,
  action: DispatchAction,
): Promise<void> {
  await putItem(ctx, {
    id: input.messageId,
    threadId: input.threadId,
    runId,
    attemptId: null,
    kind: "user_message",
    status: "completed",
    text: input.text,
    data: {
      ...input.details,
      delivery: DELIVERY[action],
      ...(input.kind === "notification" ? { notification: true } : {}),
      ...(input.source != null ? { source: input.source } : {}),
    },
    createdBy: input.createdBy,
    creationSource: input.creationSource,
  });
  await touchThread(ctx, input.threadId);
}

/** A notice for a stopped thread: queued and held, like the runs Stop held. */
async function holdNotice(ctx: CommandContext, input: DeliverMessageInput): Promise<DeliveryResult> {
  const run = await createRun(ctx, newRunInput(input, input.instructions ?? null), false);
  ctx.put("run", { ...run, held: true });
  await recordMessage(ctx, input, run.id, "queue");
  return {
    threadId: input.threadId,
    messageId: input.messageId,
    runId: run.id,
    delivery: "queued",
    decision: {
      asked: input.mode,
      action: "queue",
      degraded: false,
      reason: "The thread is stopped, so the notice is held until Resume or the next explicit send.",
    },
  };
}

/**
 * An attached thread stands for an agent session outside Switchyard (the user's own harness): no
 * turn runs in it here, so nothing is delivered to it. Its agent reads its children's results with
 * task_status (or its delegate_task wait) instead.
 */
export function attachedThreadRefusal(thread: ThreadRecord): OrchestratorFailure {
  const client = thread.lineage.attached?.client?.name ?? "an outside client";
  return new OrchestratorFailure(
    "thread_not_sendable",
    `Thread ${thread.id} is an attached thread: its agent (${client}) runs outside Switchyard, so Switchyard cannot start a turn in it. Message one of its children instead, or the agent itself in its own window.`,
    { threadId: thread.id, relationship: "attached" },
  );
}
