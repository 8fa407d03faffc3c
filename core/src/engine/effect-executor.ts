import { toErrorShape } from "../spec/index.js";
import { type Logger, LoggerToken } from "../logging/logger.js";
import type { OutboxEffect } from "../store/ports.js";
import { type AttemptRecord, isTerminalRunStatus, type RunRecord, type ThreadRecord } from "../store/records.js";
import type { CommandContext } from "./command-context.js";
import { type Engine, EngineToken, ProviderSessionManagerToken } from "./ports.js";
import {
  EFFECT,
  type RequestRespondPayload,
  type TurnInterruptPayload,
  type TurnStartPayload,
  type TurnSteerPayload,
} from "./effects.js";
import { resolveRuntimeRequest } from "./runtime-requests.js";
import type { EffectRunner, LiveSession, ProviderSessions } from "./ports.js";
import { type EffectHandler, EffectHandlersToken } from "./effect-handler.js";
import { deliverInstructions } from "./instruction-delivery.js";
import { portableContext } from "./portable-context.js";
import {
  createRun,
  finishAttempt,
  markAttemptRunning,
  markAttemptStarting,
  putItem,
  startNextQueued,
} from "./run-lifecycle.js";
import { inject, injectable } from "tsyringe";
import { isStoreBusy } from "../util/store-busy.js";
import { recordWhenStoreFree } from "./busy-store-retry.js";

/** How long a provider may take to end a turn after an interrupt before its session is killed. */
const INTERRUPT_GRACE_MS = 30_000;

/**
 * Carries out outbox effects against provider sessions. Every outcome, including a provider's
 * failure, is written back as state: a failed start fails the run with the provider's error,
 * a steer that lands too late becomes a queued follow-up, so nothing accepted is lost.
 */
