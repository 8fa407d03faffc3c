import { inject, injectable } from "tsyringe";
import type { ApprovalDecision, RuntimeRequestResponse } from "../spec/index.js";
import { type Engine, EngineToken } from "../engine/ports.js";
import { answerRuntimeRequest } from "../engine/runtime-request-answers.js";
import { OrchestratorFailure } from "../engine/orchestrator-failure.js";
import type { RuntimeRequestRecord, ThreadRecord } from "../store/records.js";
import type { Caller } from "./caller.js";
import { CallerContext } from "./caller-context.js";
import { ReachOrigins } from "./reach/reach-origin.js";

function requestView(request: RuntimeRequestRecord) {
  const questions = request.request.kind === "user_input" ? request.request.questions : [];
  const approval = request.request.kind === "approval" ? request.request : null;
  return {
    requestId: request.id,
    threadId: request.threadId,
    runId: request.runId,
    kind: request.kind,
    status: request.status,
    blocking: request.blocking,
    questions: questions.map((q) => ({
      id: q.id,
      question: q.question,
      ...(q.header !== undefined ? { header: q.header } : {}),
      ...(q.options !== undefined
        ? {
            options: q.options.map((o) => ({
              label: o.label,
              ...(o.description !== undefined ? { description: o.description } : {}),
            })),
          }
        : {}),
      ...(q.multiSelect !== undefined ? { multiSelect: q.multiSelect } : {}),
    })),
    approval:
      approval === null
        ? null
        : {
            approvalKind: approval.approvalKind,
            title: approval.title,
            detail: approval.detail ?? null,
            options: (approval.options ?? []).map((o) => ({ id: o.id, label: o.label, decision: o.decision })),
          },
    ...(request.nativeSubagent ? { nativeSubagent: request.nativeSubagent } : {}),
    createdAt: request.createdAt,
    resolvedAt: request.resolvedAt,
  };
}

export type PendingRequestView = ReturnType<typeof requestView>;

/** An answer: a question's answers, an approval's decision, or dismiss (declines either). */
export interface PendingRequestAnswer {
  readonly threadId: string;
  readonly requestId: string;
  readonly answers?: Record<string, string | string[]>;
  readonly decision?: ApprovalDecision;
  readonly dismiss?: boolean;
}

/**
 * Pending runtime requests: list, read and answer.
 *
 * - Questions (user-input requests): an agent sees and answers those of its direct,
 *   orchestrator-owned children; a client those of any thread its token may use. Answering
 *   needs `orchestration:operate`.
 * - Approvals: never routed to agents (seed 000), so agents neither see nor answer them here.
 *   A client sees them, and answering (or dismissing) one needs `orchestration:approve`, which
 *   only a client token can hold. One rule for every transport: MCP `t3_pending_request` and
 *   the HTTP API both come through here.
 */
