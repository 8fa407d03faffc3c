import { inject, injectable } from "tsyringe";
import type { CommandContext } from "../engine/command-context.js";
import { type Engine, EngineToken } from "../engine/ports.js";
import { OrchestratorFailure } from "../engine/orchestrator-failure.js";
import { titleFromMessage } from "../engine/thread-records.js";
import type { ThreadRecord } from "../store/records.js";
import { derive } from "../util/ids.js";
import type { Caller } from "./caller.js";
import { CallerContext } from "./caller-context.js";
import { conflictsAsInvalid } from "../engine/orchestrator-failure.js";

/** The result of a metadata change: the command receipt plus the resulting metadata. */
export interface ThreadMetadataResult {
  readonly commandId: string;
  /** The durable event sequence the change was written at (null when it changed nothing). */
  readonly sequence: number | null;
  readonly replayed: boolean;
  readonly threadId: string;
  readonly title: string;
  readonly titleRegenerationPending: boolean;
  readonly linkedPullRequest: ThreadRecord["linkedPullRequest"];
}

const PULL_REQUEST_URL =
  /^https:\/\/[^\s/]+\/[^\s]+\/pull(?:s|-requests)?\/(\d+)(?:[/?#].*)?$|^https:\/\/[^\s/]+\/[^\s]+\/-\/merge_requests\/(\d+)(?:[/?#].*)?$/;

/**
 * Thread metadata: rename, regenerate the title, link and unlink a pull request. Reusing a
 * clientRequestId for the same action and thread replays the same receipt.
 */
@injectable()
export class ThreadMetadataService {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    private readonly callers: CallerContext,
  ) {}

  private async target(caller: Caller, threadId: string | undefined): Promise<ThreadRecord> {
    const id = threadId ?? caller.threadId;
    if (id === null || id === undefined)
      throw new OrchestratorFailure("invalid_request", "threadId is required for callers outside a thread.");
    const thread = await this.engine.reader.get("thread", id);
    if (thread === null || thread.deletedAt !== null)
      throw new OrchestratorFailure("thread_not_found", `Thread ${id} does not exist.`, { threadId: id });
    return thread;
  }

  private async change(
    caller: Caller,
    operation: string,
    thread: ThreadRecord,
    request: Record<string, unknown>,
    clientRequestId: string | undefined,
    apply: (ctx: CommandContext, current: ThreadRecord) => void | Promise<void>,
  ): Promise<ThreadMetadataResult> {
    const commandId = derive.command(
      caller.requestScope,
      operation,
      `${thread.id}:${clientRequestId ?? this.engine.ids.random("req")}`,
    );
    // Another thread's metadata needs the caller's live run and the same privilege ceiling as
    // send and interrupt: the target may not run broader than the caller. A replay changes nothing.
    if (
      (await conflictsAsInvalid(() =>
        this.engine.replay(commandId, operation, { threadId: thread.id, ...request }),
      )) === null &&
      thread.id !== caller.threadId
    ) {
      await this.callers.requireLiveRunForChanges(caller, operation);
      await this.callers.requireTargetWithinCeiling(caller, thread);
    }
    let outcome;
    try {
      outcome = await this.engine.execute({
        commandId,
        operation,
        request: { threadId: thread.id, ...request },
        handle: async (ctx) => {
          await apply(ctx, await ctx.require("thread", thread.id));
          return { threadId: thread.id };
        },
      });
    } catch (error) {
      if ((error as { code?: string }).code === "conflict") {
        throw new OrchestratorFailure(
          "invalid_request",
          `clientRequestId was already used for a different ${operation} request on thread ${thread.id}; use a new one.`,
        );
      }
      throw error;
    }
    const current = (await this.engine.reader.get("thread", thread.id))!;
    return {
      commandId,
      sequence: outcome.sequence,
      replayed: outcome.replayed,
      threadId: thread.id,
      title: current.title,
      titleRegenerationPending: current.titleRegenerationPending,
      linkedPullRequest: current.linkedPullRequest,
    };
  }

  async rename(
    caller: Caller,
    input: { threadId?: string; title: string; clientRequestId?: string },
  ): Promise<ThreadMetadataResult> {
    const title = input.title.trim();
    if (title === "") throw new OrchestratorFailure("invalid_request", "rename needs a non-empty title.");
    if (title.length > 200) throw new OrchestratorFailure("invalid_request", "A title is at most 200 characters.");
    const thread = await this.target(caller, input.threadId);
    return await this.change(caller, "thread.rename", thread, { title }, input.clientRequestId, (ctx, current) => {
      ctx.put("thread", {
        ...current,
        title,
        titleSource: "user",
        titleRegenerationPending: false,
        updatedAt: ctx.now,
      });
    });
  }

  /**
   * Regenerates a title from the thread's own conversation (its first request and latest
   * result). Marked pending in the same command and settled right after, so readers can see
   * a regeneration in flight.
   */
  async regenerateTitle(
    caller: Caller,
    input: { threadId?: string; clientRequestId?: string },
  ): Promise<ThreadMetadataResult> {
    const thread = await this.target(caller, input.threadId);
    const result = await this.change(
      caller,
      "thread.regenerate_title",
      thread,
      {},
      input.clientRequestId,
      (ctx, current) => {
        ctx.put("thread", { ...current, titleRegenerationPending: true, updatedAt: ctx.now });
      },
    );
    if (!result.replayed) {
      queueMicrotask(() => {
        if (!this.engine.store.isOpen()) return;
        void this.engine.apply(async (ctx) => {
          const current = await ctx.get("thread", thread.id);
          if (current === null || !current.titleRegenerationPending) return;
          const first = (
            await ctx.select(
              "item",
              "thread_id = ? AND kind = 'user_message'",
              [thread.id],
              "ORDER BY position LIMIT 1",
            )
          )[0];
          const title = titleFromMessage(first?.text ?? current.title);
          ctx.put("thread", {
            ...current,
            title,
            titleSource: "generated",
            titleRegenerationPending: false,
            updatedAt: ctx.now,
          });
        });
      });
    }
    return result;
  }

  async linkPullRequest(
    caller: Caller,
    input: { threadId?: string; url: string; clientRequestId?: string },
  ): Promise<ThreadMetadataResult> {
    const match = PULL_REQUEST_URL.exec(input.url.trim());
    if (match === null)
      throw new OrchestratorFailure(
        "invalid_request",
        `"${input.url}" is not a pull request URL (expected https://<host>/<owner>/<repo>/pull/<number>).`,
      );
    const number = Number.parseInt(match[1] ?? match[2] ?? "", 10);
    const thread = await this.target(caller, input.threadId);
    return await this.change(
      caller,
      "thread.link_pull_request",
      thread,
      { url: input.url.trim() },
      input.clientRequestId,
      (ctx, current) => {
        ctx.put("thread", {
          ...current,
          linkedPullRequest: {
            url: input.url.trim(),
            number: Number.isFinite(number) ? number : null,
            linkedAt: ctx.now,
          },
          updatedAt: ctx.now,
        });
      },
    );
  }

  async unlinkPullRequest(
    caller: Caller,
    input: { threadId?: string; clientRequestId?: string },
  ): Promise<ThreadMetadataResult> {
    const thread = await this.target(caller, input.threadId);
    return await this.change(
      caller,
      "thread.unlink_pull_request",
      thread,
      {},
      input.clientRequestId,
      (ctx, current) => {
        if (current.linkedPullRequest !== null)
          ctx.put("thread", { ...current, linkedPullRequest: null, updatedAt: ctx.now });
      },
    );
  }
}
