import { inject, injectable } from "tsyringe";
import type { InteractionMode, RuntimeMode } from "../../spec/index.js";
import { TOKENS } from "../../di/tokens.js";
import type { SwitchyardConfig } from "../../config/config-schema.js";
import type { CommandContext } from "../../engine/command-context.js";
import type { Engine } from "../../engine/engine.js";
import { deliverMessage } from "../../engine/message-delivery.js";
import { conflictsAsInvalid, OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import { activeRun, finishRun, putItem, queuedRuns, requestInterrupt } from "../../engine/run-lifecycle.js";
import { createThread, titleFromMessage } from "../../engine/thread-records.js";
import type { ProviderRegistry } from "../../providers/provider-registry.js";
import { isTerminalRunStatus, type DelegatedTaskRecord, type DelegatedTaskRole, type RunRecord, type RuntimeRequestRecord, type StoredEvent } from "../../store/records.js";
import { environmentId } from "../../store/settings.js";
import { derive } from "../../util/ids.js";
import type { Caller } from "../caller.js";
import { CallerContext } from "../caller-context.js";
import { EventWaiter, PROGRESS_HEARTBEAT_MS } from "../event-waiter.js";
import { ProviderSelectionService, type TargetRequest } from "../provider-selection-service.js";
import { threadLink } from "../thread-views.js";
import { ROLE_INSTRUCTIONS } from "./role-instructions.js";
import { openNestedTasks, taskView, type DelegateTaskResult } from "./task-view.js";

/** seed 000 `DelegateTaskInput`. */
export interface DelegateTaskInput {
  readonly task: string;
  readonly target?: TargetRequest | undefined;
  readonly title?: string | undefined;
  readonly role?: DelegatedTaskRole | undefined;
  readonly mode?: "async" | "wait" | undefined;
  readonly timeoutMs?: number | undefined;
  readonly clientRequestId?: string | undefined;
  readonly runtimeMode?: RuntimeMode | "inherit" | undefined;
  readonly interactionMode?: InteractionMode | "inherit" | undefined;
}

/** How a wait reports that it is still waiting. */
export interface WaitControl {
  readonly signal?: AbortSignal;
  readonly onProgress?: (message: string) => void;
}

const MAX_RESULT_IN_WAKE = 4_000;

/**
 * Delegated tasks: an orchestrator-owned child thread per task, its durable result, and the
 * delivery of that result to the parent. MCP is only an ingress; the lifecycle is commands and
 * in-transaction reactions, so finalization happens exactly once, also across restarts.
 */
@injectable()
export class DelegatedTaskService {
  /** Tasks a parent is blocked waiting on right now: their questions reach it through the wait. */
  private readonly activeWaits = new Map<string, number>();

  constructor(
    @inject(TOKENS.Engine) private readonly engine: Engine,
    @inject(TOKENS.ProviderRegistry) private readonly registry: ProviderRegistry,
    @inject(TOKENS.Config) private readonly config: SwitchyardConfig,
    private readonly selection: ProviderSelectionService,
    private readonly callers: CallerContext,
    private readonly waiter: EventWaiter,
  ) {
    engine.hooks.runTerminal.push((ctx, run) => this.onRunTerminal(ctx, run));
    engine.hooks.runtimeRequestChanged.push((ctx, requestId) => this.onRuntimeRequestChanged(ctx, requestId));
  }

  private get environmentId(): string {
    return environmentId(this.engine.store);
  }

  /** The view of a task right now. */
  view(taskId: string, waitTimedOut = false): DelegateTaskResult {
    const task = this.engine.store.get("delegatedTask", taskId);
    if (task === null) throw new OrchestratorFailure("task_not_found", `Task ${taskId} does not exist.`, { taskId });
    return taskView(this.engine, task, this.environmentId, waitTimedOut);
  }

  /** Reads a task the caller may see: its own (agents), any (clients). */
  private taskFor(caller: Caller, taskId: string): DelegatedTaskRecord {
    const task = this.engine.store.get("delegatedTask", taskId);
    if (task === null || (caller.kind === "agent" && task.parentThreadId !== caller.threadId)) {
      throw new OrchestratorFailure("task_not_found", `Task ${taskId} does not exist${caller.kind === "agent" ? " among the tasks your thread delegated (an agent sees only its own tasks)" : ""}.`, { taskId });
    }
    return task;
  }

  /** delegate_task: creates the child thread and dispatches the task; `wait` blocks up to the cap. */
  async delegate(caller: Caller, input: DelegateTaskInput, control: WaitControl = {}): Promise<DelegateTaskResult> {
    if (caller.kind !== "agent") {
      throw new OrchestratorFailure("parent_not_active", "delegate_task needs a parent run: call it from an agent in a Switchyard thread. Outside clients can use create_threads instead.");
    }
    const requestKey = input.clientRequestId ?? this.engine.ids.random("req");
    const commandId = derive.command(caller.requestScope, "delegate_task", requestKey);
    const request = { task: input.task, target: input.target ?? null, title: input.title ?? null, role: input.role ?? null, runtimeMode: input.runtimeMode ?? null, interactionMode: input.interactionMode ?? null };
    const replay = conflictsAsInvalid(() => this.engine.replay<{ taskId: string }>(commandId, "delegated_task.request", request));
    let taskId: string;
    if (replay !== null) {
      taskId = replay.result.taskId;
    } else {
      const parentRun = this.callers.liveRun(caller);
      if (parentRun === null) {
        throw new OrchestratorFailure("parent_not_active", "delegate_task needs an active parent run owned by this credential's provider session; call it during a turn.");
      }
      const selection = await this.selection.resolve({
        target: input.target,
        inherited: this.callers.inherited(caller),
        ceiling: this.callers.ceiling(caller),
        runtimeMode: input.runtimeMode,
        interactionMode: input.interactionMode,
      });
      const outcome = this.engine.execute({
        commandId,
        operation: "delegated_task.request",
        request,
        handle: (ctx) => this.request(ctx, caller, input, selection),
      });
      taskId = outcome.result.taskId;
    }
    if (input.mode !== "wait") return this.view(taskId);
    return this.waitForTask(taskId, input.timeoutMs, control);
  }

  private request(
    ctx: CommandContext,
    caller: Caller,
    input: DelegateTaskInput,
    selection: Awaited<ReturnType<ProviderSelectionService["resolve"]>>,
  ): { taskId: string } {
    const commandId = ctx.commandId!;
    const parentRun = this.callers.liveRun(caller);
    if (parentRun === null) throw new OrchestratorFailure("parent_not_active", "The parent run ended before the task could be created.");
    const parent = ctx.require("thread", parentRun.threadId);
    this.checkBudgets(ctx, parent.lineage.depth + 1, parentRun.id, parent.lineage.rootThreadId);

    const taskId = derive.delegatedTask(commandId);
    const childThreadId = derive.delegatedThread(commandId);
    const childNodeId = derive.delegatedNode(commandId);
    const parentNodeId = derive.runNode(parentRun.id);
    const parentItemId = derive.delegatedItem(commandId);
    const spawnTransferId = derive.spawnTransfer(commandId);
    const title = input.title ?? titleFromMessage(input.task);

    createThread(ctx, {
      id: childThreadId,
      projectId: parent.projectId,
      title,
      providerInstanceId: selection.providerInstanceId,
      model: selection.model,
      runtimeMode: selection.runtimeMode,
      interactionMode: selection.interactionMode,
      cwd: parent.cwd,
      branch: parent.branch,
      worktreePath: parent.worktreePath,
      workspaceStrategy: parent.workspaceStrategy,
      lineage: {
        relationship: "subagent",
        parentThreadId: parent.id,
        parentRunId: parentRun.id,
        parentNodeId,
        delegatedTaskId: taskId,
        depth: parent.lineage.depth + 1,
        rootThreadId: parent.lineage.rootThreadId,
      },
      createdBy: "agent",
      creationSource: "mcp",
    });
    ctx.put("contextTransfer", {
      id: spawnTransferId,
      kind: "subagent_spawn",
      sourceThreadId: parent.id,
      targetThreadId: childThreadId,
      strategy: "prompt_only",
      status: "consumed",
      content: input.task,
      delegatedTaskId: taskId,
      createdAt: ctx.now,
      consumedAt: ctx.now,
    });
    const delivery = deliverMessage(ctx, {
      threadId: childThreadId,
      messageId: derive.messageFromCommand(commandId),
      text: input.task,
      mode: "auto",
      createdBy: "agent",
      creationSource: "mcp",
      instructions: input.role === undefined ? null : ROLE_INSTRUCTIONS[input.role],
      delegatedTaskId: taskId,
      capabilities: selection.capabilities,
    });
    ctx.put("node", { id: childNodeId, threadId: childThreadId, runId: delivery.runId, kind: "subagent", parentNodeId, status: "queued", createdAt: ctx.now, updatedAt: ctx.now });
    const task: DelegatedTaskRecord = {
      id: taskId,
      parentThreadId: parent.id,
      parentRunId: parentRun.id,
      parentNodeId,
      parentItemId,
      childThreadId,
      childRunId: delivery.runId,
      childNodeId,
      providerInstanceId: selection.providerInstanceId,
      model: selection.model,
      role: input.role ?? null,
      title,
      task: input.task,
      status: ctx.require("run", delivery.runId).status,
      summary: null,
      spawnContextTransferId: spawnTransferId,
      resultContextTransferId: null,
      finalizedAt: null,
      cancelRequestedAt: null,
      cancelReason: null,
      rootThreadId: parent.lineage.rootThreadId,
      depth: parent.lineage.depth + 1,
      requestScope: caller.requestScope,
      delivery: "pending",
      createdAt: ctx.now,
      updatedAt: ctx.now,
    };
    ctx.put("delegatedTask", task);
    putItem(ctx, {
      id: parentItemId,
      threadId: parent.id,
      runId: parentRun.id,
      attemptId: parentRun.currentAttemptId,
      kind: "subagent",
      status: "in_progress",
      text: title,
      data: { origin: "app_owned", taskId, childThreadId, providerInstanceId: selection.providerInstanceId, model: selection.model, role: input.role ?? null, notes: selection.notes },
      createdBy: "agent",
      creationSource: "mcp",
    });
    return { taskId };
  }

  private checkBudgets(ctx: CommandContext, depth: number, parentRunId: string, rootThreadId: string): void {
    const budgets = this.config.budgets;
    if (depth > budgets.maxDelegationDepth) {
      throw new OrchestratorFailure("invalid_request", `Delegation depth ${depth} exceeds the budget of ${budgets.maxDelegationDepth} (budgets.maxDelegationDepth); finish this work here instead of delegating further.`, {
        budget: "maxDelegationDepth",
        limit: budgets.maxDelegationDepth,
      });
    }
    const running = ctx.store.select("delegatedTask", "parent_run_id = ?", [parentRunId]).filter((task) => task.finalizedAt === null).length;
    if (running >= budgets.maxConcurrentChildrenPerRun) {
      throw new OrchestratorFailure("invalid_request", `This run already has ${running} unfinished delegated tasks, the budget (budgets.maxConcurrentChildrenPerRun); wait for one with task_status or delegate_task mode "wait" before starting another.`, {
        budget: "maxConcurrentChildrenPerRun",
        limit: budgets.maxConcurrentChildrenPerRun,
      });
    }
    const total = ctx.store.count("delegatedTask", "root_thread_id = ?", [rootThreadId]);
    if (total >= budgets.maxTasksPerRootThread) {
      throw new OrchestratorFailure("invalid_request", `This thread tree has already delegated ${total} tasks, the budget (budgets.maxTasksPerRootThread).`, {
        budget: "maxTasksPerRootThread",
        limit: budgets.maxTasksPerRootThread,
      });
    }
  }

  /** Waits (up to the server cap) for a result, a blocking question or a pending approval. */
  async waitForTask(taskId: string, timeoutMs: number | undefined, control: WaitControl): Promise<DelegateTaskResult> {
    const task = this.engine.store.get("delegatedTask", taskId)!;
    const limit = Math.min(timeoutMs ?? this.config.server.maxWaitMs, this.config.server.maxWaitMs);
    const isDone = (view: DelegateTaskResult) => view.workState === "result_available" || view.hasPendingQuestion || view.pendingApproval !== null;
    this.activeWaits.set(taskId, (this.activeWaits.get(taskId) ?? 0) + 1);
    let lastProgress = 0;
    try {
      const done = await this.waiter.waitFor(
        () => {
          const view = this.view(taskId);
          return isDone(view) ? view : null;
        },
        {
          timeoutMs: limit,
          ...(control.signal ? { signal: control.signal } : {}),
          relevant: (event: StoredEvent) => event.threadId === task.childThreadId || event.entity === "delegatedTask",
          heartbeatMs: PROGRESS_HEARTBEAT_MS,
          onProgress: () => {
            const now = Date.now();
            if (now - lastProgress < 1_000) return;
            lastProgress = now;
            control.onProgress?.(`task ${taskId}: ${this.view(taskId).status}`);
          },
        },
      );
      if (done === null) return this.view(taskId, true);
      if (done.workState === "result_available") this.acknowledge(taskId);
      return done;
    } finally {
      const remaining = (this.activeWaits.get(taskId) ?? 1) - 1;
      if (remaining <= 0) this.activeWaits.delete(taskId);
      else this.activeWaits.set(taskId, remaining);
    }
  }

  /** The parent read the published result: no wake message is needed for it. */
  private acknowledge(taskId: string): void {
    this.engine.apply((ctx) => {
      const task = ctx.get("delegatedTask", taskId);
      if (task !== null && task.finalizedAt !== null && task.delivery === "pending") ctx.put("delegatedTask", { ...task, delivery: "acknowledged", updatedAt: ctx.now });
    });
  }

  /** task_status: the durable state; reading a terminal result acknowledges it. */
  status(caller: Caller, taskId: string): DelegateTaskResult {
    const task = this.taskFor(caller, taskId);
    const view = this.view(task.id);
    if (view.workState === "result_available" && caller.kind === "agent") this.acknowledge(task.id);
    return view;
  }

  /**
   * task_cancel: stops the tasks the child delegated, then the child thread (interrupt the
   * running turn, hold queued turns), cancels the task's own queued turn, and disposes automatic
   * parent delivery. A terminal task keeps its result; its child thread still stops.
   */
  cancel(caller: Caller, taskId: string, reason: string | undefined): DelegateTaskResult & { cancelled: boolean; reason: string } {
    const task = this.taskFor(caller, taskId);
    this.callers.requireLiveRunForChanges(caller, "task_cancel");
    const why = reason ?? "cancelled_by_parent";
    const outcome = this.engine.execute({
      commandId: `cmd:task_cancel:${this.engine.ids.random("req")}`,
      operation: "delegated_task.cancel",
      request: { taskId, reason: why },
      handle: (ctx) => {
        const current = ctx.require("delegatedTask", task.id);
        const terminal = current.finalizedAt !== null;
        if (!terminal) {
          const run = ctx.require("run", current.childRunId);
          const nested = openNestedTasks(ctx, current.childThreadId);
          const active = run.status === "starting" || run.status === "running" || run.status === "waiting";
          // A run that has not reached its provider yet can always be stopped; a live one only
          // when the provider can interrupt a turn.
          const attempt = run.currentAttemptId === null ? null : ctx.get("attempt", run.currentAttemptId);
          const reachedProvider = attempt !== null && attempt.status !== "pending";
          const interruptible = active && (!reachedProvider || this.registry.capabilities(current.providerInstanceId).turns.interrupt);
          if (!interruptible && run.status !== "queued" && nested.length === 0) {
            throw new OrchestratorFailure(
              "task_not_cancellable",
              active
                ? `Task ${task.id} runs on provider "${current.providerInstanceId}", which cannot interrupt a running turn, and has no queued turn or delegated work to stop; wait for it with task_status.`
                : `Task ${task.id} has no interruptible run, no queued turn and no unfinished delegated work; its result is being published.`,
              { taskId },
            );
          }
        }
        this.stopTaskTree(ctx, current.id, why);
        const latest = ctx.require("delegatedTask", task.id);
        ctx.put("delegatedTask", { ...latest, delivery: latest.delivery === "pending" ? "disposed" : latest.delivery, cancelRequestedAt: latest.cancelRequestedAt ?? ctx.now, cancelReason: why, updatedAt: ctx.now });
        return { cancelled: !terminal };
      },
    });
    return { ...this.view(task.id), cancelled: outcome.result.cancelled, reason: why };
  }

  /** Stops a task's child thread and, first, every task it delegated (depth first). */
  private stopTaskTree(ctx: CommandContext, taskId: string, reason: string): void {
    const task = ctx.require("delegatedTask", taskId);
    for (const nested of ctx.store.select("delegatedTask", "parent_thread_id = ?", [task.childThreadId])) this.stopTaskTree(ctx, nested.id, reason);
    const ownRun = ctx.require("run", task.childRunId);
    if (ownRun.status === "queued") finishRun(ctx, ownRun.id, "cancelled", null, reason);
    stopThread(ctx, task.childThreadId, reason);
    const latest = ctx.require("delegatedTask", taskId);
    if (latest.cancelRequestedAt === null) ctx.put("delegatedTask", { ...latest, cancelRequestedAt: ctx.now, cancelReason: reason, delivery: latest.delivery === "pending" ? "disposed" : latest.delivery, updatedAt: ctx.now });
  }

  // ---- reactions inside the transaction that ended a run or changed a request ----

  private onRunTerminal(ctx: CommandContext, run: RunRecord): void {
    if (run.delegatedTaskId !== null) {
      const task = ctx.get("delegatedTask", run.delegatedTaskId);
      if (task !== null && task.childRunId === run.id) this.finalize(ctx, task.id);
    }
    this.deliverPendingToParent(ctx, run.threadId);
  }

  /**
   * Publishes a task's result once its original run and all its nested work have finished.
   * The result transfer's deterministic id makes this idempotent.
   */
  private finalize(ctx: CommandContext, taskId: string): void {
    const task = ctx.require("delegatedTask", taskId);
    if (task.finalizedAt !== null || ctx.get("contextTransfer", derive.resultTransfer(taskId)) !== null) return;
    const run = ctx.require("run", task.childRunId);
    if (!isTerminalRunStatus(run.status)) return;
    if (openNestedTasks(ctx, task.childThreadId).length > 0) {
      if (task.status !== run.status) ctx.put("delegatedTask", { ...task, status: run.status, updatedAt: ctx.now });
      return;
    }
    const status = task.cancelRequestedAt !== null && run.status === "completed" ? "interrupted" : run.status;
    const summary = resultSummary(run, status);
    const transferId = derive.resultTransfer(taskId);
    ctx.put("contextTransfer", {
      id: transferId,
      kind: "subagent_result",
      sourceThreadId: task.childThreadId,
      targetThreadId: task.parentThreadId,
      strategy: "result",
      status: "consumed",
      content: summary,
      delegatedTaskId: taskId,
      createdAt: ctx.now,
      consumedAt: ctx.now,
    });
    const finalized = ctx.put("delegatedTask", { ...task, status, summary, resultContextTransferId: transferId, finalizedAt: ctx.now, updatedAt: ctx.now });
    const node = ctx.get("node", task.childNodeId);
    if (node !== null) ctx.put("node", { ...node, status, updatedAt: ctx.now });
    const item = ctx.get("item", task.parentItemId);
    if (item !== null) {
      ctx.put("item", {
        ...item,
        status: status === "completed" ? "completed" : status === "failed" ? "failed" : "cancelled",
        data: { ...item.data, status, summary: summary.length > 1_000 ? `${summary.slice(0, 1_000)}…` : summary, resultContextTransferId: transferId },
        updatedAt: ctx.now,
      });
    }
    // The parent's own task may have been waiting on this nested work.
    const parentThread = ctx.get("thread", task.parentThreadId);
    if (parentThread?.lineage.delegatedTaskId) this.finalize(ctx, parentThread.lineage.delegatedTaskId);
    if (finalized.delivery === "pending" && activeRun(ctx, task.parentThreadId) === null) this.deliverResult(ctx, finalized);
  }

  /** Wakes an idle parent with a finished task's result (a queued notification message). */
  private deliverResult(ctx: CommandContext, task: DelegatedTaskRecord): void {
    const parent = ctx.get("thread", task.parentThreadId);
    if (parent === null || parent.deletedAt !== null) return;
    const summary = (task.summary ?? "").length > MAX_RESULT_IN_WAKE ? `${task.summary!.slice(0, MAX_RESULT_IN_WAKE)}…` : (task.summary ?? "");
    const text = [
      `Delegated task "${task.title}" (${threadLink(environmentId(ctx.store), task.childThreadId)}) finished with status ${task.status}.`,
      "",
      "Result:",
      summary === "" ? "(no text)" : summary,
      "",
      `Call task_status with taskId ${task.id} for details.`,
    ].join("\n");
    deliverMessage(ctx, {
      threadId: parent.id,
      messageId: `message:task-result:${task.id}`,
      text,
      mode: "queue",
      createdBy: "system",
      creationSource: "system",
      kind: "notification",
      capabilities: this.registry.capabilities(parent.providerInstanceId),
    });
    ctx.put("delegatedTask", { ...ctx.require("delegatedTask", task.id), delivery: "delivered", updatedAt: ctx.now });
  }

  /** When a parent's run ends: deliver finished results and questions it has not seen. */
  private deliverPendingToParent(ctx: CommandContext, parentThreadId: string): void {
    if (activeRun(ctx, parentThreadId) !== null) return;
    for (const task of ctx.store.select("delegatedTask", "parent_thread_id = ?", [parentThreadId])) {
      if (task.finalizedAt !== null && task.delivery === "pending") this.deliverResult(ctx, task);
      if (task.finalizedAt !== null) continue;
      for (const request of ctx.store.select("runtimeRequest", "thread_id = ? AND status = 'pending'", [task.childThreadId])) {
        if (request.kind === "user_input" && (request.parentNotice === null || request.parentNotice.mode === "wait")) this.noticeParent(ctx, request, task, true);
      }
    }
  }

  private onRuntimeRequestChanged(ctx: CommandContext, requestId: string): void {
    const request = ctx.get("runtimeRequest", requestId);
    if (request === null || request.kind !== "user_input") return; // approvals are not routed to parents
    const child = ctx.get("thread", request.threadId);
    if (child === null || child.lineage.relationship !== "subagent" || child.lineage.delegatedTaskId === null) return;
    const task = ctx.get("delegatedTask", child.lineage.delegatedTaskId);
    if (task === null) return;
    if (request.status === "pending") {
      if (request.parentNotice !== null) return;
      if ((this.activeWaits.get(task.id) ?? 0) > 0 && request.blocking) {
        ctx.put("runtimeRequest", { ...request, parentNotice: { mode: "wait", runId: null } });
        return;
      }
      this.noticeParent(ctx, request, task, false);
      return;
    }
    // Answered or dismissed before a queued notice started: the notice is moot.
    const notice = request.parentNotice;
    if (notice?.mode === "queued" && notice.runId !== null) {
      const run = ctx.get("run", notice.runId);
      if (run !== null && run.status === "queued") finishRun(ctx, run.id, "cancelled", null, "question_answered");
    }
  }

  /** Tells the parent about a child's question: steered into its live turn when it can, else queued. */
  private noticeParent(ctx: CommandContext, request: RuntimeRequestRecord, task: DelegatedTaskRecord, afterParentRun: boolean): void {
    const parent = ctx.get("thread", task.parentThreadId);
    if (parent === null || parent.deletedAt !== null) return;
    const questions = request.request.kind === "user_input" ? request.request.questions.map((q) => q.question).join(" / ") : "";
    const state = request.blocking ? "is blocked until it gets an answer" : "is still working";
    const text = [
      `Sub-agent "${task.title}" (${threadLink(environmentId(ctx.store), task.childThreadId)}) asks: ${questions}`,
      `It ${state}. Answer with t3_pending_request (threadId ${task.childThreadId}, action "respond", requestId ${request.id}), or ask the user.`,
    ].join("\n");
    const delivery = deliverMessage(ctx, {
      threadId: parent.id,
      messageId: `message:question:${request.id}${afterParentRun ? ":catch-up" : ""}`,
      text,
      mode: "auto",
      createdBy: "system",
      creationSource: "system",
      kind: "notification",
      notifiesRequestId: request.id,
      capabilities: this.registry.capabilities(parent.providerInstanceId),
    });
    const mode = delivery.delivery === "steered" ? "steered" : delivery.delivery === "started" ? "started" : "queued";
    ctx.put("runtimeRequest", { ...ctx.require("runtimeRequest", request.id), parentNotice: { mode, runId: delivery.runId } });
  }
}

/** A failed run shows its provider error first; a successful one its latest assistant content. */
export function resultSummary(run: RunRecord, status: RunRecord["status"]): string {
  const progress = run.summary?.trim() ?? "";
  if (status === "failed") {
    const error = run.error?.message ?? "The provider reported a failure without a message.";
    return progress === "" ? `Error: ${error}` : `Error: ${error}\n\nProgress before the failure:\n${progress}`;
  }
  if (status === "completed") return progress;
  return progress === "" ? `(${status}; no result text)` : `(${status}) ${progress}`;
}

/**
 * Stop, like the user's Stop button: interrupts the running turn (hard), holds queued turns
 * until the next explicit send, and marks the thread stopped.
 */
export function stopThread(ctx: CommandContext, threadId: string, reason: string): void {
  const active = activeRun(ctx, threadId);
  if (active !== null) requestInterrupt(ctx, active.id, reason, true);
  for (const run of queuedRuns(ctx, threadId)) if (!run.held) ctx.put("run", { ...run, held: true });
  ctx.put("thread", { ...ctx.require("thread", threadId), stopped: true, updatedAt: ctx.now });
}