@injectable()
export class PendingRequestService {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    private readonly callers: CallerContext,
    private readonly origins: ReachOrigins,
  ) {}

  private async child(caller: Caller, threadId: string): Promise<ThreadRecord> {
    const thread = await this.engine.reader.get("thread", threadId);
    if (thread === null || thread.deletedAt !== null)
      throw new OrchestratorFailure("thread_not_found", `Thread ${threadId} does not exist.`, { threadId });
    if (
      caller.kind === "agent" &&
      (thread.lineage.relationship !== "subagent" || thread.lineage.parentThreadId !== caller.threadId)
    ) {
      throw new OrchestratorFailure(
        "thread_not_found",
        `Thread ${threadId} is not a direct sub-agent of your thread; t3_pending_request answers only the children your thread delegated.`,
        { threadId },
      );
    }
    return thread;
  }

  /** Whether the caller is shown this kind of request: agents only questions. */
  private visible(caller: Caller, request: RuntimeRequestRecord): boolean {
    return request.kind === "user_input" || caller.kind === "client";
  }

  async list(caller: Caller, threadId: string): Promise<PendingRequestView[]> {
    const thread = await this.child(caller, threadId);
    return (
      await this.engine.reader.select(
        "runtimeRequest",
        "thread_id = ? AND status = 'pending'",
        [thread.id],
        "ORDER BY rowid",
      )
    )
      .filter((request) => this.visible(caller, request))
      .map(requestView);
  }

  async read(caller: Caller, threadId: string, requestId: string): Promise<PendingRequestView> {
    return requestView(await this.record(caller, threadId, requestId));
  }

  private async record(caller: Caller, threadId: string, requestId: string): Promise<RuntimeRequestRecord> {
    const thread = await this.child(caller, threadId);
    const request = await this.engine.reader.get("runtimeRequest", requestId);
    if (request === null || request.threadId !== thread.id || !this.visible(caller, request)) {
      const what = caller.kind === "agent" ? "a question" : "a pending request";
      throw new OrchestratorFailure(
        "invalid_request",
        `Request ${requestId} is not ${what} of thread ${threadId}. Use action "list" to see its pending ${caller.kind === "agent" ? "questions" : "requests"}.`,
        { requestId },
      );
    }
    return request;
  }

  /**
   * Answers a pending question (answers), decides an approval (decision), or declines either
   * (dismiss). The capability is checked before the request is looked at: a decision needs
   * `orchestration:approve`, answers `orchestration:operate`. Answering twice is refused.
   */
  async respond(caller: Caller, input: PendingRequestAnswer): Promise<PendingRequestView> {
    if (input.decision !== undefined) this.requireCapability(caller, "approval");
    if (input.answers !== undefined) this.requireCapability(caller, "user_input");
    const request = await this.record(caller, input.threadId, input.requestId);
    this.requireCapability(caller, request.kind);
    await this.callers.requireLiveRunForChanges(caller, "t3_pending_request respond");
    if (caller.kind !== "agent")
      await this.callers.requireTargetWithinCeiling(
        caller,
        (await this.engine.reader.get("thread", request.threadId))!,
      );
    if (request.status !== "pending")
      throw new OrchestratorFailure("invalid_request", `Request ${input.requestId} is already ${request.status}.`, {
        requestId: input.requestId,
      });
    const response = this.response(request, input);
    const reachedFrom = await this.origins.of(caller);
    await this.engine.execute({
      commandId: `cmd:runtime-request.respond:${input.requestId}`,
      operation: "runtime-request.respond",
      request: { requestId: input.requestId, response },
      handle: async (ctx) => {
        await answerRuntimeRequest(ctx, input.requestId, response);
        // An answer is input to the run that asked: one from another environment's chain marks it.
        if (reachedFrom !== null && (await ctx.get("run", request.runId)) !== null) {
          await ctx.update("run", request.runId, (run) =>
            run.reachedFrom !== undefined ? run : { ...run, reachedFrom },
          );
        }
        return null;
      },
    });
    return requestView((await this.engine.reader.get("runtimeRequest", input.requestId))!);
  }

  private requireCapability(caller: Caller, kind: RuntimeRequestRecord["kind"]): void {
    const required = kind === "approval" ? "orchestration:approve" : "orchestration:operate";
    if (caller.capabilities.has(required)) return;
    throw new OrchestratorFailure(
      "capability_denied",
      kind === "approval"
        ? "Answering an approval needs the orchestration:approve capability, which only a client token issued with --verbs approve holds; agents' credentials never do."
        : "Answering a question needs the orchestration:operate capability.",
      { required },
    );
  }

  private response(request: RuntimeRequestRecord, input: PendingRequestAnswer): RuntimeRequestResponse {
    const given = [input.answers !== undefined, input.decision !== undefined, input.dismiss === true].filter(
      Boolean,
    ).length;
    if (given > 1)
      throw new OrchestratorFailure(
        "invalid_request",
        "Pass one of answers (a question), decision (an approval) or dismiss: true.",
        { requestId: request.id },
      );
    if (input.dismiss === true) return { kind: "dismiss" };
    if (request.kind === "approval") {
      if (input.decision === undefined) {
        throw new OrchestratorFailure(
          "invalid_request",
          `Request ${request.id} is an approval: answer it with decision (accept, accept_for_session, decline or cancel), or dismiss: true.`,
          { requestId: request.id },
        );
      }
      return { kind: "approval", decision: input.decision };
    }
    const answers = input.answers ?? {};
    const questions = request.request.kind === "user_input" ? request.request.questions : [];
    const missing = questions.filter((q) => answers[q.id] === undefined).map((q) => q.id);
    if (missing.length > 0)
      throw new OrchestratorFailure(
        "invalid_request",
        `Answer every question: missing answers for ${missing.join(", ")} (keys are question ids).`,
        { missing },
      );
    return { kind: "user_input", answers };
  }
}
