import { inject, injectable } from "tsyringe";
import { ConfigToken, type SwitchyardConfig } from "../../config/config-schema.js";
import type { DeliveryResult } from "../../engine/message-delivery.js";
import { conflictsAsInvalid, OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import { EngineToken, type Engine } from "../../engine/ports.js";
import { ProviderCatalogToken, type ProviderCatalog } from "../../engine/provider-catalog.js";
import { activeRun, QUEUED_RUNS_OF_THREAD } from "../../engine/run-lifecycle.js";
import type { SendMode } from "../../policy/index.js";
import type { ThreadRecord } from "../../store/records.js";
import { environmentId } from "../../store/settings.js";
import { derive } from "../../util/ids.js";
import { creationSourceOf, type Caller } from "../caller.js";
import { CallerContext } from "../caller-context.js";
import { stopThread } from "../../engine/task-stop.js";
import type { MessageSource } from "../message-source.js";
import { ReachOrigins } from "../reach/reach-origin.js";
import { threadLink } from "../thread-views.js";
import { RunWaits, type RunWaitResult } from "./run-waits.js";
import { ThreadCommands } from "./thread-commands.js";
import { sendReceiptRequest, type SendRequest } from "./thread-requests.js";
import { refuseSettlingBusyThread } from "./thread-settling.js";

/**
 * The thread commands as an authenticated caller (an agent's token, a client's) makes them
 * (MCP and the HTTP API): its retry key becomes the command id, and a first call (not a replay)
 * is checked against the caller's live run and ceiling before the shared command runs.
 */
@injectable()
export class CallerThreadCommands {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(ProviderCatalogToken) private readonly registry: ProviderCatalog,
    @inject(ConfigToken) private readonly config: SwitchyardConfig,
    private readonly commands: ThreadCommands,
    private readonly waits: RunWaits,
    private readonly callers: CallerContext,
    private readonly origins: ReachOrigins,
  ) {}

  /** The stable command id of a caller's retry key for one operation on one subject. */
  private callerCommandId(
    caller: Caller,
    operation: string,
    subject: string,
    clientRequestId: string | undefined,
  ): string | undefined {
    return clientRequestId === undefined
      ? undefined
      : derive.command(caller.requestScope, operation, `${subject}:${clientRequestId}`);
  }

  /** t3_thread_send: any thread in the environment, never broader than the caller's modes. */
  async send(
    caller: Caller,
    input: { threadId: string; message: string; mode?: SendMode; replyToSource?: boolean; clientRequestId?: string },
  ): Promise<DeliveryResult & { replayed: boolean }> {
    const target = await this.commands.getThread(input.threadId);
    const commandId = this.callerCommandId(caller, "t3_thread_send", target.id, input.clientRequestId);
    const sender = await this.callers.thread(caller);
    const source: MessageSource | null =
      sender === null
        ? null
        : { threadId: sender.id, link: threadLink(environmentId(this.engine.store), sender.id), title: sender.title };
    const request: SendRequest = {
      ...(commandId !== undefined ? { commandId } : {}),
      threadId: target.id,
      text: input.message,
      mode: input.mode ?? "auto",
      createdBy: "agent",
      creationSource: creationSourceOf(caller),
      source,
      ...(input.replyToSource !== undefined ? { replyToSource: input.replyToSource } : {}),
      reachedFrom: await this.origins.of(caller),
    };
    if (
      commandId === undefined ||
      (await conflictsAsInvalid(() => this.engine.replay(commandId, "thread.send", sendReceiptRequest(request)))) ===
        null
    ) {
      await this.callers.requireLiveRunForChanges(caller, "t3_thread_send");
      await this.callers.requireTargetWithinCeiling(caller, target);
    }
    return conflictsAsInvalid(() => this.commands.send(request));
  }

  /** t3_thread_interrupt, with the caller's live-run check; only an agent is held to its ceiling (CallerContext.requireMayStop). */
  async interrupt(
    caller: Caller,
    input: { threadId: string; runId?: string },
  ): ReturnType<ThreadCommands["interrupt"]> {
    const target = await this.commands.getThread(input.threadId);
    await this.callers.requireLiveRunForChanges(caller, "t3_thread_interrupt");
    await this.callers.requireMayStop(caller, target);
    return await this.commands.interrupt({
      threadId: target.id,
      ...(input.runId !== undefined ? { runId: input.runId } : {}),
      reason: "interrupted_by_agent",
    });
  }

  /**
   * Stop, like the user's Stop button, for a caller: interrupts the running turn, holds queued
   * runs until Resume or the next explicit send. Only an agent is held to its ceiling
   * (CallerContext.requireMayStop); idempotent by `clientRequestId`. A provider that cannot
   * interrupt a turn its run already reached answers `thread_not_interruptible`, and nothing is
   * held.
   */
  async stop(
    caller: Caller,
    input: { threadId: string; reason?: string; clientRequestId?: string },
  ): Promise<{ thread: ThreadRecord; interruptedRunId: string | null; heldRunIds: string[]; replayed: boolean }> {
    const target = await this.commands.getThread(input.threadId);
    const commandId =
      this.callerCommandId(caller, "thread.stop", target.id, input.clientRequestId) ??
      this.commands.newCommandId("thread.stop");
    const reason = input.reason ?? "stopped_by_request";
    const request = { threadId: target.id, reason };
    if ((await conflictsAsInvalid(() => this.engine.replay(commandId, "thread.stop", request))) === null) {
      await this.callers.requireLiveRunForChanges(caller, "stop");
      await this.callers.requireMayStop(caller, target);
      const active = await activeRun(this.engine.reader, target.id);
      const attempt = active?.currentAttemptId
        ? await this.engine.reader.get("attempt", active.currentAttemptId)
        : null;
      if (
        attempt !== null &&
        attempt.status !== "pending" &&
        !this.registry.capabilities(target.providerInstanceId).turns.interrupt
      ) {
        throw new OrchestratorFailure(
          "thread_not_interruptible",
          `Provider "${target.providerInstanceId}" cannot interrupt the running turn of thread ${target.id}, so it cannot be stopped; wait for the turn to end.`,
          {
            threadId: target.id,
            capability: "turns.interrupt",
          },
        );
      }
    }
    const outcome = await conflictsAsInvalid(
      async () =>
        await this.engine.execute({
          commandId,
          operation: "thread.stop",
          request,
          handle: async (ctx) => {
            const active = await activeRun(ctx, target.id);
            await stopThread(ctx, target.id, reason);
            const held = (await ctx.select("run", QUEUED_RUNS_OF_THREAD, [target.id], "ORDER BY ordinal"))
              .filter((run) => run.held)
              .map((run) => run.id);
            return { interruptedRunId: active?.id ?? null, heldRunIds: held };
          },
        }),
    );
    return { thread: await this.commands.getThread(target.id), ...outcome.result, replayed: outcome.replayed };
  }

  /** Resume after Stop, for a caller: within its ceiling; idempotent by `clientRequestId`. */
  async resume(
    caller: Caller,
    input: { threadId: string; clientRequestId?: string },
  ): Promise<{ thread: ThreadRecord; resumedRunIds: string[]; replayed: boolean }> {
    const target = await this.commands.getThread(input.threadId);
    const commandId = this.callerCommandId(caller, "thread.resume", target.id, input.clientRequestId);
    if (
      commandId === undefined ||
      (await conflictsAsInvalid(() => this.engine.replay(commandId, "thread.resume", { threadId: target.id }))) === null
    ) {
      await this.callers.requireLiveRunForChanges(caller, "resume");
      await this.callers.requireTargetWithinCeiling(caller, target);
    }
    return conflictsAsInvalid(async () => await this.commands.resume(target.id, commandId));
  }

  /**
   * set_thread_settled: settles a thread whose work is done (it leaves the active list, like
   * the sidebar's Settled section) or revives it. Settling is refused while the thread has
   * unfinished runs, pending requests or unfinished delegated work: stop or wait first. Another
   * thread needs the caller's live run and may not run broader than the caller. Settling a
   * settled thread (or reviving an active one) changes nothing. Idempotent by clientRequestId.
   */
  async setSettled(
    caller: Caller,
    input: { threadId: string; settled: boolean; clientRequestId?: string | undefined },
  ): Promise<{ thread: ThreadRecord; changed: boolean; replayed: boolean }> {
    const target = await this.commands.getThread(input.threadId);
    const operation = "thread.set_settled";
    const commandId =
      this.callerCommandId(caller, operation, target.id, input.clientRequestId) ??
      this.commands.newCommandId(operation);
    const request = { threadId: target.id, settled: input.settled };
    if (
      (await conflictsAsInvalid(() => this.engine.replay(commandId, operation, request))) === null &&
      target.id !== caller.threadId
    ) {
      await this.callers.requireLiveRunForChanges(caller, "set_thread_settled");
      await this.callers.requireTargetWithinCeiling(caller, target);
    }
    const outcome = await conflictsAsInvalid(
      async () =>
        await this.engine.execute({
          commandId,
          operation,
          request,
          handle: async (ctx) => {
            const current = await ctx.require("thread", target.id);
            const settled = (current.settledAt ?? null) !== null;
            if (settled === input.settled) return { changed: false };
            if (input.settled) await refuseSettlingBusyThread(ctx, current.id);
            ctx.put("thread", { ...current, settledAt: input.settled ? ctx.now : null, updatedAt: ctx.now });
            return { changed: true };
          },
        }),
    );
    return {
      thread: await this.commands.getThread(target.id),
      changed: outcome.result.changed,
      replayed: outcome.replayed,
    };
  }

  /** t3_thread_wait, capped by the server's maximum wait; an agent's thread is blocked while it runs. */
  wait(
    caller: Caller,
    input: {
      threadId: string;
      runId?: string;
      timeoutMs?: number;
      cursor?: number;
      signal?: AbortSignal;
      onProgress?: () => void;
    },
  ): Promise<RunWaitResult> {
    const timeoutMs = Math.min(input.timeoutMs ?? this.config.server.maxWaitMs, this.config.server.maxWaitMs);
    const { cursor, ...rest } = input;
    return this.waits.waitForRun({
      ...rest,
      timeoutMs,
      attention: { cursor: cursor ?? 0 },
      waiterThreadId: caller.kind === "agent" ? caller.threadId : null,
    });
  }
}