@injectable()
export class EffectExecutor implements EffectRunner {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(ProviderSessionManagerToken) private readonly sessions: ProviderSessions,
    @inject(LoggerToken) private readonly logger: Logger,
    @inject(EffectHandlersToken) private readonly handlers: readonly EffectHandler[] = [],
  ) {}

  async execute(effect: OutboxEffect): Promise<void> {
    const handler = this.handlers.find((candidate) => candidate.types.includes(effect.type));
    if (handler !== undefined) return handler.execute(effect);
    switch (effect.type) {
      case EFFECT.turnStart:
        return this.startTurn(effect.payload as TurnStartPayload);
      case EFFECT.turnSteer:
        return this.steerTurn(effect.payload as TurnSteerPayload);
      case EFFECT.turnInterrupt:
        return this.interruptTurn(effect.payload as TurnInterruptPayload);
      case EFFECT.requestRespond:
        return this.respond(effect.payload as RequestRespondPayload);
      default:
        this.logger.warn("unknown outbox effect type; skipped", { type: effect.type, id: effect.id });
    }
  }

  private async startTurn({ attemptId }: TurnStartPayload): Promise<void> {
    const attempt = await this.engine.reader.get("attempt", attemptId);
    if (attempt === null || attempt.status !== "pending") return;
    const run = (await this.engine.reader.get("run", attempt.runId))!;
    if (isTerminalRunStatus(run.status)) return;
    // The turn's start is recorded with its session's open record when this opens the session
    // (one commit for both); else on its own once the session is there.
    const markStarting = async (ctx: CommandContext, session: LiveSession) => {
      const marked = await markAttemptStarting(ctx, attemptId, session.providerSessionId);
      // The run says how its session went on with the conversation (resumed, or handed over
      // and why), as a send says how its message was delivered.
      if (marked !== null && session.continuation !== null)
        await ctx.update("run", attempt.runId, (current) => ({
          ...current,
          sessionContinuation: session.continuation,
        }));
      return marked;
    };
    let startedWithOpen: { marked: AttemptRecord | null } | null = null;
    let live;
    try {
      live = await this.sessions.ensure(attempt.threadId, async (ctx, opened) => {
        startedWithOpen = { marked: await markStarting(ctx, opened) };
      });
    } catch (error) {
      // A database another connection holds locked is not the provider's failure: the outbox
      // runs the start again once the lock is gone.
      if (isStoreBusy(error)) throw error;
      const shape = toErrorShape(error, "provider_error");
      await this.record(
        () =>
          this.engine.apply(
            async (ctx) =>
              await finishAttempt(
                ctx,
                attemptId,
                "failed",
                { code: shape.code, message: shape.message },
                "session_open_failed",
              ),
          ),
        `failed start of ${attemptId}`,
      );
      return;
    }
    const continuation = live.continuation;
    const opened = live;
    const started = (
      startedWithOpen ?? { marked: await this.engine.apply(async (ctx) => await markStarting(ctx, opened)) }
    ).marked;
    if (started === null) return;
    if (live.continuation === continuation) live.continuation = null;
    this.sessions.touchCredential(live.providerSessionId);
    const thread = (await this.engine.reader.get("thread", attempt.threadId))!;
    const handoff = live.needsHistoryHandoff
      ? await this.handOffHistory(live, thread, run, continuation?.reason ?? null)
      : null;
    const orchestration = live.orchestrationInstructions;
    live.orchestrationInstructions = null;
    const delivered = deliverInstructions(
      attempt.text,
      [orchestration, handoff, attempt.instructions],
      live.session.capabilities().context.acceptsInstructions,
    );
    let result;
    try {
      result = await live.session.startTurn({
        turnId: attempt.id,
        runId: run.id,
        text: delivered.text,
        instructions: delivered.instructions,
        model: run.model ?? thread.model,
        effort: run.effort ?? thread.effort ?? null,
        runtimeMode: run.runtimeMode,
        interactionMode: run.interactionMode,
        restartOfTurnId: attempt.restartOfAttemptId,
      });
    } catch (error) {
      const shape = toErrorShape(error, "provider_error");
      await this.record(
        () =>
          this.engine.apply(
            async (ctx) =>
              await finishAttempt(
                ctx,
                attemptId,
                "failed",
                { code: shape.code, message: shape.message },
                "turn_start_failed",
              ),
          ),
        `failed start of ${attemptId}`,
      );
      return;
    }
    // The provider has the turn now: a locked database delays this record, never fails the turn.
    await this.record(
      () => this.engine.apply(async (ctx) => await markAttemptRunning(ctx, attemptId, result.providerTurnId ?? null)),
      `start of ${attemptId}`,
    );
  }

  /** Records what a provider already did, waiting out a database another connection holds locked. */
  private async record(write: () => Promise<unknown>, what: string): Promise<void> {
    await recordWhenStoreFree(write, () => this.engine.store.isOpen(), this.logger, what);
  }

  /**
   * The thread's history for a provider conversation that starts over (its provider could not
   * resume the old one), recorded as a handoff so the timeline shows what the provider was given.
   */
  private async handOffHistory(
    live: LiveSession,
    thread: ThreadRecord,
    run: RunRecord,
    reason: string | null,
  ): Promise<string | null> {
    live.needsHistoryHandoff = false;
    const capabilities = (await this.engine.reader.get("providerSession", live.providerSessionId))?.capabilities;
    const content = await portableContext(this.engine.reader, thread, capabilities?.context.maxHandoffChars ?? 12_000, {
      beforeRunOrdinal: run.ordinal,
    });
    if (content === "") return null;
    await this.record(
      () =>
        this.engine.apply(async (ctx) => {
          ctx.put("contextTransfer", {
            id: `transfer:session-handoff:${live.providerSessionId}`,
            kind: "session_handoff",
            sourceThreadId: thread.id,
            targetThreadId: thread.id,
            strategy: "portable",
            status: "consumed",
            content,
            delegatedTaskId: null,
            createdAt: ctx.now,
            consumedAt: ctx.now,
          });
          await putItem(ctx, {
            id: `item:handoff:${live.providerSessionId}`,
            threadId: thread.id,
            runId: run.id,
            attemptId: run.currentAttemptId,
            kind: "handoff",
            status: "completed",
            text:
              reason ??
              "The provider could not resume this thread's conversation, so its history was handed to a new provider session as portable context.",
            data: {
              strategy: "portable",
              chars: content.length,
              degraded: true,
              ...(reason !== null ? { reason } : {}),
            },
            createdBy: "system",
            creationSource: "system",
          });
        }),
      `history handoff to ${live.providerSessionId}`,
    );
    return content;
  }

  private async steerTurn(payload: TurnSteerPayload): Promise<void> {
    const attempt = await this.engine.reader.get("attempt", payload.attemptId);
    const live = attempt ? this.sessions.get(attempt.threadId) : null;
    if (
      attempt !== null &&
      attempt.status === "running" &&
      live !== null &&
      live.providerSessionId === attempt.providerSessionId
    ) {
      try {
        const outcome = await live.session.steerTurn({ turnId: attempt.id, text: payload.text });
        // The provider consumed the text itself (a Pi input handler): it reaches no model, and a
        // follow-up would repeat what consumed it. The message's timeline item says so.
        if (outcome?.disposition === "handled") {
          await this.engine.apply(async (ctx) => {
            const message = await ctx.get("item", payload.messageId);
            if (message !== null)
              ctx.put("item", {
                ...message,
                data: {
                  ...message.data,
                  delivery: "handled",
                  ...(outcome.detail !== undefined ? { handledBy: outcome.detail } : {}),
                },
                updatedAt: ctx.now,
              });
          });
        }
        return;
      } catch (error) {
        this.logger.info("steer did not land; the message is queued instead", {
          threadId: attempt.threadId,
          error: (error as Error).message,
        });
      }
    }
    // The turn ended (or refused the steer) before the message reached it: run it as a
    // follow-up, so an accepted message is never lost. It stays what it was: a notification is
    // still one, and a message steered into a delegated task's work is still that task's work
    // (while the task is unpublished), so the task waits for it.
    await this.engine.apply(async (ctx) => {
      const message = await ctx.get("item", payload.messageId);
      const threadId = message?.threadId ?? attempt?.threadId;
      if (threadId === undefined) return;
      const steered = await ctx.get("run", payload.runId);
      const task = steered?.delegatedTaskId ? await ctx.get("delegatedTask", steered.delegatedTaskId) : null;
      const run = await createRun(
        ctx,
        {
          threadId,
          messageId: payload.messageId,
          text: payload.text,
          instructions: null,
          kind: message?.data.notification === true ? "notification" : "work",
          createdBy: message?.createdBy ?? "user",
          creationSource: message?.creationSource ?? "system",
          delegatedTaskId: task !== null && task.finalizedAt === null ? task.id : null,
        },
        false,
      );
      await startNextQueued(ctx, threadId);
      if (message !== null)
        ctx.put("item", {
          ...message,
          runId: run.id,
          data: { ...message.data, delivery: "queued", steerFellBack: true },
          updatedAt: ctx.now,
        });
    });
  }

  private async interruptTurn(payload: TurnInterruptPayload): Promise<void> {
    const attempt = await this.engine.reader.get("attempt", payload.attemptId);
    if (attempt === null || !["starting", "running"].includes(attempt.status)) return;
    const live = this.sessions.get(attempt.threadId);
    if (live === null || live.providerSessionId !== attempt.providerSessionId) {
      await this.engine.apply(async (ctx) => await finishAttempt(ctx, attempt.id, "interrupted", null, payload.reason));
      return;
    }
    try {
      await live.session.interruptTurn({ turnId: attempt.id, reason: payload.reason, hard: payload.hard });
    } catch (error) {
      this.logger.warn("interrupt failed", { threadId: attempt.threadId, error: (error as Error).message });
      await this.engine.apply(async (ctx) => {
        const run = await ctx.get("run", attempt.runId);
        if (run !== null && !isTerminalRunStatus(run.status)) ctx.put("run", { ...run, interruptRequested: false });
        await putItem(ctx, {
          id: `item:${attempt.id}:interrupt-failed:${ctx.nowMs}`,
          threadId: attempt.threadId,
          runId: attempt.runId,
          attemptId: attempt.id,
          kind: "notice",
          status: "failed",
          text: `Interrupt failed: ${(error as Error).message}`,
          data: { level: "error" },
          createdBy: "system",
          creationSource: "system",
        });
      });
      return;
    }
    // A provider that acknowledged the interrupt but never ends the turn would hold the thread
    // forever; after a grace period its session is closed and the turn recorded as interrupted.
    const closeIfStillRunning = async (): Promise<void> => {
      const current = this.engine.store.isOpen() ? await this.engine.reader.get("attempt", attempt.id) : null;
      if (current === null || !["starting", "running"].includes(current.status)) return;
      this.logger.warn("provider did not end an interrupted turn; closing its session", { threadId: attempt.threadId });
      void this.sessions
        .close(attempt.threadId, "interrupt_timeout")
        .then(async () => {
          if (this.engine.store.isOpen())
            await this.engine.apply(
              async (ctx) => await finishAttempt(ctx, attempt.id, "interrupted", null, payload.reason),
            );
        })
        .catch((error: unknown) =>
          this.logger.warn("recording an interrupt that timed out failed", {
            threadId: attempt.threadId,
            error: (error as Error).message,
          }),
        );
    };
    const timer = setTimeout(
      () =>
        void closeIfStillRunning().catch((error: unknown) =>
          this.logger.warn("reading an interrupted turn failed", {
            threadId: attempt.threadId,
            error: (error as Error).message,
          }),
        ),
      INTERRUPT_GRACE_MS,
    );
    timer.unref();
  }

  private async respond(payload: RequestRespondPayload): Promise<void> {
    const request = await this.engine.reader.get("runtimeRequest", payload.requestId);
    if (request === null || request.response === null) return;
    const live = this.sessions.get(request.threadId);
    if (live === null || live.providerSessionId !== request.providerSessionId) {
      await this.engine.apply(async (ctx) => {
        const current = await ctx.require("runtimeRequest", request.id);
        if (current.status === "pending") await resolveRuntimeRequest(ctx, current, "expired", null);
      });
      return;
    }
    try {
      await live.session.respondToRuntimeRequest(request.nativeRequestId, request.response);
      await this.engine.apply(async (ctx) => {
        const current = await ctx.require("runtimeRequest", request.id);
        if (current.status === "pending")
          await resolveRuntimeRequest(
            ctx,
            current,
            request.response!.kind === "dismiss" ? "cancelled" : "answered",
            null,
          );
      });
    } catch (error) {
      this.logger.warn("answering a runtime request failed", {
        requestId: request.id,
        error: (error as Error).message,
      });
      await this.engine.apply(async (ctx) => {
        const current = await ctx.require("runtimeRequest", request.id);
        if (current.status === "pending") await resolveRuntimeRequest(ctx, current, "expired", null);
      });
    }
  }
}
