import { inject, injectable } from "tsyringe";
import { SwitchyardError, type ProviderCapabilities } from "../spec/index.js";
import { TOKENS, type Policy } from "../di/tokens.js";
import type { Engine } from "../engine/ports.js";
import { OrchestratorFailure } from "../engine/orchestrator-failure.js";
import type { ProviderSessions } from "../engine/ports.js";
import { createThread } from "../engine/thread-records.js";
import { portableContext } from "../engine/portable-context.js";
import type { ProviderCatalog } from "../engine/provider-catalog.js";
import type { Actor, CreationSource, ThreadRecord } from "../store/records.js";
import { derive } from "../util/ids.js";

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
  readonly commandId?: string;
}

/** The fork and how its context travels (what was asked, what was done). */
export interface ForkResult {
  readonly thread: ThreadRecord;
  readonly transferId: string;
  readonly strategy: "native" | "portable";
  readonly reason: string;
}

/**
 * Forks a thread through the shared fork policy: natively when the provider copies
 * conversations itself (the new thread resumes from the copy), otherwise as portable context
 * delivered with the fork's first turn. Works on every provider.
 */
@injectable()
export class ThreadForkService {
  constructor(
    @inject(TOKENS.Engine) private readonly engine: Engine,
    @inject(TOKENS.ProviderCatalog) private readonly registry: ProviderCatalog,
    @inject(TOKENS.ProviderSessionManager) private readonly sessions: ProviderSessions,
    @inject(TOKENS.Policy) private readonly policy: Policy,
  ) {}

  async fork(request: ForkRequest): Promise<ForkResult> {
    const source = this.engine.store.get("thread", request.sourceThreadId);
    if (source === null || source.deletedAt !== null) throw new OrchestratorFailure("thread_not_found", `Thread ${request.sourceThreadId} does not exist.`);
    const instanceId = request.providerInstanceId ?? source.providerInstanceId;
    if (this.registry.get(instanceId) === null) throw new OrchestratorFailure("provider_unavailable", `Provider instance "${instanceId}" is not configured.`);
    const capabilities: ProviderCapabilities = this.registry.capabilities(instanceId);
    const afterAttemptId = request.afterRunId === undefined ? undefined : (this.engine.store.get("run", request.afterRunId)?.currentAttemptId ?? undefined);
    if (request.afterRunId !== undefined && afterAttemptId === undefined) throw new OrchestratorFailure("run_not_found", `Run ${request.afterRunId} does not exist.`);
    const hasNative = this.engine.store.select("providerSession", "thread_id = ?", [source.id]).some((s) => s.resumeCursor !== null);
    const decision = this.policy.decideFork({ sameProviderInstance: instanceId === source.providerInstanceId, sourceHasNativeThread: hasNative, atTurn: afterAttemptId !== undefined, capabilities });

    let strategy: "native" | "portable" = decision.action;
    let reason = decision.reason;
    let nativeCursor: string | null = null;
    if (strategy === "native") {
      try {
        const live = await this.sessions.ensure(source.id);
        nativeCursor = (await live.session.forkThread(afterAttemptId !== undefined ? { afterTurnId: afterAttemptId } : {})).resumeCursor;
      } catch (error) {
        // A native fork that fails still has a portable path; nothing is lost.
        strategy = "portable";
        reason = `The native fork failed (${(error as Error).message}), so the conversation travels as portable context.`;
      }
    }
    const commandId = request.commandId ?? `cmd:thread.fork:${this.engine.ids.random("req")}`;
    const threadId = derive.threadFromCommand(commandId);
    const transferId = `transfer:fork:${threadId}`;
    const handoff = strategy === "portable" ? portableContext(this.engine, source, capabilities.context.maxHandoffChars, { upToRunId: request.afterRunId }) : "";
    this.engine.execute({
      commandId,
      operation: "thread.fork",
      request: { sourceThreadId: source.id, instanceId, afterRunId: request.afterRunId ?? null },
      handle: (ctx) => {
        createThread(ctx, {
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
          lineage: { relationship: "fork", parentThreadId: source.id, parentRunId: request.afterRunId ?? null, parentNodeId: null, delegatedTaskId: null, rootThreadId: source.lineage.rootThreadId },
          createdBy: request.createdBy,
          creationSource: request.creationSource,
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
    const thread = this.engine.store.get("thread", threadId);
    if (thread === null) throw new SwitchyardError("internal", "fork did not create its thread");
    return { thread, transferId, strategy, reason };
  }
}
