import { inject, injectable } from "tsyringe";
import { SwitchyardError, type ProviderCapabilities } from "../spec/index.js";
import { PolicyToken, type Policy } from "../policy/policy-token.js";
import { type Engine, EngineToken, ProviderSessionManagerToken } from "../engine/ports.js";
import { conflictsAsInvalid, OrchestratorFailure } from "../engine/orchestrator-failure.js";
import type { ProviderSessions } from "../engine/ports.js";
import { createThread } from "../engine/thread-records.js";
import { portableContext } from "../engine/portable-context.js";
import { type ProviderCatalog, ProviderCatalogToken } from "../engine/provider-catalog.js";
import type { Actor, Authority, CreationSource, ThreadRecord } from "../store/records.js";
import { derive } from "../util/ids.js";
import { CallerContext } from "./caller-context.js";
import { creationSourceOf, OWNER_AUTHORITY, type Caller } from "./caller.js";

/** What forking a thread needs. */
export interface ForkRequest {
  readonly sourceThreadId: string;
  /** Another provider instance to continue on (forces portable context). */
  readonly providerInstanceId?: string;
  readonly model?: string | null;
  readonly title?: string | null;
  /** Fork after this run (its last attempt) rather than the latest state. */
  readonly afterRunId?: string;
  readonly createdBy: Actor;
  readonly creationSource: CreationSource;
  /** Whose authority the fork acts under; omitted: the home's owner (in-process callers: the CLI, tests). */
  readonly authority?: Authority | null;
  readonly commandId?: string;
}

/** The fork and how its context travels (what was asked, what was done). */
export interface ForkResult {
  readonly thread: ThreadRecord;
  readonly transferId: string;
  readonly strategy: "native" | "portable";
  readonly reason: string;
  /** The command had run before (the same commandId): this is the fork it made, nothing new was done. */
  readonly replayed: boolean;
}

/** A fork a caller asks for (the HTTP API's forkThread): the source, and an optional title, turn and retry key. */
export interface CallerForkRequest {
  readonly threadId: string;
  readonly title?: string;
  readonly afterRunId?: string;
  readonly clientRequestId?: string;
}

/**
 * Forks a thread through the shared fork policy: natively when the provider copies
 * conversations itself (the new thread resumes from the copy), otherwise as portable context
 * delivered with the fork's first turn. Works on every provider.
 */
