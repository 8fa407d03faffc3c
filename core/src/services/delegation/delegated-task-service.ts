import { inject, injectable } from "tsyringe";
import type { InteractionMode, RuntimeMode } from "../../spec/index.js";
import { TOKENS } from "../../di/tokens.js";
import type { SwitchyardConfig } from "../../config/config-schema.js";
import type { CommandContext } from "../../engine/command-context.js";
import type { Engine } from "../../engine/engine.js";
import { deliverMessage } from "../../engine/message-delivery.js";
import { conflictsAsInvalid, OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import { activeRun, finishRun, latestExecutedRun, putItem, queuedRuns, requestInterrupt } from "../../engine/run-lifecycle.js";
import { createThread, titleFromMessage } from "../../engine/thread-records.js";
import type { ProviderRegistry } from "../../providers/provider-registry.js";
import { type DelegatedTaskRecord, type DelegatedTaskRole, type RunRecord, type RuntimeRequestRecord, type StoredEvent } from "../../store/records.js";
import { environmentId } from "../../store/settings.js";
import { derive } from "../../util/ids.js";
import type { Caller } from "../caller.js";
import { CallerContext } from "../caller-context.js";
import { EventWaiter, PROGRESS_HEARTBEAT_MS } from "../event-waiter.js";
import { LiveWaits } from "../live-waits.js";
import { ProviderSelectionService, type TargetRequest } from "../provider-selection-service.js";
import { threadLink } from "../thread-views.js";
import { ROLE_INSTRUCTIONS } from "./role-instructions.js";
import { taskView, type DelegateTaskResult } from "./task-view.js";
import { finalWorkTurn, hasRemainingWork, latestContent, resultText, taskWork } from "./task-work.js";

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
    private readonly liveWaits: LiveWaits,
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
    const endLiveWait = this.liveWaits.begin({ kind: "delegate_task", waiterThreadId: task.parentThreadId, subjectId: taskId });
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
      endLiveWait();
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
    // An agent cancels its own children, never broader than it; a client token holds its ceiling.
    if (caller.kind === "client") this.callers.requireTargetWithinCeiling(caller, this.engine.store.get("thread", task.childThreadId)!);
    const why = reason ?? "cancelled_by_parent";
    const outcome = this.engine.execute({
      commandId: `cmd:task_cancel:${this.engine.ids.random("req")}`,
      operation: "delegated_task.cancel",
      request: { taskId, reason: why },
      handle: (ctx) => {
        const current = ctx.require("delegatedTask", task.id);
        const terminal = current.finalizedAt !== null;
        if (!terminal) {
          const work = taskWork(ctx, current);
          const run = work.active;
          // A run that has not reached its provider yet can always be stopped; a live one only
          // when the provider can interrupt a turn.
          const attempt = run?.currentAttemptId ? ctx.get("attempt", run.currentAttemptId) : null;
          const reachedProvider = attempt !== null && attempt.status !== "pending";
          const interruptible = run !== null && (!reachedProvider || this.registry.capabilities(current.providerInstanceId).turns.interrupt);
          if (!interruptible && work.queued.length === 0 && work.nested.length === 0) {
            throw new OrchestratorFailure(
              "task_not_cancellable",
              run !== null
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

  /**
   * Stops a task's child thread and, first, every task it delegated (depth first). The task is
   * marked cancelled before its queued turns are, so a result it settles on now already counts
   * as cancelled.
   */
  private stopTaskTree(ctx: CommandContext, taskId: string, reason: string): void {
    const task = ctx.require("delegatedTask", taskId);
    for (const nested of ctx.store.select("delegatedTask", "parent_thread_id = ?", [task.childThreadId])) this.stopTaskTree(ctx, nested.id, reason);
    const marked = ctx.require("delegatedTask", taskId);
    if (marked.cancelRequestedAt === null) ctx.put("delegatedTask", { ...marked, cancelRequestedAt: ctx.now, cancelReason: reason, delivery: marked.delivery === "pending" ? "disposed" : marked.delivery, updatedAt: ctx.now });
    stopThread(ctx, task.childThreadId, reason);
    // The task's own queued turns (its original run, follow-ups of its work) are cancelled, even
    // though Stop held them; other queued turns of the child stay held for Resume.
    for (const run of taskWork(ctx, task).queued) finishRun(ctx, run.id, "cancelled", null, reason);
  }

  // ---- reactions inside the transaction that ended a run or changed a request ----

  private onRunTerminal(ctx: CommandContext, run: RunRecord): void {
    // Stop or interrupt: the notices waiting to start a turn after this one are withdrawn, so the
    // parent is not woken; their results and questions are caught up when it next runs.
    if (run.interruptedOnRequest === true) this.withdrawQueuedNotices(ctx, run.threadId);
    // First the results and questions this thread is owed: delivering one to a child thread adds
    // known work to that child's own task, which must be seen before the task is settled.
    this.deliverPendingToParent(ctx, run.threadId);
    if (run.delegatedTaskId !== null && ctx.get("delegatedTask", run.delegatedTaskId) !== null) this.settle(ctx, run.delegatedTaskId);
    this.recordFollowUpResult(ctx, run);
  }

  /**
   * Publishes a task's result once all its known work has finished (see task-work.ts): the final
   * work turn's status and latest assistant content. The result transfer's deterministic id makes
   * this idempotent; a published result never changes.
   */
  private settle(ctx: CommandContext, taskId: string): void {
    const task = ctx.require("delegatedTask", taskId);
    if (task.finalizedAt !== null || ctx.get("contextTransfer", derive.resultTransfer(taskId)) !== null) return;
    const work = taskWork(ctx, task);
    if (hasRemainingWork(work)) return;
    const resultRun = finalWorkTurn(work)!;
    const status = task.cancelRequestedAt !== null && resultRun.status === "completed" ? "interrupted" : resultRun.status;
    const summary = resultText(latestContent(work, resultRun), resultRun.error, status);
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
    const finalized = ctx.put("delegatedTask", { ...task, status, summary, resultContextTransferId: transferId, resultRunId: resultRun.id, finalizedAt: ctx.now, updatedAt: ctx.now });
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
    // Delivered before the parent's own task is looked at: a result that starts a turn in a
    // child thread is more known work of that child's task.
    if (finalized.delivery === "pending" && activeRun(ctx, task.parentThreadId) === null && acceptsAutomaticTurn(ctx, task.parentThreadId)) this.deliverResult(ctx, finalized);
    const parentTaskId = ctx.get("thread", task.parentThreadId)?.lineage.delegatedTaskId ?? null;
    if (parentTaskId !== null && ctx.get("delegatedTask", parentTaskId) !== null) this.settle(ctx, parentTaskId);
  }

  /**
   * A later turn of a child thread that is not part of the task's known work (a follow-up sent
   * with t3_thread_send, a turn after the task was published) gets its own result transfer, which
   * latestTerminal* report; the published result stays as it is.
   */
  private recordFollowUpResult(ctx: CommandContext, run: RunRecord): void {
    const taskId = ctx.get("thread", run.threadId)?.lineage.delegatedTaskId ?? null;
    const task = taskId === null ? null : ctx.get("delegatedTask", taskId);
    if (task === null || run.delegatedTaskId === task.id || run.startedAt === null) return;
    const original = ctx.get("run", task.childRunId);
    if (original === null || run.ordinal <= original.ordinal) return;
    const id = derive.followUpResultTransfer(task.id, run.id);
    if (ctx.get("contextTransfer", id) !== null) return;
    ctx.put("contextTransfer", {
      id,
      kind: "subagent_result",
      sourceThreadId: task.childThreadId,
      targetThreadId: task.parentThreadId,
      strategy: "result",
      status: "consumed",
      content: resultText(run.summary?.trim() ?? "", run.error, run.status),
      delegatedTaskId: task.id,
      createdAt: ctx.now,
      consumedAt: ctx.now,
    });
  }

  /** The unfinalized task a thread works for, whose known work a notice to it becomes. */
  private openTaskOf(ctx: CommandContext, threadId: string): string | null {
    const taskId = ctx.get("thread", threadId)?.lineage.delegatedTaskId ?? null;
    if (taskId === null) return null;
    const task = ctx.get("delegatedTask", taskId);
    return task !== null && task.finalizedAt === null ? task.id : null;
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
      delegatedTaskId: this.openTaskOf(ctx, parent.id),
      deliversResultOf: task.id,
      capabilities: this.registry.capabilities(parent.providerInstanceId),
    });
    ctx.put("delegatedTask", { ...ctx.require("delegatedTask", task.id), delivery: "delivered", updatedAt: ctx.now });
  }

  /** When a parent's run ends: deliver finished results and questions it has not seen. */
  private deliverPendingToParent(ctx: CommandContext, parentThreadId: string): void {
    if (activeRun(ctx, parentThreadId) !== null || !acceptsAutomaticTurn(ctx, parentThreadId)) return;
    for (const task of ctx.store.select("delegatedTask", "parent_thread_id = ?", [parentThreadId])) {
      if (task.finalizedAt !== null && task.delivery === "pending") this.deliverResult(ctx, task);
      if (task.finalizedAt !== null) continue;
      for (const request of ctx.store.select("runtimeRequest", "thread_id = ? AND status = 'pending'", [task.childThreadId])) {
        if (request.kind === "user_input" && (request.parentNotice === null || request.parentNotice.mode === "wait")) this.noticeParent(ctx, request, task, true);
      }
    }
  }

  /**
   * Withdraws the result and question notices queued to start turns in a thread whose run was
   * stopped or interrupted: they become pending again, for the thread's next run.
   */
  private withdrawQueuedNotices(ctx: CommandContext, threadId: string): void {
    for (const run of queuedRuns(ctx, threadId)) {
      if (run.kind !== "notification") continue;
      if (run.deliversResultOf != null) {
        const task = ctx.get("delegatedTask", run.deliversResultOf);
        // A cancelled task's automatic delivery stays disposed.
        if (task !== null && task.delivery === "delivered") ctx.put("delegatedTask", { ...task, delivery: task.cancelRequestedAt === null ? "pending" : "disposed", updatedAt: ctx.now });
      } else if (run.notifiesRequestId !== null) {
        const request = ctx.get("runtimeRequest", run.notifiesRequestId);
        if (request !== null && request.status === "pending") ctx.put("runtimeRequest", { ...request, parentNotice: null });
      } else {
        continue;
      }
      finishRun(ctx, run.id, "cancelled", null, "parent_stopped");
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
      // A parent that was stopped or interrupted is not woken; the question is caught up when it
      // next runs (it stays without a notice until then).
      if (!acceptsAutomaticTurn(ctx, task.parentThreadId)) return;
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
      delegatedTaskId: this.openTaskOf(ctx, parent.id),
      capabilities: this.registry.capabilities(parent.providerInstanceId),
    });
    const mode = delivery.delivery === "steered" ? "steered" : delivery.delivery === "started" ? "started" : "queued";
    ctx.put("runtimeRequest", { ...ctx.require("runtimeRequest", request.id), parentNotice: { mode, runId: delivery.runId } });
  }
}

/**
 * Whether the system may start a turn in a thread on its own (a result wake, a question notice
 * or catch-up). Not after the user (or an agent, or task_cancel) stopped or interrupted its
 * latest run, and not while Stop holds it: the results stay readable with task_status and reach
 * the thread when it next runs for another reason.
 */
function acceptsAutomaticTurn(ctx: CommandContext, threadId: string): boolean {
  const thread = ctx.get("thread", threadId);
  if (thread === null || thread.deletedAt !== null || thread.stopped) return false;
  return latestExecutedRun(ctx, threadId)?.interruptedOnRequest !== true;
}

/**
 * Stop, like the user's Stop button: interrupts the running turn (hard), holds queued turns
 * until Resume or the next explicit send, and marks the thread stopped.
 */
export function stopThread(ctx: CommandContext, threadId: string, reason: string): void {
  // Stopped and held first: a turn that ends at once (it never reached its provider) must not
  // hand the thread to the next queued run.
  ctx.put("thread", { ...ctx.require("thread", threadId), stopped: true, updatedAt: ctx.now });
  for (const run of queuedRuns(ctx, threadId)) if (!run.held) ctx.put("run", { ...run, held: true });
  const active = activeRun(ctx, threadId);
  if (active !== null) requestInterrupt(ctx, active.id, reason, true);
}
