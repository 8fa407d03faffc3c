import { inject, injectable } from "tsyringe";
import { type InteractionMode, type RuntimeMode, type RuntimeRequestResponse } from "../spec/index.js";
import { answerRuntimeRequest } from "../engine/runtime-request-answers.js";
import { PolicyToken, type Policy } from "../policy/policy-token.js";
import { type Engine, EngineToken } from "../engine/ports.js";
import { attachedThreadRefusal, deliverMessage, type DeliveryResult } from "../engine/message-delivery.js";
import { OrchestratorFailure } from "../engine/orchestrator-failure.js";
import { activeRun, latestRun, QUEUED_RUNS_OF_THREAD, requestInterrupt, resumeThread, stoppableRun, type ProjectionReader } from "../engine/run-lifecycle.js";
import { createThread, titleFromMessage } from "../engine/thread-records.js";
import type { SendMode } from "../policy/index.js";
import { type ProviderCatalog, ProviderCatalogToken } from "../engine/provider-catalog.js";
import { isTerminalRunStatus, type Actor, type Authority, type CreationSource, type ReachOrigin, type RunRecord, type RuntimeRequestRecord, type ThreadRecord } from "../store/records.js";
import { derive } from "../util/ids.js";
import { EventWaiter, PROGRESS_HEARTBEAT_MS } from "./event-waiter.js";
import { LiveWaits } from "./live-waits.js";
import { conflictsAsInvalid } from "../engine/orchestrator-failure.js";
import { creationSourceOf, OWNER_AUTHORITY, type Caller } from "./caller.js";
import { stopThread } from "./delegation/task-stop.js";
import { CallerContext } from "./caller-context.js";
import { ProviderSelectionService, type ResolvedSelection, type TargetRequest } from "./provider-selection-service.js";
import { type SwitchyardConfig, ConfigToken } from "../config/config-schema.js";
import { OrchestratorFailure as Failure } from "../engine/orchestrator-failure.js";
import { routerChildLineage, routerParent, showChildInParent } from "./router-children/router-child-lineage.js";
import { pendingBackgroundTasks, threadLink } from "./thread-views.js";
import { withSourceHeader, type MessageSource } from "./message-source.js";
import { environmentId } from "../store/settings.js";
import { ReachOrigins } from "./reach/reach-origin.js";
import { WorkspacePlanner, type WorkspaceChoice, type WorkspacePlan } from "./workspaces/workspace-planner.js";
import { workspaceOf } from "./workspaces/workspace-records.js";

/** The receipt of a create_threads call (`runIds` and `notes` are absent in receipts written before they were kept). */
interface CreatedThreads {
  readonly threadIds: string[];
  readonly runIds?: (string | null)[];
  readonly notes?: (readonly string[])[];
}

/** Refuses to settle a thread that still has work: unfinished runs, pending requests, or delegated work. */
function refuseSettlingBusyThread(reader: ProjectionReader, threadId: string): void {
  const unfinished = reader.store.select("run", "thread_id = ? AND status NOT IN ('completed', 'failed', 'cancelled', 'interrupted')", [threadId]);
  if (unfinished.length > 0) {
    throw new OrchestratorFailure("invalid_request", `Thread ${threadId} still has ${unfinished.length} unfinished run(s) (${unfinished.map((run) => `${run.id}: ${run.status}`).join(", ")}), so it cannot be settled. Interrupt or stop it, or wait for it, then settle it.`, {
      threadId,
      reason: "unfinished_runs",
      runIds: unfinished.map((run) => run.id),
    });
  }
  const pending = reader.store.count("runtimeRequest", "thread_id = ? AND status = 'pending'", [threadId]);
  if (pending > 0) {
    throw new OrchestratorFailure("invalid_request", `Thread ${threadId} has ${pending} pending request(s) waiting for an answer, so it cannot be settled. Answer or dismiss them first (t3_pending_request).`, { threadId, reason: "pending_requests" });
  }
  const background = pendingBackgroundTasks(reader, threadId);
  if (background > 0) {
    throw new OrchestratorFailure("invalid_request", `Thread ${threadId} still waits on ${background} delegated task(s), so it cannot be settled. Wait for them or cancel them (task_cancel) first.`, { threadId, reason: "pending_background_tasks" });
  }
}

/**
 * What a send's receipt is checked against: the message as its sender wrote it (the source
 * header depends on the sender's title, which may change between retries). The sender is
 * already part of a caller's command id; `replyToSource` only when it differs from the default.
 */
function sendReceiptRequest(request: SendRequest): Record<string, unknown> {
  return { threadId: request.threadId, text: request.text, mode: request.mode, ...(request.source != null && request.replyToSource === false ? { replyToSource: false } : {}) };
}