@injectable()
export class ThreadForkService {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(ProviderCatalogToken) private readonly registry: ProviderCatalog,
    @inject(ProviderSessionManagerToken) private readonly sessions: ProviderSessions,
    @inject(PolicyToken) private readonly policy: Policy,
    private readonly callers: CallerContext,
  ) {}

  /**
   * A caller's fork: held to the caller's live run and mode ceiling (the fork runs in the
   * source's modes), except a retry with the same clientRequestId, which returns the fork it
   * made. The caller's projects were checked on the source thread by the transport.
   */
  async forkFromCaller(caller: Caller, input: CallerForkRequest): Promise<ForkResult> {
    const source = await this.source(input.threadId);
    const title = input.title?.trim();
    if (title === "")
      throw new OrchestratorFailure(
        "invalid_request",
        'A fork\'s title cannot be empty; omit it for "<source title> (fork)".',
        { field: "title" },
      );
    const request: ForkRequest = {
      sourceThreadId: source.id,
      ...(title !== undefined ? { title } : {}),
      ...(input.afterRunId !== undefined ? { afterRunId: input.afterRunId } : {}),
      ...(input.clientRequestId !== undefined
        ? { commandId: derive.command(caller.requestScope, "thread.fork", `${source.id}:${input.clientRequestId}`) }
        : {}),
      createdBy: "agent",
      creationSource: creationSourceOf(caller),
      authority: await this.callers.authority(caller),
    };
    if (
      request.commandId === undefined ||
      (await this.earlierFork(request.commandId, this.receiptRequest(request, source))) === null
    ) {
      await this.callers.requireLiveRunForChanges(caller, "thread.fork");
      await this.callers.requireTargetWithinCeiling(caller, source);
    }
    return this.fork(request);
  }

  private async source(threadId: string): Promise<ThreadRecord> {
    const source = await this.engine.reader.get("thread", threadId);
    if (source === null || source.deletedAt !== null)
      throw new OrchestratorFailure("thread_not_found", `Thread ${threadId} does not exist.`, { threadId });
    return source;
  }

  /** What the fork's receipt is keyed on: a retry key reused for another fork is refused. */
  private receiptRequest(request: ForkRequest, source: ThreadRecord): Record<string, unknown> {
    return {
      sourceThreadId: source.id,
      instanceId: request.providerInstanceId ?? source.providerInstanceId,
      afterRunId: request.afterRunId ?? null,
      title: request.title ?? null,
      model: request.model ?? null,
    };
  }

  /** The fork an earlier run of this command made, or null when it has not run. */
  private async earlierFork(commandId: string, receiptRequest: Record<string, unknown>): Promise<ForkResult | null> {
    const earlier = await conflictsAsInvalid(() =>
      this.engine.replay<{ threadId: string }>(commandId, "thread.fork", receiptRequest),
    );
    if (earlier === null) return null;
    const thread = await this.engine.reader.get("thread", earlier.result.threadId);
    const transferId = `transfer:fork:${earlier.result.threadId}`;
    const transfer = await this.engine.reader.get("contextTransfer", transferId);
    if (thread === null || transfer === null)
      throw new SwitchyardError("internal", `fork ${commandId} has a receipt but no thread or transfer`);
    return {
      thread,
      transferId,
      strategy: transfer.strategy === "native" ? "native" : "portable",
      reason: "A retry of the same fork returns the thread it made.",
      replayed: true,
    };
  }

  async fork(request: ForkRequest): Promise<ForkResult> {
    const source = await this.source(request.sourceThreadId);
    const instanceId = request.providerInstanceId ?? source.providerInstanceId;
    // A retry must not fork the provider's conversation again: it returns the first fork.
    const receiptRequest = this.receiptRequest(request, source);
    const earlier = request.commandId === undefined ? null : await this.earlierFork(request.commandId, receiptRequest);
    if (earlier !== null) return earlier;
    if (this.registry.get(instanceId) === null)
      throw new OrchestratorFailure("provider_unavailable", `Provider instance "${instanceId}" is not configured.`);
    const capabilities: ProviderCapabilities = this.registry.capabilities(instanceId);
    const afterRun = request.afterRunId === undefined ? null : await this.engine.reader.get("run", request.afterRunId);
    // A run of another thread is no point in this one's conversation (and may belong to a project the caller cannot see).
    if (
      request.afterRunId !== undefined &&
      (afterRun === null || afterRun.threadId !== source.id || afterRun.currentAttemptId === null)
    ) {
      throw new OrchestratorFailure("run_not_found", `Run ${request.afterRunId} is not a run of thread ${source.id}.`, {
        runId: request.afterRunId,
        threadId: source.id,
      });
    }
    const afterAttemptId = afterRun?.currentAttemptId ?? undefined;
    const hasNative = (await this.engine.reader.select("providerSession", "thread_id = ?", [source.id])).some(
      (s) => s.resumeCursor !== null,
    );
    const decision = this.policy.decideFork({
      sameProviderInstance: instanceId === source.providerInstanceId,
      sourceHasNativeThread: hasNative,
      atTurn: afterAttemptId !== undefined,
      capabilities,
    });

    let strategy: "native" | "portable" = decision.action;
    let reason = decision.reason;
    let nativeCursor: string | null = null;
    if (strategy === "native") {
      try {
        const live = await this.sessions.ensure(source.id);
        nativeCursor = (
          await live.session.forkThread(afterAttemptId !== undefined ? { afterTurnId: afterAttemptId } : {})
        ).resumeCursor;
      } catch (error) {
        // A native fork that fails still has a portable path; nothing is lost.
        strategy = "portable";
        reason = `The native fork failed (${(error as Error).message}), so the conversation travels as portable context.`;
      }
    }
    const commandId = request.commandId ?? `cmd:thread.fork:${this.engine.ids.random("req")}`;
    const threadId = derive.threadFromCommand(commandId);
    const transferId = `transfer:fork:${threadId}`;
    const handoff =
      strategy === "portable"
        ? await portableContext(this.engine.reader, source, capabilities.context.maxHandoffChars, {
            upToRunId: request.afterRunId,
          })
        : "";
    await this.engine.execute({
      commandId,
      operation: "thread.fork",
      request: receiptRequest,
      handle: async (ctx) => {
        await createThread(ctx, {
          id: threadId,
          projectId: source.projectId,
          title: request.title ?? `${source.title} (fork)`,
          providerInstanceId: instanceId,
          model: request.model ?? (instanceId === source.providerInstanceId ? source.model : null),
          runtimeMode: source.runtimeMode,
          interactionMode: source.interactionMode,
          cwd: source.cwd,
          branch: source.branch,
          worktreePath: source.worktreePath,
          workspaceStrategy: source.workspaceStrategy,
          lineage: {
            relationship: "fork",
            parentThreadId: source.id,
            parentRunId: request.afterRunId ?? null,
            parentNodeId: null,
            delegatedTaskId: null,
            rootThreadId: source.lineage.rootThreadId,
          },
          createdBy: request.createdBy,
          creationSource: request.creationSource,
          authority: request.authority === undefined ? OWNER_AUTHORITY : request.authority,
        });
        if (nativeCursor !== null) {
          // The fork's first session resumes the provider's copy of the conversation.
          ctx.put("providerSession", {
            id: `psess:fork:${threadId}`,
            threadId,
            providerInstanceId: instanceId,
            status: "closed",
            resumeCursor: nativeCursor,
            capabilities,
            openedAt: ctx.now,
            closedAt: ctx.now,
            closeReason: "fork_seed",
          });
        }
        ctx.put("contextTransfer", {
          id: transferId,
          kind: "fork",
          sourceThreadId: source.id,
          targetThreadId: threadId,
          strategy,
          status: strategy === "native" ? "consumed" : "pending",
          content: handoff,
          delegatedTaskId: null,
          createdAt: ctx.now,
          consumedAt: strategy === "native" ? ctx.now : null,
        });
        return { threadId };
      },
    });
    const thread = await this.engine.reader.get("thread", threadId);
    if (thread === null) throw new SwitchyardError("internal", "fork did not create its thread");
    return { thread, transferId, strategy, reason, replayed: false };
  }
}
