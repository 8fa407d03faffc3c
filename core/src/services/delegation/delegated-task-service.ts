import { inject, injectable } from "tsyringe";
import type { InteractionMode, RuntimeMode } from "../../spec/index.js";
import { PolicyToken, type Policy } from "../../policy/policy-token.js";
import { type SwitchyardConfig, type TreeBudgetConfig, ConfigToken } from "../../config/config-schema.js";
import type { CommandContext } from "../../engine/command-context.js";
import { type Engine, EngineToken } from "../../engine/ports.js";
import { deliverMessage } from "../../engine/message-delivery.js";
import { conflictsAsInvalid, OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import { putItem, stoppableRun, type ProjectionReader } from "../../engine/run-lifecycle.js";
import { createThread, titleFromMessage } from "../../engine/thread-records.js";
import { type ProviderCatalog, ProviderCatalogToken } from "../../engine/provider-catalog.js";
import { isTerminalRunStatus, type DelegatedTaskRecord, type DelegatedTaskRole, type StoredEvent, type ThreadRecord } from "../../store/records.js";
import { environmentId } from "../../store/settings.js";
import { derive } from "../../util/ids.js";
import type { Caller } from "../caller.js";
import { CallerContext } from "../caller-context.js";
import { EventWaiter, PROGRESS_HEARTBEAT_MS } from "../event-waiter.js";
import { LiveWaits } from "../live-waits.js";
import { ProviderSelectionService, type TargetRequest } from "../provider-selection-service.js";
import { attachedSessionRunKey, ensureAttachedThread } from "../attached-threads.js";
import { ROLE_INSTRUCTIONS } from "./role-instructions.js";
import { taskView, type DelegateTaskResult } from "./task-view.js";
import { taskWork } from "./task-work.js";
import { stopTaskTree } from "./task-stop.js";
import { TreeBudgets } from "../usage/tree-budgets.js";
import { UsageService } from "../usage/usage-service.js";
import { WorkspacePlanner, type WorkspaceChoice, type WorkspacePlan } from "../workspaces/workspace-planner.js";
import { ChangeSetService } from "../workspaces/change-set-service.js";

/** seed 000 `DelegateTaskInput`. */
export interface DelegateTaskInput {
  readonly task: string;
  readonly target?: TargetRequest | undefined;
  /** The project the child works in (its root); default the parent's project and workspace. */
  readonly projectId?: string | undefined;
  readonly title?: string | undefined;
  readonly role?: DelegatedTaskRole | undefined;
  readonly mode?: "async" | "wait" | undefined;
  readonly timeoutMs?: number | undefined;
  readonly clientRequestId?: string | undefined;
  readonly runtimeMode?: RuntimeMode | "inherit" | undefined;
  readonly interactionMode?: InteractionMode | "inherit" | undefined;
  /** Limits on the task's whole tree; each must fit in what is left of the budgets above it (Switchyard's addition). */
  readonly budget?: TreeBudgetConfig | undefined;
  /** Where the child works (Switchyard's addition): default the project's, else `shared` (the parent's workspace). */
  readonly workspace?: WorkspaceChoice | undefined;
}

/** How a wait reports that it is still waiting. */
export interface WaitControl {
  readonly signal?: AbortSignal;
  readonly onProgress?: (message: string) => void;
}

/**
 * Delegated tasks: an orchestrator-owned child thread per task, its durable result, and the
 * delivery of that result to the parent. MCP is only an ingress; the lifecycle is commands
 * (here) and in-transaction reactions (the delegation saga, `delegation-saga.ts`, which the
 * composition root hands to the engine), so finalization happens exactly once, also across
 * restarts.
 */
@injectable()
export class DelegatedTaskService {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(ProviderCatalogToken) private readonly registry: ProviderCatalog,
    @inject(ConfigToken) private readonly config: SwitchyardConfig,
    @inject(PolicyToken) private readonly policy: Policy,
    private readonly selection: ProviderSelectionService,
    private readonly callers: CallerContext,
    private readonly waiter: EventWaiter,
    private readonly liveWaits: LiveWaits,
    private readonly treeBudgets: TreeBudgets,
    private readonly usage: UsageService,
    private readonly workspaces: WorkspacePlanner,
    private readonly changeSets: ChangeSetService,
  ) {}

  private get environmentId(): string {
    return environmentId(this.engine.store);
  }

  /** The view of a task right now, with its usage and budget. */
  view(taskId: string, waitTimedOut = false): DelegateTaskResult {
    return this.withUsage(this.leanView(taskId, waitTimedOut));
  }

  /** The seed's fields only (what a wait re-reads on every event). */
  private leanView(taskId: string, waitTimedOut = false): DelegateTaskResult {
    const task = this.engine.store.get("delegatedTask", taskId);
    if (task === null) throw new OrchestratorFailure("task_not_found", `Task ${taskId} does not exist.`, { taskId });
    return taskView(this.engine, task, this.environmentId, waitTimedOut);
  }

  /** Adds the task's usage (own and whole tree), its budget, the budget that stopped it, and the child's change set. */
  private withUsage(view: DelegateTaskResult): DelegateTaskResult {
    const task = this.engine.store.get("delegatedTask", view.taskId)!;
    return { ...view, usage: this.usage.task(task.id), budget: this.usage.taskBudget(task.id), budgetStop: this.usage.budgetStopOf(task), changes: this.changeSets.view(task.childThreadId) };
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
    if (caller.kind !== "agent" && (caller.kind !== "client" || caller.attachment === undefined)) {
      throw new OrchestratorFailure(
        "parent_not_active",
        "delegate_task needs a parent: call it from an agent in a Switchyard thread, or over MCP from your own agent (switchyard connect gives its session a thread). Other clients can use create_threads instead.",
      );
    }
    const requestKey = input.clientRequestId ?? this.engine.ids.random("req");
    const commandId = derive.command(caller.requestScope, "delegate_task", requestKey);
    // The budget joins the request (a retry with another budget is other work) only when given,
    // so receipts written before budgets existed still match their retries.
    const request = {
      task: input.task,
      target: input.target ?? null,
      ...(input.projectId !== undefined ? { projectId: input.projectId } : {}),
      title: input.title ?? null,
      role: input.role ?? null,
      runtimeMode: input.runtimeMode ?? null,
      interactionMode: input.interactionMode ?? null,
      ...(input.budget !== undefined ? { budget: input.budget } : {}),
      ...(input.workspace !== undefined ? { workspace: input.workspace } : {}),
    };
    const replay = conflictsAsInvalid(() => this.engine.replay<{ taskId: string }>(commandId, "delegated_task.request", request));
    let taskId: string;
    if (replay !== null) {
      taskId = replay.result.taskId;
    } else if (caller.kind === "agent") {
      const parentRun = this.callers.liveRun(caller);
      if (parentRun === null) {
        throw new OrchestratorFailure("parent_not_active", "delegate_task needs an active parent run owned by this credential's provider session; call it during a turn.");
      }
      // Checked before the provider is resolved, so a refused project names itself and nothing is created.
      if (input.projectId !== undefined) this.callers.project(caller, input.projectId);
      const selection = await this.selection.resolve({
        target: input.target,
        inherited: this.callers.inherited(caller),
        ceiling: this.callers.ceiling(caller),
        runtimeMode: input.runtimeMode,
        interactionMode: input.interactionMode,
      });
      const parent = this.callers.thread(caller)!;
      const childProject = input.projectId ?? parent.projectId;
      const planned = await this.workspaces.plan({
        choice: input.workspace,
        threadId: derive.delegatedThread(commandId),
        title: input.title ?? titleFromMessage(input.task),
        source: { projectId: childProject, cwd: childProject === parent.projectId ? parent.cwd : this.engine.store.get("project", childProject)!.rootPath, threadId: parent.id },
      });
      const outcome = this.engine.execute({
        commandId,
        operation: "delegated_task.request",
        request,
        handle: (ctx) => {
          const run = this.callers.liveRun(caller);
          if (run === null) throw new OrchestratorFailure("parent_not_active", "The parent run ended before the task could be created.");
          return this.request(ctx, caller, input, withNotes(selection, planned.notes), { thread: ctx.require("thread", run.threadId), runId: run.id, attemptId: run.currentAttemptId }, planned.plan);
        },
      });
      taskId = outcome.result.taskId;
    } else {
      // An outside agent session (a connected harness): its attached thread is the parent, in
      // the project its roots or connection name (checked before anything is resolved).
      const place = this.callers.workProject(caller, input.projectId);
      const selection = await this.selection.resolve({
        target: input.target,
        inherited: null,
        ceiling: this.callers.ceiling(caller),
        runtimeMode: input.runtimeMode,
        interactionMode: input.interactionMode,
      });
      // The outside agent works in the project's folder (or the root it named); its changes go
      // back there, applied by whoever holds operate on the project.
      const planned = await this.workspaces.plan({
        choice: input.workspace,
        threadId: derive.delegatedThread(commandId),
        title: input.title ?? titleFromMessage(input.task),
        source: { projectId: place.projectId, cwd: this.engine.store.get("project", place.projectId)!.rootPath, threadId: null },
      });
      const outcome = this.engine.execute({
        commandId,
        operation: "delegated_task.request",
        request,
        handle: (ctx) => {
          const parent = ensureAttachedThread(ctx, caller, place);
          const childProject = place.projectId === parent.projectId ? undefined : place.projectId;
          return this.request(ctx, caller, { ...input, projectId: childProject }, withNotes(selection, planned.notes), { thread: parent, runId: attachedSessionRunKey(parent.id), attemptId: null }, planned.plan);
        },
      });
      taskId = outcome.result.taskId;
    }
    if (input.mode !== "wait") return this.view(taskId);
    return this.waitForTask(taskId, input.timeoutMs, control, this.callers.liveRun(caller)?.id ?? null);
  }

  /**
   * Creates the task under `parent`: an agent's thread at its live run, or an attached thread,
   * whose session stands for the run (`runId` is then its key and no run record exists).
   */
  private request(
    ctx: CommandContext,
    caller: Caller,
    input: DelegateTaskInput,
    selection: Awaited<ReturnType<ProviderSelectionService["resolve"]>>,
    parentAt: { thread: ThreadRecord; runId: string; attemptId: string | null },
    plan: WorkspacePlan | null,
  ): { taskId: string } {
    const commandId = ctx.commandId!;
    const parent = parentAt.thread;
    const parentRun = { id: parentAt.runId, currentAttemptId: parentAt.attemptId };
    const attached = parent.lineage.relationship === "attached";
    this.checkBudgets(ctx, parent.lineage.depth + 1, parentRun.id, parent.lineage.rootThreadId);
    const budget = this.treeBudgets.limitsForNewTask(ctx, parent.id, input.budget);

    const taskId = derive.delegatedTask(commandId);
    const childThreadId = derive.delegatedThread(commandId);
    const childNodeId = derive.delegatedNode(commandId);
    const parentNodeId = derive.runNode(parentRun.id);
    const parentItemId = derive.delegatedItem(commandId);
    const spawnTransferId = derive.spawnTransfer(commandId);
    const title = input.title ?? titleFromMessage(input.task);
    const workspace = plan === null ? childWorkspace(ctx, parent, input.projectId) : { projectId: plan.projectId, ...this.workspaces.record(ctx, plan) };

    createThread(ctx, {
      id: childThreadId,
      title,
      providerInstanceId: selection.providerInstanceId,
      model: selection.model,
      effort: selection.effort,
      runtimeMode: selection.runtimeMode,
      interactionMode: selection.interactionMode,
      ...workspace,
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
      authority: parent.authority ?? null,
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
    if (budget !== null) this.treeBudgets.recordTaskBudget(ctx, task, budget);
    putItem(ctx, {
      id: parentItemId,
      threadId: parent.id,
      runId: attached ? null : parentRun.id,
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
  async waitForTask(taskId: string, timeoutMs: number | undefined, control: WaitControl, waiterRunId: string | null = null): Promise<DelegateTaskResult> {
    const task = this.engine.store.get("delegatedTask", taskId)!;
    const limit = Math.min(timeoutMs ?? this.config.server.maxWaitMs, this.config.server.maxWaitMs);
    const isDone = (view: DelegateTaskResult) => view.workState === "result_available" || view.hasPendingQuestion || view.pendingApproval !== null;
    // While it is registered, a blocking question of the task reaches the parent through this wait.
    const endLiveWait = this.liveWaits.begin({ kind: "delegate_task", waiterThreadId: task.parentThreadId, subjectId: taskId });
    let lastProgress = 0;
    try {
      const done = await this.waiter.waitFor(
        () => {
          // A parent whose turn is being stopped (task_cancel above it, a budget) gets no answer:
          // handing its harness a result now would let it call its model again before the
          // interrupt lands, and a turn that already ended would drop it (acknowledged, never
          // delivered). The wait holds until the harness cancels it or the cap passes.
          if (waiterStopping(this.engine, waiterRunId)) return null;
          // Most of the child's events (its items, its turn starting) end nothing: the full view
          // (a dozen reads) is built only once the task is finalized or a request is pending.
          if (!this.mayBeDone(taskId)) return null;
          const view = this.leanView(taskId);
          return isDone(view) ? view : null;
        },
        {
          timeoutMs: limit,
          ...(control.signal ? { signal: control.signal } : {}),
          // The task's record and the waiting run are the parent's; questions and approvals the child's.
          threadIds: [task.childThreadId, task.parentThreadId],
          // Only what can end the wait: the task's record (finalized), a request of the child (a
          // question, an approval), a run of the child (which runs own an approval) or the waiting
          // run (stopping, or not any more). The child's items, attempts and sessions, and the
          // parent's own tool-call items, end nothing: re-checking on them was most re-checks.
          relevant: (event: StoredEvent) =>
            (event.entity === "delegatedTask" && event.record.id === taskId) ||
            (event.threadId === task.childThreadId && (event.entity === "runtimeRequest" || event.entity === "run")) ||
            (event.entity === "run" && waiterRunId !== null && event.record.id === waiterRunId),
          heartbeatMs: PROGRESS_HEARTBEAT_MS,
          onProgress: () => {
            const now = Date.now();
            if (now - lastProgress < 1_000) return;
            lastProgress = now;
            control.onProgress?.(`task ${taskId}: ${this.leanView(taskId).status}`);
          },
        },
      );
      if (done === null) return this.view(taskId, true);
      if (done.workState === "result_available") this.acknowledge(taskId);
      return this.withUsage(done);
    } finally {
      endLiveWait();
    }
  }

  /**
   * Whether a wait on the task could end now (isDone of its view can only hold then): the task
   * is finalized (result_available) or its child thread has a pending request (a question, an
   * approval).
   */
  private mayBeDone(taskId: string): boolean {
    const task = this.engine.store.get("delegatedTask", taskId);
    if (task === null || task.finalizedAt !== null) return true;
    return this.engine.store.count("runtimeRequest", "thread_id = ? AND status = 'pending'", [task.childThreadId]) > 0;
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
    // An agent cancels its own children; anyone else with operate on the project may stop any
    // task there, whatever its modes (CallerContext.requireMayStop).
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
          const decision = this.policy.decideTaskCancel({
            activeRun: work.active === null ? null : stoppableRun(ctx, work.active),
            queuedRuns: work.queued.length,
            unfinishedNestedTasks: work.nested.length,
            capabilities: this.registry.capabilities(current.providerInstanceId),
          });
          if (!decision.ok) {
            throw new OrchestratorFailure(
              "task_not_cancellable",
              decision.capability !== null
                ? `Task ${task.id} runs on provider "${current.providerInstanceId}", which cannot interrupt a running turn, and has no queued turn or delegated work to stop; wait for it with task_status.`
                : `Task ${task.id} has no interruptible run, no queued turn and no unfinished delegated work; its result is being published.`,
              { taskId, ...(decision.capability !== null ? { capability: decision.capability } : {}) },
            );
          }
        }
        stopTaskTree(ctx, current.id, why, { disposeDelivery: true });
        const latest = ctx.require("delegatedTask", task.id);
        ctx.put("delegatedTask", { ...latest, delivery: latest.delivery === "pending" ? "disposed" : latest.delivery, cancelRequestedAt: latest.cancelRequestedAt ?? ctx.now, cancelReason: why, updatedAt: ctx.now });
        return { cancelled: !terminal };
      },
    });
    return { ...this.view(task.id), cancelled: outcome.result.cancelled, reason: why };
  }
}

/** A provider selection with the workspace's notes added (they travel together to the parent's item). */
function withNotes<T extends { notes: readonly string[] }>(selection: T, notes: readonly string[]): T {
  return notes.length === 0 ? selection : { ...selection, notes: [...selection.notes, ...notes] };
}

/** True once the run that waits is being interrupted, or has ended. */
function waiterStopping(reader: ProjectionReader, runId: string | null): boolean {
  const run = runId === null ? null : reader.store.get("run", runId);
  return run !== null && (run.interruptRequested || isTerminalRunStatus(run.status));
}

/**
 * Where a delegated child works: in its parent's project and workspace, or, given another
 * project, in that project's root (the parent's branch and worktree belong to its own project).
 * The project is read inside the command, so one removed meanwhile is refused, not half-used.
 */
function childWorkspace(
  ctx: CommandContext,
  parent: ThreadRecord,
  projectId: string | undefined,
): Pick<ThreadRecord, "projectId" | "cwd" | "branch" | "worktreePath" | "workspaceStrategy"> {
  if (projectId === undefined || projectId === parent.projectId) {
    return { projectId: parent.projectId, cwd: parent.cwd, branch: parent.branch, worktreePath: parent.worktreePath, workspaceStrategy: parent.workspaceStrategy };
  }
  const project = ctx.get("project", projectId);
  if (project === null) throw new OrchestratorFailure("invalid_request", `Project ${projectId} does not exist; orchestrator_capabilities lists the projects you may use.`, { projectId });
  return { projectId: project.id, cwd: project.rootPath, branch: null, worktreePath: null, workspaceStrategy: "root" };
}