/** The first run of a thread, or null. */
function firstRun(reader: ProjectionReader, threadId: string): string | null {
  return reader.store.select("run", "thread_id = ?", [threadId], "ORDER BY ordinal LIMIT 1")[0]?.id ?? null;
}

/** What creating a thread needs. */
export interface CreateThreadRequest {
  /** Retries with the same command id return the same thread. Omit for new work each time. */
  readonly commandId?: string;
  readonly threadId?: string;
  readonly projectId: string;
  readonly providerInstanceId: string;
  readonly model?: string | null;
  readonly runtimeMode?: RuntimeMode;
  readonly interactionMode?: InteractionMode;
  readonly title?: string | null;
  /** The first message; without one the thread stays idle. */
  readonly prompt?: string | null;
  readonly instructions?: string | null;
  readonly cwd?: string;
  readonly branch?: string | null;
  readonly worktreePath?: string | null;
  readonly workspaceStrategy?: ThreadRecord["workspaceStrategy"];
  readonly createdBy: Actor;
  readonly creationSource: CreationSource;
  /**
   * Creates the thread as a router child of this thread: in the parent's project and workspace
   * (unless given), shown as the parent's child, its finished turns delivered to the parent.
   */
  readonly parentThreadId?: string | null;
  /** With `parentThreadId`: deliver each finished turn to the parent as a message (default true). */
  readonly reportBack?: boolean;
  /** Whose authority the thread acts under; omitted: the home's owner (in-process callers: the CLI, the demo, tests). */
  readonly authority?: Authority | null;
}

/** What sending a message needs. */
export interface SendRequest {
  readonly commandId?: string;
  readonly messageId?: string;
  readonly threadId: string;
  readonly text: string;
  readonly mode: SendMode;
  readonly createdBy: Actor;
  readonly creationSource: CreationSource;
  readonly instructions?: string | null;
  /** The thread whose agent sent the message: the receiving agent is told who wrote. */
  readonly source?: MessageSource | null;
  /** With a source: whether the message asks for a reply to it (default true). */
  readonly replyToSource?: boolean;
  /** The linked environment at the start of the sender's chain: the run it starts or steers carries it. */
  readonly reachedFrom?: ReachOrigin | null;
}

/** A pending request that needs someone's answer, as a wait reports it. */
export interface AttentionRequest {
  /** A blocking question (user input) or an approval. */
  readonly kind: "question" | "approval";
  readonly request: RuntimeRequestRecord;
  /** The durable event sequence that opened it: the cursor that skips it next time. */
  readonly sequence: number;
}

/** A wait's outcome. */
export interface RunWaitResult {
  readonly threadId: string;
  /** The run waited on, or null when the thread had none. */
  readonly run: RunRecord | null;
  /** True when the wait ended by timeout (the run still works). */
  readonly timedOut: boolean;
  /**
   * What ended the wait: the thread had no run (`idle`), the run ended (`run_finished`), a
   * request that needs an answer opened after the cursor (`question`, `approval`), or time.
   */
  readonly endedBy: "idle" | "run_finished" | "question" | "approval" | "timeout";
  /** The request that ended the wait (`question` or `approval`), else null. */
  readonly attention: AttentionRequest | null;
  /** Pass it to the next wait so the requests already reported do not end it again. */
  readonly cursor: number;
}

/**
 * The shared boundary for thread operations, used by every transport (MCP, CLI, HTTP): thread
 * lookup, send-mode selection through the shared policy, durable send postconditions, waits
 * and interrupt selection. Transports only authenticate, resolve their inputs and shape results.
 */
