import type { AdapterEvent } from "../spec/index.js";
import { type Logger, LoggerToken } from "../logging/logger.js";
import type { AttemptRecord } from "../store/records.js";
import type { CommandContext } from "./command-context.js";
import { type Engine, type ProviderEventSink, EngineToken } from "./ports.js";
import { LiveOutput } from "./live-output.js";
import { failRunOnProviderLimit, finishAttempt, markAttemptRunning, putItem } from "./run-lifecycle.js";
import { openRuntimeRequest, resolveRuntimeRequest, runtimeRequestId } from "./runtime-requests.js";
import { NativeTranscriptBuffer, recordNativeSubagent, recordNativeTranscript } from "./native-subagents.js";
import {
  providerItemId,
  recordAssistantMessage,
  recordProposedPlan,
  recordReasoning,
  recordToolCallCompleted,
  recordToolCallStarted,
} from "./turn-items.js";
import { inject, injectable } from "tsyringe";
import { isStoreBusy } from "../util/store-busy.js";
import { busyRetryDelay } from "./busy-store-retry.js";

/** An adapter event waiting for its tick's commit. */
interface QueuedEvent {
  readonly threadId: string;
  readonly providerSessionId: string;
  readonly event: AdapterEvent;
}

/** A session that ended on its own, heard by the exit listeners once its event committed. */
interface ExitedSession {
  readonly threadId: string;
  readonly providerSessionId: string;
}

function isLiveDelta(
  event: AdapterEvent,
): event is Extract<AdapterEvent, { type: "message.delta" | "reasoning.delta" }> {
  return event.type === "message.delta" || event.type === "reasoning.delta";
}

/**
 * Turns adapter events into durable state: items, attempt and run statuses, runtime requests.
 * Events for an attempt of another (older) session are ignored, so a restarted session can't be
 * confused by a late one.
 *
 * Group commit: the events adapters emit in one tick are applied in one transaction, each in its
 * own savepoint (one that fails rolls back alone), flushed by a microtask the first of them
 * queues. An event is accepted when that transaction commits. Nothing the host does can tell
 * anyone about an event before then: listeners (waiting tools, SSE, the outbox) hear it after
 * the commit, and the flush runs before the event loop gets to any I/O (sockets, pipes, timers),
 * so a kill -9 can only lose events of the tick it cut short, which no one outside the process
 * had heard of from the host; the harness itself learns nothing from an emit. Events keep their
 * order, also against commands: anything that happens because of I/O runs after the flush.
 * One exception: a session's events while it opens are held (`hold`) until its open record
 * commits and follow that record (`release`); a kill -9 before then loses them with the open
 * itself, which the boot reconciler closes (the next turn opens a session again).
 * Streamed text (deltas) goes to the live feed at once unless durable events are queued ahead of
 * it, so it stays in order with them.
 */
