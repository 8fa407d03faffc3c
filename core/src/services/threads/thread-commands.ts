import { inject, injectable } from "tsyringe";
import { ConfigToken, type SwitchyardConfig } from "../../config/config-schema.js";
import { attachedThreadRefusal, deliverMessage, type DeliveryResult } from "../../engine/message-delivery.js";
import { OrchestratorFailure, OrchestratorFailure as Failure } from "../../engine/orchestrator-failure.js";
import { EngineToken, type Engine } from "../../engine/ports.js";
import { ProviderCatalogToken, type ProviderCatalog } from "../../engine/provider-catalog.js";
import { activeRun, latestRun, requestInterrupt, resumeThread, stoppableRun } from "../../engine/run-lifecycle.js";
import { answerRuntimeRequest } from "../../engine/runtime-request-answers.js";
import { createThread } from "../../engine/thread-records.js";
import { PolicyToken, type Policy } from "../../policy/policy-token.js";
import type { RuntimeRequestResponse } from "../../spec/index.js";
import {
  isTerminalRunStatus,
  type RunRecord,
  type RuntimeRequestRecord,
  type ThreadRecord,
} from "../../store/records.js";
import { derive } from "../../util/ids.js";
import { OWNER_AUTHORITY } from "../caller.js";
import { withSourceHeader } from "../message-source.js";
import { routerChildLineage, routerParent, showChildInParent } from "../router-children/router-child-lineage.js";
import { workspaceOf } from "../workspaces/workspace-records.js";
import { sendReceiptRequest, type CreateThreadRequest, type SendRequest } from "./thread-requests.js";

/**
 * The thread commands every caller shares once it is trusted (a person, the CLI, a caller
 * checked by CallerThreadCommands): create, send, resume, interrupt, answer a request, and the
 * reads they start from. Each is one engine command, idempotent by its command id.
 */