@injectable()
export class ThreadManagementService {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(ProviderCatalogToken) private readonly registry: ProviderCatalog,
    @inject(ConfigToken) private readonly config: SwitchyardConfig,
    @inject(PolicyToken) private readonly policy: Policy,
    private readonly waiter: EventWaiter,
    private readonly callers: CallerContext,
    private readonly selection: ProviderSelectionService,
    private readonly liveWaits: LiveWaits,
    private readonly origins: ReachOrigins,
    private readonly workspaces: WorkspacePlanner,
  ) {}

  private newCommandId(operation: string): string {
    return `cmd:${operation}:${this.engine.ids.random("req")}`;
  }

  /** Reads a live (not deleted) thread, or fails with `thread_not_found`. */
  getThread(threadId: string): ThreadRecord {
    const thread = this.engine.store.get("thread", threadId);
    if (thread === null || thread.deletedAt !== null) throw new OrchestratorFailure("thread_not_found", `Thread ${threadId} does not exist.`, { threadId });
    return thread;
  }

  /** Creates a thread, and starts its first run when a prompt is given. */
  createThread(request: CreateThreadRequest): { thread: ThreadRecord; delivery: DeliveryResult | null; replayed: boolean } {
    const project = this.engine.store.get("project", request.projectId);
    if (project === null) throw new OrchestratorFailure("invalid_request", `Project ${request.projectId} does not exist.`, { projectId: request.projectId });
    const instance = this.registry.get(request.providerInstanceId);
    if (instance === null) {
      throw new OrchestratorFailure("provider_unavailable", `Provider instance "${request.providerInstanceId}" is not configured.`, { providerInstanceId: request.providerInstanceId });
    }
    const commandId = request.commandId ?? this.newCommandId("thread.create");
    const capabilities = this.registry.capabilities(request.providerInstanceId);
    if (request.reportBack !== undefined && (request.parentThreadId ?? null) === null) {
      throw new OrchestratorFailure("invalid_request", "reportBack needs parentThreadId: only a child thread reports its turns to a parent.", { field: "reportBack" });
    }
    const outcome = this.engine.execute({
      commandId,
      operation: "thread.create",
      request: { ...request, commandId: undefined },
      handle: (ctx) => {
        const threadId = request.threadId ?? derive.threadFromCommand(commandId);
        const parent = (request.parentThreadId ?? null) === null ? null : routerParent(ctx, request.parentThreadId!, project.id, this.config.budgets);
        const workspace = parent ?? { cwd: project.rootPath, branch: null, worktreePath: null, workspaceStrategy: "root" as const };
        const existed = ctx.get("thread", threadId) !== null;
        const thread = createThread(
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
                ? { relationship: "root", parentThreadId: null, parentRunId: null, parentNodeId: null, delegatedTaskId: null }
                : routerChildLineage(ctx, parent, request.reportBack ?? true),
            createdBy: request.createdBy,
            creationSource: request.creationSource,
            authority: request.authority === undefined ? OWNER_AUTHORITY : request.authority,
          },
          request.prompt ?? null,
        );
        if (parent !== null && !existed) showChildInParent(ctx, parent, thread);
        const delivery =
          request.prompt === undefined || request.prompt === null || request.prompt === ""
            ? null
            : deliverMessage(ctx, {
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
    return { thread: this.getThread(outcome.result.threadId), delivery: outcome.result.delivery, replayed: outcome.replayed };
  }

  /** Sends a message (auto / queue / steer / restart through the shared policy). Idempotent by command id. */
  send(request: SendRequest): DeliveryResult & { replayed: boolean } {
    const thread = this.getThread(request.threadId);
    if (thread.lineage.relationship === "attached") throw attachedThreadRefusal(thread);
    const commandId = request.commandId ?? this.newCommandId("thread.send");
    // A thread whose own workspace was removed has no folder to work in (a retry of a send
    // that was accepted before still replays).
    const workspace = workspaceOf(this.engine, thread.id);
    if (workspace?.status === "removed" && this.engine.store.getReceipt(commandId) === null) {
      throw new Failure(
        "thread_not_sendable",
        `Thread ${thread.id} worked in ${workspace.path}, which was removed (${workspace.disposition ?? "pruned"}); its conversation cannot go on there. Start new work instead (delegate_task, create_threads).`,
        { threadId: thread.id, reason: "workspace_removed" },
      );
    }
    const capabilities = this.registry.capabilities(thread.providerInstanceId);
    const source = request.source ?? null;
    const replyToSource = request.replyToSource ?? true;
    const outcome = this.engine.execute({
      commandId,
      operation: "thread.send",
      request: sendReceiptRequest(request),
      handle: (ctx) => {
        // An explicit message revives a settled thread: there is work in it again.
        const current = ctx.require("thread", request.threadId);
        if ((current.settledAt ?? null) !== null) ctx.put("thread", { ...current, settledAt: null, updatedAt: ctx.now });
        return deliverMessage(ctx, {
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
  resume(threadId: string, commandId?: string): { thread: ThreadRecord; resumedRunIds: string[]; replayed: boolean } {
    const thread = this.getThread(threadId);
    const outcome = this.engine.execute({
      commandId: commandId ?? this.newCommandId("thread.resume"),
      operation: "thread.resume",
      request: { threadId: thread.id },
      handle: (ctx) => ({ resumedRunIds: resumeThread(ctx, thread.id).map((run) => run.id) }),
    });
    return { thread: this.getThread(thread.id), resumedRunIds: outcome.result.resumedRunIds, replayed: outcome.replayed };
  }

  /**
   * The run a wait or interrupt names, or selects without a run id: an interrupt the newest
   * active run; a wait the latest run at call time, queued or not, so a wait right after a
   * queued send waits for that message's run, never an older completion.
   */
  selectRun(threadId: string, runId: string | undefined, purpose: "wait" | "interrupt"): RunRecord | null {
    const thread = this.getThread(threadId);
    if (runId !== undefined) {
      const run = this.engine.store.get("run", runId);
      if (run === null || run.threadId !== thread.id) throw new OrchestratorFailure("run_not_found", `Run ${runId} does not exist in thread ${threadId}.`, { threadId, runId });
      return run;
    }
    return purpose === "interrupt" ? activeRun(this.engine, thread.id) : latestRun(this.engine, thread.id);
  }

  /**
   * Interrupts a run (the newest interruptible one without `runId`). A terminal run is returned
   * unchanged; a thread with no active provider turn answers `no_active_run`.
   */
  interrupt(request: { threadId: string; runId?: string; reason?: string; hard?: boolean; commandId?: string }): { status: "interrupt_requested" | "already_terminal" | "no_active_run"; run: RunRecord | null } {
    const thread = this.getThread(request.threadId);
    const run = this.selectRun(request.threadId, request.runId, "interrupt");
    if (run === null) return { status: "no_active_run", run: null };
    if (isTerminalRunStatus(run.status)) return { status: "already_terminal", run };
    const decision = this.policy.decideRunStop(stoppableRun(this.engine, run), this.registry.capabilities(thread.providerInstanceId));
    if (!decision.ok) {
      throw new OrchestratorFailure("thread_not_interruptible", `Provider "${thread.providerInstanceId}" cannot interrupt a running turn.`, { threadId: thread.id, capability: decision.capability });
    }
    const outcome = this.engine.execute({
      commandId: request.commandId ?? this.newCommandId("run.interrupt"),
      operation: "run.interrupt",
      request: { threadId: thread.id, runId: run.id },
      handle: (ctx) => requestInterrupt(ctx, run.id, request.reason ?? "interrupted_by_request", request.hard ?? false),
    });
    return { status: "interrupt_requested", run: outcome.result };
  }

  /**
   * Waits for a run to become terminal. Without `runId` it pins the latest run at call time; an
   * idle thread returns at once. A timeout reports the latest status and cancels nothing. While
   * it blocks, the waiting thread (when an agent waits) shows `blockedOnThreadWait`.
   */
  async waitForRun(request: {
    threadId: string;
    runId?: string;
    timeoutMs: number;
    /**
     * Also end the wait when a request that needs an answer opens (t3_thread_wait); requests
     * opened at or before `cursor` (an event sequence) were reported already and do not.
     * Without it the wait ends only with the run.
     */
    attention?: { cursor: number };
    signal?: AbortSignal;
    onProgress?: () => void;
    /** The thread whose agent is waiting, if any. */
    waiterThreadId?: string | null;
  }): Promise<RunWaitResult> {
    const cursor = request.attention?.cursor ?? 0;
    const pinned = this.selectRun(request.threadId, request.runId, "wait");
    if (pinned === null) return { threadId: request.threadId, run: null, timedOut: false, endedBy: "idle", attention: null, cursor };
    const check = (): RunWaitResult | null => {
      const run = this.engine.store.get("run", pinned.id);
      if (run !== null && isTerminalRunStatus(run.status)) return { threadId: request.threadId, run, timedOut: false, endedBy: "run_finished", attention: null, cursor };
      const attention = request.attention === undefined ? null : this.attentionAfter(request.threadId, cursor);
      if (attention === null) return null;
      return { threadId: request.threadId, run, timedOut: false, endedBy: attention.kind, attention, cursor: attention.sequence };
    };
    const now = check();
    if (now !== null) return now;
    const endLiveWait = this.liveWaits.begin({ kind: "t3_thread_wait", waiterThreadId: request.waiterThreadId ?? null, subjectId: pinned.id });
    try {
      const done = await this.waiter.waitFor(check, {
        timeoutMs: request.timeoutMs,
        ...(request.signal ? { signal: request.signal } : {}),
        ...(request.onProgress ? { onProgress: request.onProgress, heartbeatMs: PROGRESS_HEARTBEAT_MS } : {}),
        threadIds: [request.threadId],
        relevant: (event) =>
          (event.entity === "run" && (event.record as RunRecord).id === pinned.id) || (event.entity === "runtimeRequest" && (event.record as RuntimeRequestRecord).threadId === request.threadId),
      });
      return done ?? { threadId: request.threadId, run: this.engine.store.get("run", pinned.id), timedOut: true, endedBy: "timeout", attention: null, cursor };
    } finally {
      endLiveWait();
    }
  }

  /**
   * The oldest pending request of a thread that needs an answer and opened after `cursor`: a
   * blocking question or an approval (a non-blocking question lets the agent work on, so it
   * ends no wait, as in delegate_task). Ordered by the event that opened each request.
   */
  private attentionAfter(threadId: string, cursor: number): AttentionRequest | null {
    const pending = this.engine.store
      .select("runtimeRequest", "thread_id = ? AND status = 'pending'", [threadId])
      .filter((pendingRequest) => pendingRequest.kind === "approval" || pendingRequest.blocking);
    if (pending.length === 0) return null;
    const candidates = pending
      .map((pendingRequest) => ({ request: pendingRequest, sequence: this.engine.store.firstUpsertSequence("runtimeRequest", pendingRequest.id) ?? 0 }))
      .filter((candidate) => candidate.sequence > cursor)
      .sort((a, b) => a.sequence - b.sequence);
    const first = candidates[0];
    if (first === undefined) return null;
    return { kind: first.request.kind === "approval" ? "approval" : "question", request: first.request, sequence: first.sequence };
  }

  /** Reads a thread's runs, newest first. */
  runs(threadId: string, limit = 20): RunRecord[] {
    this.getThread(threadId);
    return this.engine.store.select("run", "thread_id = ?", [threadId], `ORDER BY ordinal DESC LIMIT ${Math.max(1, Math.floor(limit))}`);
  }

  // ---- caller-aware operations (MCP and other authenticated transports) ----

  /** The stable command id of a caller's retry key for one operation on one subject. */
  private callerCommandId(caller: Caller, operation: string, subject: string, clientRequestId: string | undefined): string | undefined {
    return clientRequestId === undefined ? undefined : derive.command(caller.requestScope, operation, `${subject}:${clientRequestId}`);
  }

  /** t3_thread_send: any thread in the environment, never broader than the caller's modes. */
  sendFromCaller(caller: Caller, input: { threadId: string; message: string; mode?: SendMode; replyToSource?: boolean; clientRequestId?: string }): DeliveryResult & { replayed: boolean } {
    const target = this.getThread(input.threadId);
    const commandId = this.callerCommandId(caller, "t3_thread_send", target.id, input.clientRequestId);
    const sender = this.callers.thread(caller);
    const source: MessageSource | null =
      sender === null ? null : { threadId: sender.id, link: threadLink(environmentId(this.engine.store), sender.id), title: sender.title };
    const request: SendRequest = {
      ...(commandId !== undefined ? { commandId } : {}),
      threadId: target.id,
      text: input.message,
      mode: input.mode ?? "auto",
      createdBy: "agent",
      creationSource: creationSourceOf(caller),
      source,
      ...(input.replyToSource !== undefined ? { replyToSource: input.replyToSource } : {}),
      reachedFrom: this.origins.of(caller),
    };
    if (commandId === undefined || conflictsAsInvalid(() => this.engine.replay(commandId, "thread.send", sendReceiptRequest(request))) === null) {
      this.callers.requireLiveRunForChanges(caller, "t3_thread_send");
      this.callers.requireTargetWithinCeiling(caller, target);
    }
    return conflictsAsInvalid(() => this.send(request));
  }

  /** t3_thread_interrupt, with the caller's live-run check; only an agent is held to its ceiling (CallerContext.requireMayStop). */
  interruptFromCaller(caller: Caller, input: { threadId: string; runId?: string }): ReturnType<ThreadManagementService["interrupt"]> {
    const target = this.getThread(input.threadId);
    this.callers.requireLiveRunForChanges(caller, "t3_thread_interrupt");
    this.callers.requireMayStop(caller, target);
    return this.interrupt({ threadId: target.id, ...(input.runId !== undefined ? { runId: input.runId } : {}), reason: "interrupted_by_agent" });
  }

  /**
   * Stop, like the user's Stop button, for a caller: interrupts the running turn, holds queued
   * runs until Resume or the next explicit send. Only an agent is held to its ceiling
   * (CallerContext.requireMayStop); idempotent by `clientRequestId`. A provider that cannot
   * interrupt a turn its run already reached answers `thread_not_interruptible`, and nothing is
   * held.
   */
  stopFromCaller(caller: Caller, input: { threadId: string; reason?: string; clientRequestId?: string }): { thread: ThreadRecord; interruptedRunId: string | null; heldRunIds: string[]; replayed: boolean } {
    const target = this.getThread(input.threadId);
    const commandId = this.callerCommandId(caller, "thread.stop", target.id, input.clientRequestId) ?? this.newCommandId("thread.stop");
    const reason = input.reason ?? "stopped_by_request";
    const request = { threadId: target.id, reason };
    if (conflictsAsInvalid(() => this.engine.replay(commandId, "thread.stop", request)) === null) {
      this.callers.requireLiveRunForChanges(caller, "stop");
      this.callers.requireMayStop(caller, target);
      const active = activeRun(this.engine, target.id);
      const attempt = active?.currentAttemptId ? this.engine.store.get("attempt", active.currentAttemptId) : null;
      if (attempt !== null && attempt.status !== "pending" && !this.registry.capabilities(target.providerInstanceId).turns.interrupt) {
        throw new OrchestratorFailure("thread_not_interruptible", `Provider "${target.providerInstanceId}" cannot interrupt the running turn of thread ${target.id}, so it cannot be stopped; wait for the turn to end.`, {
          threadId: target.id,
          capability: "turns.interrupt",
        });
      }
    }
    const outcome = conflictsAsInvalid(() =>
      this.engine.execute({
        commandId,
        operation: "thread.stop",
        request,
        handle: (ctx) => {
          const active = activeRun(ctx, target.id);
          stopThread(ctx, target.id, reason);
          const held = ctx.store.select("run", QUEUED_RUNS_OF_THREAD, [target.id], "ORDER BY ordinal").filter((run) => run.held).map((run) => run.id);
          return { interruptedRunId: active?.id ?? null, heldRunIds: held };
        },
      }),
    );
    return { thread: this.getThread(target.id), ...outcome.result, replayed: outcome.replayed };
  }

  /** Resume after Stop, for a caller: within its ceiling; idempotent by `clientRequestId`. */
  resumeFromCaller(caller: Caller, input: { threadId: string; clientRequestId?: string }): { thread: ThreadRecord; resumedRunIds: string[]; replayed: boolean } {
    const target = this.getThread(input.threadId);
    const commandId = this.callerCommandId(caller, "thread.resume", target.id, input.clientRequestId);
    if (commandId === undefined || conflictsAsInvalid(() => this.engine.replay(commandId, "thread.resume", { threadId: target.id })) === null) {
      this.callers.requireLiveRunForChanges(caller, "resume");
      this.callers.requireTargetWithinCeiling(caller, target);
    }
    return conflictsAsInvalid(() => this.resume(target.id, commandId));
  }

  /**
   * set_thread_settled: settles a thread whose work is done (it leaves the active list, like
   * the sidebar's Settled section) or revives it. Settling is refused while the thread has
   * unfinished runs, pending requests or unfinished delegated work: stop or wait first. Another
   * thread needs the caller's live run and may not run broader than the caller. Settling a
   * settled thread (or reviving an active one) changes nothing. Idempotent by clientRequestId.
   */
  setSettledFromCaller(caller: Caller, input: { threadId: string; settled: boolean; clientRequestId?: string | undefined }): { thread: ThreadRecord; changed: boolean; replayed: boolean } {
    const target = this.getThread(input.threadId);
    const operation = "thread.set_settled";
    const commandId = this.callerCommandId(caller, operation, target.id, input.clientRequestId) ?? this.newCommandId(operation);
    const request = { threadId: target.id, settled: input.settled };
    if (conflictsAsInvalid(() => this.engine.replay(commandId, operation, request)) === null && target.id !== caller.threadId) {
      this.callers.requireLiveRunForChanges(caller, "set_thread_settled");
      this.callers.requireTargetWithinCeiling(caller, target);
    }
    const outcome = conflictsAsInvalid(() =>
      this.engine.execute({
        commandId,
        operation,
        request,
        handle: (ctx) => {
          const current = ctx.require("thread", target.id);
          const settled = (current.settledAt ?? null) !== null;
          if (settled === input.settled) return { changed: false };
          if (input.settled) refuseSettlingBusyThread(ctx, current.id);
          ctx.put("thread", { ...current, settledAt: input.settled ? ctx.now : null, updatedAt: ctx.now });
          return { changed: true };
        },
      }),
    );
    return { thread: this.getThread(target.id), changed: outcome.result.changed, replayed: outcome.replayed };
  }

  /** t3_thread_wait, capped by the server's maximum wait; an agent's thread is blocked while it runs. */
  waitFromCaller(caller: Caller, input: { threadId: string; runId?: string; timeoutMs?: number; cursor?: number; signal?: AbortSignal; onProgress?: () => void }): Promise<RunWaitResult> {
    const timeoutMs = Math.min(input.timeoutMs ?? this.config.server.maxWaitMs, this.config.server.maxWaitMs);
    const { cursor, ...rest } = input;
    return this.waitForRun({ ...rest, timeoutMs, attention: { cursor: cursor ?? 0 }, waiterThreadId: caller.kind === "agent" ? caller.threadId : null });
  }

  /**
   * create_threads: 1–20 ordinary top-level threads, each resolving provider, model and modes on
   * its own; they inherit the caller's project, branch and worktree. All or nothing.
   */
  async createThreads(
    caller: Caller,
    input: {
      threads: readonly {
        prompt?: string | undefined;
        title?: string | undefined;
        target?: TargetRequest | undefined;
        runtimeMode?: RuntimeMode | "inherit" | undefined;
        interactionMode?: InteractionMode | "inherit" | undefined;
        /** Create it as a router child of this thread (see CreateThreadRequest.parentThreadId). */
        parentThreadId?: string | undefined;
        /** With parentThreadId: deliver each finished turn to the parent (default true). */
        reportBack?: boolean | undefined;
        /** Where the thread works (Switchyard's addition): default the project's, else `shared`. */
        workspace?: WorkspaceChoice | undefined;
      }[];
      clientRequestId?: string | undefined;
      projectId?: string | undefined;
    },
  ): Promise<{ threads: { index: number; thread: ThreadRecord; runId: string | null; notes: readonly string[] }[]; replayed: boolean }> {
    if (input.threads.length < 1 || input.threads.length > 20) throw new Failure("invalid_request", "create_threads takes between 1 and 20 threads.");
    for (const [index, entry] of input.threads.entries()) {
      if (entry.reportBack !== undefined && entry.parentThreadId === undefined) {
        throw new Failure("invalid_request", `threads[${index}]: reportBack needs parentThreadId: only a child thread reports its turns to a parent.`, { index, field: "reportBack" });
      }
    }
    // Children live in their parent's project, so naming a parent names the project too.
    const firstParent = input.threads.find((entry) => entry.parentThreadId !== undefined)?.parentThreadId;
    const projectId = input.projectId === undefined && firstParent !== undefined ? this.getThread(firstParent).projectId : this.callers.workProject(caller, input.projectId).projectId;
    const project = this.engine.store.get("project", projectId)!;
    const callerThread = this.callers.thread(caller);
    const sameProject = callerThread !== null && callerThread.projectId === projectId;
    const commandId = derive.command(caller.requestScope, "create_threads", input.clientRequestId ?? this.engine.ids.random("req"));
    const request = { projectId, threads: input.threads };
    const replay = conflictsAsInvalid(() => this.engine.replay<CreatedThreads>(commandId, "create_threads", request));
    let created: CreatedThreads;
    if (replay !== null) {
      created = replay.result;
    } else {
      this.callers.requireLiveRunForChanges(caller, "create_threads");
      // A child's finished turns start turns in its parent: an agent may attach children only to
      // threads it could message itself.
      for (const [index, entry] of input.threads.entries()) {
        if (entry.parentThreadId === undefined) continue;
        try {
          this.callers.requireTargetWithinCeiling(caller, routerParent(this.engine, entry.parentThreadId, projectId, this.config.budgets));
        } catch (error) {
          if (error instanceof Failure) throw new Failure(error.code, `threads[${index}]: ${error.message}`, { ...error.details, index });
          throw error;
        }
      }
      const selections: ResolvedSelection[] = [];
      for (const [index, entry] of input.threads.entries()) {
        try {
          selections.push(
            await this.selection.resolve({
              target: entry.target,
              inherited: this.callers.inherited(caller),
              ceiling: this.callers.ceiling(caller),
              runtimeMode: entry.runtimeMode,
              interactionMode: entry.interactionMode,
            }),
          );
        } catch (error) {
          if (error instanceof Failure) throw new Failure(error.code, `threads[${index}]: ${error.message}`, { ...error.details, index });
          throw error;
        }
      }
      // Each entry's workspace, decided (and checked) before anything is created. Changes go back
      // to the parent of a child, else to the calling agent's workspace in this project, else (a
      // client's) to the project's folder.
      const plans: (WorkspacePlan | null)[] = [];
      for (const [index, entry] of input.threads.entries()) {
        const parent = entry.parentThreadId === undefined ? null : this.getThread(entry.parentThreadId);
        const from = parent ?? (sameProject ? callerThread : null);
        try {
          const planned = await this.workspaces.plan({
            choice: entry.workspace,
            threadId: derive.threadFromCommand(commandId, index),
            title: entry.title ?? titleFromMessage(entry.prompt ?? "thread"),
            source: { projectId, cwd: from?.cwd ?? project.rootPath, threadId: from?.id ?? null },
            field: `threads[${index}].workspace`,
          });
          plans.push(planned.plan);
          if (planned.notes.length > 0) selections[index] = { ...selections[index]!, notes: [...selections[index]!.notes, ...planned.notes] };
        } catch (error) {
          if (error instanceof Failure) throw new Failure(error.code, `threads[${index}]: ${error.message}`, { ...error.details, index });
          throw error;
        }
      }
      const authority = this.callers.authority(caller);
      // Threads a linked environment (or an agent it reached) creates carry where that began.
      const reachedFrom = this.origins.of(caller);
      const outcome = this.engine.execute<CreatedThreads>({
        commandId,
        operation: "create_threads",
        request,
        handle: (ctx) => {
          const ids: string[] = [];
          const runIds: (string | null)[] = [];
          for (const [index, entry] of input.threads.entries()) {
            const selection = selections[index]!;
            const threadId = derive.threadFromCommand(commandId, index);
            let parent: ThreadRecord | null = null;
            try {
              parent = entry.parentThreadId === undefined ? null : routerParent(ctx, entry.parentThreadId, projectId, this.config.budgets);
            } catch (error) {
              if (error instanceof Failure) throw new Failure(error.code, `threads[${index}]: ${error.message}`, { ...error.details, index });
              throw error;
            }
            const plan = plans[index] ?? null;
            const workspace =
              plan !== null ? this.workspaces.record(ctx, plan) : (parent ?? (sameProject ? callerThread! : { cwd: project.rootPath, branch: null, worktreePath: null, workspaceStrategy: "root" as const }));
            const thread = createThread(
              ctx,
              {
                id: threadId,
                projectId,
                title: entry.title ?? null,
                providerInstanceId: selection.providerInstanceId,
                model: selection.model,
                effort: selection.effort,
                runtimeMode: selection.runtimeMode,
                interactionMode: selection.interactionMode,
                cwd: workspace.cwd,
                branch: workspace.branch,
                worktreePath: workspace.worktreePath,
                workspaceStrategy: workspace.workspaceStrategy,
                lineage: {
                  ...(parent === null
                    ? { relationship: "root" as const, parentThreadId: null, parentRunId: null, parentNodeId: null, delegatedTaskId: null }
                    : routerChildLineage(ctx, parent, entry.reportBack ?? true)),
                  ...(reachedFrom !== null ? { reachedFrom } : {}),
                },
                createdBy: "agent",
                creationSource: creationSourceOf(caller),
                authority,
              },
              entry.prompt ?? null,
            );
            if (parent !== null) showChildInParent(ctx, parent, thread);
            let runId: string | null = null;
            if (entry.prompt !== undefined && entry.prompt !== "") {
              runId = deliverMessage(ctx, {
                threadId: thread.id,
                messageId: derive.messageFromCommand(commandId, index),
                text: entry.prompt,
                mode: "auto",
                createdBy: "agent",
                creationSource: creationSourceOf(caller),
                capabilities: selection.capabilities,
              }).runId;
            }
            ids.push(threadId);
            runIds.push(runId);
          }
          return { threadIds: ids, runIds, notes: selections.map((selection) => selection.notes) };
        },
      });
      created = outcome.result;
    }
    // A replay answers with the runs the call created, never a run queued on those threads since.
    return {
      replayed: replay !== null,
      threads: created.threadIds.map((threadId, index) => ({
        index,
        thread: this.getThread(threadId),
        runId: created.runIds !== undefined ? (created.runIds[index] ?? null) : firstRun(this.engine, threadId),
        notes: created.notes?.[index] ?? [],
      })),
    };
  }

  /** Answers a runtime request (approval decision, answers, or dismiss) from a person or client. */
  respondToRequest(requestId: string, response: RuntimeRequestResponse): RuntimeRequestRecord {
    this.engine.execute({
      commandId: `cmd:runtime-request.respond:${requestId}`,
      operation: "runtime-request.respond",
      request: { requestId, response },
      handle: (ctx) => {
        answerRuntimeRequest(ctx, requestId, response);
        return null;
      },
    });
    return this.engine.store.get("runtimeRequest", requestId)!;
  }

  /** Pending runtime requests of a thread, oldest first. */
  pendingRequests(threadId: string): RuntimeRequestRecord[] {
    this.getThread(threadId);
    return this.engine.store.select("runtimeRequest", "thread_id = ? AND status = 'pending'", [threadId], "ORDER BY rowid");
  }
}