@injectable()
export class ProviderEventIngestor implements ProviderEventSink {
  private readonly sessionExitListeners = new Set<(threadId: string, providerSessionId: string) => void>();
  private queue: QueuedEvent[] = [];
  /** The events of sessions still opening, by session, until their open is recorded. */
  private readonly held = new Map<string, QueuedEvent[]>();
  /** Set while a batch waits for a database another connection holds locked: the retry's timer. */
  private busyRetry: NodeJS.Timeout | null = null;
  private busyRetries = 0;
  /** Set while a flush is under way. */
  private flushing = false;
  /** Native sub-agents' transcript messages of running turns, until their turn's end is committed. */
  private readonly transcripts = new NativeTranscriptBuffer();
  /** Attempts whose held transcripts the batch being applied wrote at their turn's end. */
  private readonly endedTranscripts = new Set<string>();

  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    // Auto-wired by its class through design:paramtypes (no token), which proves decorator
    // metadata reaches tsyringe under both tsc and the test transform.
    private readonly live: LiveOutput,
    @inject(LoggerToken) private readonly logger: Logger,
  ) {}

  /** Hears that a provider session ended on its own. */
  onSessionExited(listener: (threadId: string, providerSessionId: string) => void): void {
    this.sessionExitListeners.add(listener);
  }

  ingest(threadId: string, providerSessionId: string, event: AdapterEvent): void {
    const held = this.held.get(providerSessionId);
    if (held !== undefined) {
      held.push({ threadId, providerSessionId, event });
      return;
    }
    if (this.queue.length === 0 && isLiveDelta(event)) {
      this.appendLive(threadId, event);
      return;
    }
    this.queue.push({ threadId, providerSessionId, event });
    // While a batch waits out a locked database, later events queue behind it, in order.
    if (this.queue.length === 1 && this.busyRetry === null && !this.flushing) this.scheduleFlush();
  }

  hold(providerSessionId: string): void {
    if (!this.held.has(providerSessionId)) this.held.set(providerSessionId, []);
  }

  release(providerSessionId: string): void {
    const held = this.held.get(providerSessionId);
    this.held.delete(providerSessionId);
    for (const { threadId, event } of held ?? []) this.ingest(threadId, providerSessionId, event);
  }

  private scheduleFlush(): void {
    queueMicrotask(() => void this.flush());
  }

  /**
   * Commits the queued events of this tick, in order, in one transaction. One flush at a time:
   * events that arrive while one is under way queue behind it, and it schedules the next.
   */
  private async flush(): Promise<void> {
    this.busyRetry = null;
    this.flushing = true;
    try {
      await this.flushQueued();
    } finally {
      this.flushing = false;
    }
    if (this.queue.length > 0 && this.busyRetry === null) this.scheduleFlush();
  }

  private async flushQueued(): Promise<void> {
    if (!this.engine.store.isOpen()) {
      this.queue = [];
      return;
    }
    // An event already settled changes nothing: a batch of only those opens no transaction.
    // Taken before the first await: events heard while it reads go to the next flush.
    const queued = this.queue;
    this.queue = [];
    const batch = await this.withoutSettled(queued);
    const exited: ExitedSession[] = [];
    try {
      if (batch.length > 0)
        await this.engine.applyEach(
          batch.map(
            ({ threadId, providerSessionId, event }) =>
              (ctx: CommandContext) =>
                this.apply(ctx, threadId, providerSessionId, event, exited),
          ),
          (error, index) => {
            const { threadId, providerSessionId, event } = batch[index]!;
            this.logger.error("failed to ingest a provider event", {
              threadId,
              providerSessionId,
              type: event.type,
              error: (error as Error).message,
            });
          },
        );
    } catch (error) {
      exited.length = 0;
      if (isStoreBusy(error)) {
        // Another connection holds the database locked past the busy timeout: nothing of the
        // batch was written. Keep it (and what came meanwhile) and try again, so a lock never
        // loses a turn's events or fails the turn.
        this.endedTranscripts.clear();
        this.queue = [...batch, ...this.queue];
        this.busyRetries += 1;
        if (this.busyRetries === 1)
          this.logger.warn("the database is locked by another connection; provider events wait for it", {
            count: batch.length,
            error: (error as Error).message,
          });
        this.busyRetry = setTimeout(() => void this.flush(), busyRetryDelay(this.busyRetries));
        return;
      }
      this.logger.error("failed to commit provider events", {
        count: batch.length,
        types: batch.map((queued) => queued.event.type),
        error: (error as Error).message,
      });
    }
    // The turns' ends are committed (or their batch is dropped): their held messages can go.
    for (const attemptId of this.endedTranscripts) this.transcripts.forget(attemptId);
    this.endedTranscripts.clear();
    if (this.busyRetries > 0)
      this.logger.info("provider events committed after the database was locked", { retries: this.busyRetries });
    this.busyRetries = 0;
    for (const { threadId, providerSessionId } of exited) {
      for (const listener of this.sessionExitListeners) listener(threadId, providerSessionId);
    }
  }

  /**
   * The batch without the events whose applying could change nothing, whatever the events ahead
   * of them do: a turn's start heard after the turn was recorded running (the outbox records the
   * start when the provider accepts the turn, and the provider's own event usually comes after;
   * an attempt's status only moves forward, so a read before the transaction answers as one
   * inside), and the cursor a session announced while it opened, which its open record already
   * carries (unless a cursor ahead of it in the batch changes the session's first).
   */
  private async withoutSettled(batch: readonly QueuedEvent[]): Promise<QueuedEvent[]> {
    const cursorsChanged = new Set<string>();
    const kept: QueuedEvent[] = [];
    for (const queued of batch) {
      const { providerSessionId, event } = queued;
      if (event.type === "turn.started") {
        const attempt = await this.engine.reader.get("attempt", event.turnId);
        if (attempt === null || attempt.status === "pending" || attempt.status === "starting") kept.push(queued);
        continue;
      }
      if (event.type === "session.resume_cursor") {
        const settled =
          !cursorsChanged.has(providerSessionId) &&
          (await this.engine.reader.get("providerSession", providerSessionId))?.resumeCursor === event.cursor;
        if (!settled) {
          cursorsChanged.add(providerSessionId);
          kept.push(queued);
        }
        continue;
      }
      kept.push(queued);
    }
    return kept;
  }

  private appendLive(
    threadId: string,
    event: Extract<AdapterEvent, { type: "message.delta" | "reasoning.delta" }>,
  ): void {
    this.live.append({
      threadId,
      attemptId: event.turnId,
      itemId: event.itemId,
      kind: event.type === "message.delta" ? "assistant_message" : "reasoning",
      delta: event.text,
    });
  }

  private async attemptFor(
    ctx: CommandContext,
    turnId: string,
    providerSessionId: string,
  ): Promise<AttemptRecord | null> {
    const attempt = await ctx.get("attempt", turnId);
    if (attempt === null) return null;
    if (attempt.providerSessionId !== null && attempt.providerSessionId !== providerSessionId) return null;
    return attempt;
  }

  private async apply(
    ctx: CommandContext,
    threadId: string,
    providerSessionId: string,
    event: AdapterEvent,
    exited: ExitedSession[],
  ): Promise<void> {
    switch (event.type) {
      case "message.delta":
      case "reasoning.delta":
        this.appendLive(threadId, event);
        return;
      case "warning": {
        this.logger.warn("provider warning", { threadId, providerSessionId, message: event.message });
        if (event.turnId === undefined) return;
        const attempt = await this.attemptFor(ctx, event.turnId, providerSessionId);
        if (attempt === null) return;
        await putItem(ctx, {
          id: providerItemId(attempt.id, "warning", String(ctx.nowMs)),
          threadId,
          runId: attempt.runId,
          attemptId: attempt.id,
          kind: "notice",
          status: "completed",
          text: event.message,
          data: { level: "warning", ...(event.limit !== undefined ? { limit: event.limit } : {}) },
          createdBy: "provider",
          creationSource: "provider",
        });
        if (event.limit !== undefined) await failRunOnProviderLimit(ctx, attempt, event.limit, event.message);
        return;
      }
      case "session.resume_cursor": {
        const session = await ctx.get("providerSession", providerSessionId);
        if (session !== null && session.resumeCursor !== event.cursor)
          ctx.put("providerSession", { ...session, resumeCursor: event.cursor });
        return;
      }
      case "session.exited": {
        const session = await ctx.get("providerSession", providerSessionId);
        if (session !== null && session.status !== "closed") {
          ctx.put("providerSession", { ...session, status: "closed", closedAt: ctx.now, closeReason: event.reason });
        }
        const live = await ctx.select("attempt", "thread_id = ? AND status IN ('starting', 'running')", [threadId]);
        for (const attempt of live) {
          if (attempt.providerSessionId !== providerSessionId) continue;
          await this.flushLiveOutput(ctx, attempt);
          const error = {
            code: event.error?.code ?? "session_closed",
            message: `The provider session ended: ${event.error?.message ?? event.reason}`,
          };
          await finishAttempt(ctx, attempt.id, "failed", error, "provider_session_exited");
        }
        exited.push({ threadId, providerSessionId });
        return;
      }
      default: {
        const attempt = await this.attemptFor(ctx, event.turnId, providerSessionId);
        if (attempt === null) {
          this.logger.debug("ignored an event for an unknown or stale turn", {
            threadId,
            type: event.type,
            turnId: event.turnId,
          });
          return;
        }
        await this.applyTurnEvent(ctx, attempt, event);
      }
    }
  }

  private async applyTurnEvent(
    ctx: CommandContext,
    attempt: AttemptRecord,
    event: Exclude<
      AdapterEvent,
      | { turnId?: undefined }
      | { type: "message.delta" | "reasoning.delta" | "warning" | "session.resume_cursor" | "session.exited" }
    >,
  ): Promise<void> {
    switch (event.type) {
      case "turn.started":
        await markAttemptRunning(ctx, attempt.id, event.providerTurnId ?? null);
        return;
      case "message.completed":
        this.live.complete(attempt.id, event.itemId, "assistant_message");
        await recordAssistantMessage(ctx, attempt, event);
        return;
      case "reasoning.completed":
        this.live.complete(attempt.id, event.itemId, "reasoning");
        await recordReasoning(ctx, attempt, event);
        return;
      case "tool_call.started":
        await recordToolCallStarted(ctx, attempt, event);
        return;
      case "tool_call.completed":
        await recordToolCallCompleted(ctx, attempt, event);
        return;
      case "plan.proposed":
        await recordProposedPlan(ctx, attempt, event);
        return;
      case "subagent.observed":
        await recordNativeSubagent(
          ctx,
          attempt,
          event,
          event.status === "running" ? null : this.transcripts.peek(attempt.id, event.nativeId),
        );
        return;
      case "subagent.message":
        this.transcripts.add(attempt.id, event);
        return;
      case "runtime_request.opened":
        await openRuntimeRequest(ctx, attempt, event);
        return;
      case "runtime_request.resolved": {
        const request = await ctx.get("runtimeRequest", runtimeRequestId(attempt.id, event.requestId));
        if (request === null || request.status !== "pending") return;
        await resolveRuntimeRequest(ctx, request, event.resolution, null);
        return;
      }
      case "turn.terminal": {
        await markAttemptRunning(ctx, attempt.id, null);
        await this.flushLiveOutput(ctx, attempt);
        const error = event.error
          ? { ...(event.error.code !== undefined ? { code: event.error.code } : {}), message: event.error.message }
          : null;
        await finishAttempt(ctx, attempt.id, event.status, error);
        const ended = await ctx.require("attempt", attempt.id);
        for (const hook of ctx.hooks.turnEnded) await hook(ctx, ended, event.usage ?? null);
        return;
      }
    }
  }

  /**
   * Keeps text that was streamed but never completed (an interrupted message, for example), and
   * the transcript held for native sub-agents whose final event never came.
   */
  private async flushLiveOutput(ctx: CommandContext, attempt: AttemptRecord): Promise<void> {
    for (const [nativeId, pending] of this.transcripts.peekAttempt(attempt.id))
      await recordNativeTranscript(ctx, attempt, nativeId, pending);
    this.endedTranscripts.add(attempt.id);
    for (const pending of this.live.drainAttempt(attempt.id)) {
      if (pending.text.trim() === "") continue;
      const kind = pending.kind === "assistant_message" ? "message" : "reasoning";
      const id = providerItemId(attempt.id, kind, pending.itemId);
      if ((await ctx.get("item", id)) !== null) continue;
      await putItem(ctx, {
        id,
        threadId: attempt.threadId,
        runId: attempt.runId,
        attemptId: attempt.id,
        kind: pending.kind,
        status: "completed",
        text: pending.text,
        data: { partial: true },
        createdBy: "provider",
        creationSource: "provider",
      });
      if (pending.kind === "assistant_message")
        await ctx.update("run", attempt.runId, (run) => ({ ...run, summary: pending.text }));
    }
  }
}