@injectable()
export class ThreadCommands {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(ProviderCatalogToken) private readonly registry: ProviderCatalog,
    @inject(ConfigToken) private readonly config: SwitchyardConfig,
    @inject(PolicyToken) private readonly policy: Policy,
  ) {}

  /** A fresh command id: new work each time (no retry key). */
  newCommandId(operation: string): string {
    return `cmd:${operation}:${this.engine.ids.random("req")}`;
  }

  /** Reads a live (not deleted) thread, or fails with `thread_not_found`. */
  async getThread(threadId: string): Promise<ThreadRecord> {
    const thread = await this.engine.reader.get("thread", threadId);
    if (thread === null || thread.deletedAt !== null)
      throw new OrchestratorFailure("thread_not_found", `Thread ${threadId} does not exist.`, { threadId });
    return thread;
  }

  /** Creates a thread, and starts its first run when a prompt is given. */
  async createThread(request: CreateThreadRequest): Promise<{
    thread: ThreadRecord;
    delivery: DeliveryResult | null;
    replayed: boolean;
  }> {
    const project = await this.engine.reader.get("project", request.projectId);
    if (project === null)
      throw new OrchestratorFailure("invalid_request", `Project ${request.projectId} does not exist.`, {
        projectId: request.projectId,
      });
    const instance = this.registry.get(request.providerInstanceId);
    if (instance === null) {
      throw new OrchestratorFailure(
        "provider_unavailable",
        `Provider instance "${request.providerInstanceId}" is not configured.`,
        { providerInstanceId: request.providerInstanceId },
      );
    }
    const commandId = request.commandId ?? this.newCommandId("thread.create");
    const capabilities = this.registry.capabilities(request.providerInstanceId);
    if (request.reportBack !== undefined && (request.parentThreadId ?? null) === null) {
      throw new OrchestratorFailure(
        "invalid_request",
        "reportBack needs parentThreadId: only a child thread reports its turns to a parent.",
        { field: "reportBack" },
      );
    }
    const outcome = await this.engine.execute({
      commandId,
      operation: "thread.create",
      request: { ...request, commandId: undefined },
      handle: async (ctx) => {
        const threadId = request.threadId ?? derive.threadFromCommand(commandId);
        const parent =
          (request.parentThreadId ?? null) === null
            ? null
            : await routerParent(ctx, request.parentThreadId!, project.id, this.config.budgets);
        const workspace = parent ?? {
          cwd: project.rootPath,
          branch: null,
          worktreePath: null,
          workspaceStrategy: "root" as const,
        };
        const existed = (await ctx.get("thread", threadId)) !== null;
        const thread = await createThread(
          ctx,
          {
            id: threadId,
            projectId: project.id,
            title: request.title ?? null,
            providerInstanceId: request.providerInstanceId,
            model: request.model ?? null,
            runtimeMode: request.runtimeMode ?? "approval-required",
            interactionMode: request.interactionMode ?? "default",
            cwd: request.cwd ?? workspace.cwd,
            branch: request.branch ?? workspace.branch,
            worktreePath: request.worktreePath ?? workspace.worktreePath,
            workspaceStrategy: request.workspaceStrategy ?? workspace.workspaceStrategy,
            lineage:
              parent === null
                ? {
                    relationship: "root",
                    parentThreadId: null,
                    parentRunId: null,
                    parentNodeId: null,
                    delegatedTaskId: null,
                  }
                : await routerChildLineage(ctx, parent, request.reportBack ?? true),
            createdBy: request.createdBy,
            creationSource: request.creationSource,
            authority: request.authority === undefined ? OWNER_AUTHORITY : request.authority,
          },
          request.prompt ?? null,
        );
        if (parent !== null && !existed) await showChildInParent(ctx, parent, thread);
        const delivery =
          request.prompt === undefined || request.prompt === null || request.prompt === ""
            ? null
            : await deliverMessage(ctx, {
                threadId: thread.id,
                messageId: derive.messageFromCommand(commandId),
                text: request.prompt,
                mode: "auto",
                createdBy: request.createdBy,
                creationSource: request.creationSource,
                instructions: request.instructions ?? null,
                capabilities,
              });
        return { threadId: thread.id, delivery };
      },
    });
    return {
      thread: await this.getThread(outcome.result.threadId),
      delivery: outcome.result.delivery,
      replayed: outcome.replayed,
    };
  }

  /** Sends a message (auto / queue / steer / restart through the shared policy). Idempotent by command id. */
  async send(request: SendRequest): Promise<DeliveryResult & { replayed: boolean }> {
    const thread = await this.getThread(request.threadId);
    if (thread.lineage.relationship === "attached") throw attachedThreadRefusal(thread);
    const commandId = request.commandId ?? this.newCommandId("thread.send");
    // A thread whose own workspace was removed has no folder to work in (a retry of a send
    // that was accepted before still replays).
    const workspace = await workspaceOf(this.engine.reader, thread.id);
    if (workspace?.status === "removed" && (await this.engine.reader.receipt(commandId)) === null) {
      throw new Failure(
        "thread_not_sendable",
        `Thread ${thread.id} worked in ${workspace.path}, which was removed (${workspace.disposition ?? "pruned"}); its conversation cannot go on there. Start new work instead (delegate_task, create_threads).`,
        { threadId: thread.id, reason: "workspace_removed" },
      );
    }
    const capabilities = this.registry.capabilities(thread.providerInstanceId);
    const source = request.source ?? null;
    const replyToSource = request.replyToSource ?? true;
    const outcome = await this.engine.execute({
      commandId,
      operation: "thread.send",
      request: sendReceiptRequest(request),
      handle: async (ctx) => {
        // An explicit message revives a settled thread: there is work in it again.
        const current = await ctx.require("thread", request.threadId);
        if ((current.settledAt ?? null) !== null)
          ctx.put("thread", { ...current, settledAt: null, updatedAt: ctx.now });
        return await deliverMessage(ctx, {
          threadId: request.threadId,
          messageId: request.messageId ?? derive.messageFromCommand(commandId),
          text: source === null ? request.text : withSourceHeader(request.text, source, replyToSource),
          mode: request.mode,
          createdBy: request.createdBy,
          creationSource: request.creationSource,
          instructions: request.instructions ?? null,
          capabilities,
          ...(source !== null ? { source } : {}),
          ...(request.reachedFrom != null ? { reachedFrom: request.reachedFrom } : {}),
        });
      },
    });
    return { ...outcome.result, replayed: outcome.replayed };
  }

  /**
   * Resume after Stop: the thread is no longer stopped and the runs Stop held start in their
   * queue order. Nothing else starts: a result or question that waited for the thread reaches it
   * when its next run ends. Idempotent by command id; a thread that was not stopped is unchanged.
   */
  async resume(
    threadId: string,
    commandId?: string,
  ): Promise<{ thread: ThreadRecord; resumedRunIds: string[]; replayed: boolean }> {
    const thread = await this.getThread(threadId);
    const outcome = await this.engine.execute({
      commandId: commandId ?? this.newCommandId("thread.resume"),
      operation: "thread.resume",
      request: { threadId: thread.id },
      handle: async (ctx) => ({ resumedRunIds: (await resumeThread(ctx, thread.id)).map((run) => run.id) }),
    });
    return {
      thread: await this.getThread(thread.id),
      resumedRunIds: outcome.result.resumedRunIds,
      replayed: outcome.replayed,
    };
  }

  /**
   * The run a wait or interrupt names, or selects without a run id: an interrupt the newest
   * active run; a wait the latest run at call time, queued or not, so a wait right after a
   * queued send waits for that message's run, never an older completion.
   */
  async selectRun(
    threadId: string,
    runId: string | undefined,
    purpose: "wait" | "interrupt",
  ): Promise<RunRecord | null> {
    const thread = await this.getThread(threadId);
    if (runId !== undefined) {
      const run = await this.engine.reader.get("run", runId);
      if (run === null || run.threadId !== thread.id)
        throw new OrchestratorFailure("run_not_found", `Run ${runId} does not exist in thread ${threadId}.`, {
          threadId,
          runId,
        });
      return run;
    }
    return purpose === "interrupt"
      ? await activeRun(this.engine.reader, thread.id)
      : await latestRun(this.engine.reader, thread.id);
  }

  /**
   * Interrupts a run (the newest interruptible one without `runId`). A terminal run is returned
   * unchanged; a thread with no active provider turn answers `no_active_run`.
   */
  async interrupt(request: {
    threadId: string;
    runId?: string;
    reason?: string;
    hard?: boolean;
    commandId?: string;
  }): Promise<{
    status: "interrupt_requested" | "already_terminal" | "no_active_run";
    run: RunRecord | null;
  }> {
    const thread = await this.getThread(request.threadId);
    const run = await this.selectRun(request.threadId, request.runId, "interrupt");
    if (run === null) return { status: "no_active_run", run: null };
    if (isTerminalRunStatus(run.status)) return { status: "already_terminal", run };
    const decision = this.policy.decideRunStop(
      await stoppableRun(this.engine.reader, run),
      this.registry.capabilities(thread.providerInstanceId),
    );
    if (!decision.ok) {
      throw new OrchestratorFailure(
        "thread_not_interruptible",
        `Provider "${thread.providerInstanceId}" cannot interrupt a running turn.`,
        { threadId: thread.id, capability: decision.capability },
      );
    }
    const outcome = await this.engine.execute({
      commandId: request.commandId ?? this.newCommandId("run.interrupt"),
      operation: "run.interrupt",
      request: { threadId: thread.id, runId: run.id },
      handle: async (ctx) =>
        await requestInterrupt(ctx, run.id, request.reason ?? "interrupted_by_request", request.hard ?? false),
    });
    return { status: "interrupt_requested", run: outcome.result };
  }

  /** Answers a runtime request (approval decision, answers, or dismiss) from a person or client. */
  async respondToRequest(requestId: string, response: RuntimeRequestResponse): Promise<RuntimeRequestRecord> {
    await this.engine.execute({
      commandId: `cmd:runtime-request.respond:${requestId}`,
      operation: "runtime-request.respond",
      request: { requestId, response },
      handle: async (ctx) => {
        await answerRuntimeRequest(ctx, requestId, response);
        return null;
      },
    });
    return (await this.engine.reader.get("runtimeRequest", requestId))!;
  }
}
