import { inject, injectable } from "tsyringe";
import { conflictsAsInvalid, OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import { EngineToken, type Engine } from "../../engine/ports.js";
import type { ThreadRecord } from "../../store/records.js";
import { derive } from "../../util/ids.js";
import type { Caller } from "../caller.js";
import { CallerContext } from "../caller-context.js";
import { isSnoozed } from "../thread-views.js";
import { ThreadCommands } from "./thread-commands.js";

/** The answer of a snooze or unsnooze: the thread after it, and whether anything changed. */
export interface SnoozeOutcome {
  readonly thread: ThreadRecord;
  readonly changed: boolean;
  readonly replayed: boolean;
}

/**
 * Snooze and unsnooze (seed 000): a person hides a thread until a time. Snoozing records when
 * (`snoozedAt`) so the read-time rule (thread-views `isSnoozed`) can tell a failure after the
 * snooze, which wakes the thread, from one before it; the time passing wakes it at read time, so
 * no timer is needed. Who may: the callers who may settle or rename the thread (another thread
 * needs the caller's live run and may not run broader than the caller). Idempotent by
 * clientRequestId.
 */
@injectable()
export class ThreadSnoozing {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    private readonly commands: ThreadCommands,
    private readonly callers: CallerContext,
  ) {}

  /** Snoozes a thread until `until` (an ISO-8601 time in the future); a later snooze replaces it. */
  snooze(
    caller: Caller,
    input: { threadId: string; until: string; clientRequestId?: string | undefined },
  ): Promise<SnoozeOutcome> {
    const until = normalizedTime(input.until);
    return this.change(caller, "thread.snooze", input.threadId, { until }, input.clientRequestId, () => {
      if (until <= this.engine.clock.nowIso()) {
        throw new OrchestratorFailure(
          "invalid_request",
          `until (${input.until}) is not in the future; give a later time, or unsnooze the thread instead.`,
          { field: "until", value: input.until },
        );
      }
    });
  }

  /** Wakes a snoozed thread now; a thread that is not snoozed is unchanged (changed: false). */
  unsnooze(caller: Caller, input: { threadId: string; clientRequestId?: string | undefined }): Promise<SnoozeOutcome> {
    return this.change(caller, "thread.unsnooze", input.threadId, { until: null }, input.clientRequestId, () => {});
  }

  private async change(
    caller: Caller,
    operation: string,
    threadId: string,
    asked: { until: string | null },
    clientRequestId: string | undefined,
    validate: () => void,
  ): Promise<SnoozeOutcome> {
    const target = await this.commands.getThread(threadId);
    const commandId =
      clientRequestId === undefined
        ? this.commands.newCommandId(operation)
        : derive.command(caller.requestScope, operation, `${target.id}:${clientRequestId}`);
    const request = { threadId: target.id, ...asked };
    // A replay answers what the first call did, even once its time has passed.
    if ((await conflictsAsInvalid(() => this.engine.replay(commandId, operation, request))) === null) {
      validate();
      if (target.id !== caller.threadId) {
        await this.callers.requireLiveRunForChanges(caller, operation === "thread.snooze" ? "snooze" : "unsnooze");
        await this.callers.requireTargetWithinCeiling(caller, target);
      }
    }
    const outcome = await conflictsAsInvalid(
      async () =>
        await this.engine.execute({
          commandId,
          operation,
          request,
          handle: async (ctx) => {
            const current = await ctx.require("thread", target.id);
            // Asking again for the time a thread already sleeps to changes nothing; a thread that
            // woke early (a request, a failure) sleeps again from now.
            const asAsked =
              asked.until === null
                ? current.snoozedUntil === null
                : (await isSnoozed(ctx, current, ctx.now)) && current.snoozedUntil === asked.until;
            if (asAsked) return { changed: false };
            ctx.put("thread", {
              ...current,
              snoozedUntil: asked.until,
              snoozedAt: asked.until === null ? null : ctx.now,
              updatedAt: ctx.now,
            });
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
}

/** An ISO-8601 time in its canonical UTC form (what the store compares as text), or invalid_request. */
function normalizedTime(text: string): string {
  const ms = Date.parse(text);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(text) || Number.isNaN(ms)) {
    throw new OrchestratorFailure(
      "invalid_request",
      `until (${text}) is not an ISO-8601 time; give one like 2026-12-08T09:00:00Z.`,
      { field: "until", value: text },
    );
  }
  return new Date(ms).toISOString();
}
