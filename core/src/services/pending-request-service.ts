import { inject, injectable } from "tsyringe";
import { TOKENS } from "../di/tokens.js";
import type { Engine } from "../engine/ports.js";
import { answerRuntimeRequest } from "../engine/runtime-request-answers.js";
import { OrchestratorFailure } from "../engine/orchestrator-failure.js";
import type { RuntimeRequestRecord, ThreadRecord } from "../store/records.js";
import type { Caller } from "./caller.js";
import { CallerContext } from "./caller-context.js";

function requestView(request: RuntimeRequestRecord) {
  const questions = request.request.kind === "user_input" ? request.request.questions : [];
  return {
    requestId: request.id,
    threadId: request.threadId,
    runId: request.runId,
    status: request.status,
    blocking: request.blocking,
    questions: questions.map((q) => ({
      id: q.id,
      question: q.question,
      ...(q.header !== undefined ? { header: q.header } : {}),
      ...(q.options !== undefined ? { options: q.options.map((o) => ({ label: o.label, ...(o.description !== undefined ? { description: o.description } : {}) })) } : {}),
      ...(q.multiSelect !== undefined ? { multiSelect: q.multiSelect } : {}),
    })),
    createdAt: request.createdAt,
    resolvedAt: request.resolvedAt,
  };
}

export type PendingRequestView = ReturnType<typeof requestView>;

/**
 * t3_pending_request: list, read and answer the user-input questions of a caller's direct,
 * orchestrator-owned children. Approvals are never routed here: these tools grant no approval
 * authority.
 */
@injectable()
export class PendingRequestService {
  constructor(
    @inject(TOKENS.Engine) private readonly engine: Engine,
    private readonly callers: CallerContext,
  ) {}

  private child(caller: Caller, threadId: string): ThreadRecord {
    const thread = this.engine.store.get("thread", threadId);
    if (thread === null || thread.deletedAt !== null) throw new OrchestratorFailure("thread_not_found", `Thread ${threadId} does not exist.`, { threadId });
    if (caller.kind === "agent" && (thread.lineage.relationship !== "subagent" || thread.lineage.parentThreadId !== caller.threadId)) {
      throw new OrchestratorFailure("thread_not_found", `Thread ${threadId} is not a direct sub-agent of your thread; t3_pending_request answers only the children your thread delegated.`, { threadId });
    }
    return thread;
  }

  list(caller: Caller, threadId: string): PendingRequestView[] {
    const thread = this.child(caller, threadId);
    return this.engine.store
      .select("runtimeRequest", "thread_id = ? AND status = 'pending'", [thread.id], "ORDER BY rowid")
      .filter((request) => request.kind === "user_input")
      .map(requestView);
  }

  read(caller: Caller, threadId: string, requestId: string): PendingRequestView {
    const thread = this.child(caller, threadId);
    const request = this.engine.store.get("runtimeRequest", requestId);
    if (request === null || request.threadId !== thread.id || request.kind !== "user_input") {
      throw new OrchestratorFailure("invalid_request", `Request ${requestId} is not a question of thread ${threadId}. Use action "list" to see its pending questions.`, { requestId });
    }
    return requestView(request);
  }

  /** Answers (or, with `dismiss`, declines) a pending question. Answering twice is refused. */
  respond(
    caller: Caller,
    input: { threadId: string; requestId: string; answers?: Record<string, string | string[]>; dismiss?: boolean },
  ): PendingRequestView {
    const view = this.read(caller, input.threadId, input.requestId);
    this.callers.requireLiveRunForChanges(caller, "t3_pending_request respond");
    if (view.status !== "pending") throw new OrchestratorFailure("invalid_request", `Request ${input.requestId} is already ${view.status}.`, { requestId: input.requestId });
    const answers = input.answers ?? {};
    if (!input.dismiss) {
      const missing = view.questions.filter((q) => answers[q.id] === undefined).map((q) => q.id);
      if (missing.length > 0) throw new OrchestratorFailure("invalid_request", `Answer every question: missing answers for ${missing.join(", ")} (keys are question ids).`, { missing });
    }
    this.engine.execute({
      commandId: `cmd:runtime-request.respond:${input.requestId}`,
      operation: "runtime-request.respond",
      request: { requestId: input.requestId, answers, dismiss: input.dismiss ?? false },
      handle: (ctx) => {
        answerRuntimeRequest(ctx, input.requestId, input.dismiss ? { kind: "dismiss" } : { kind: "user_input", answers });
        return null;
      },
    });
    return requestView(this.engine.store.get("runtimeRequest", input.requestId)!);
  }
}
