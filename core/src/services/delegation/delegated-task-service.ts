import { inject, injectable } from "tsyringe";
import { ConfigToken, type SwitchyardConfig } from "../../config/config-schema.js";
import { conflictsAsInvalid, OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import { EngineToken, type Engine } from "../../engine/ports.js";
import { ProviderCatalogToken, type ProviderCatalog } from "../../engine/provider-catalog.js";
import { stoppableRun, type ProjectionReader } from "../../engine/run-lifecycle.js";
import { titleFromMessage } from "../../engine/thread-records.js";
import { PolicyToken, type Policy } from "../../policy/policy-token.js";
import { isTerminalRunStatus, type DelegatedTaskRecord } from "../../store/records.js";
import { derive } from "../../util/ids.js";
import type { Caller } from "../caller.js";
import { CallerContext } from "../caller-context.js";
import { EventWaiter, PROGRESS_HEARTBEAT_MS } from "../event-waiter.js";
import { LiveWaits } from "../live-waits.js";
import { ThreadLinks } from "../thread-links.js";
import { ProviderSelectionService } from "../provider-selection-service.js";
import { UsageService } from "../usage/usage-service.js";
import { ChangeSetService } from "../workspaces/change-set-service.js";
import { WorkspacePlanner } from "../workspaces/workspace-planner.js";
import type { DelegateTaskInput, WaitControl } from "./delegate-task-input.js";
import { agentParent, attachedParent } from "./delegation-parents.js";
import { stopTaskTree } from "../../engine/task-stop.js";
import { ProfileLibrary } from "../profiles/profile-library.js";
import { checkProfileSupport } from "../profiles/profile-harness.js";
import { TaskCreation } from "./task-creation.js";
import { taskView, type DelegateTaskResult } from "./task-view.js";
import { nativeSubagentsOfThread } from "../native-subagents.js";
import { taskWork } from "../../engine/task-work.js";

export type { DelegateTaskInput, WaitControl } from "./delegate-task-input.js";

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
    private readonly usage: UsageService,
    private readonly workspaces: WorkspacePlanner,
    private readonly changeSets: ChangeSetService,
    private readonly creation: TaskCreation,
    private readonly links: ThreadLinks,
    private readonly profiles: ProfileLibrary,
  ) {}

  /** The view of a task right now, with its usage and budget. */
  async view(taskId: string, waitTimedOut = false): Promise<DelegateTaskResult> {
    return this.withUsage(await this.leanView(taskId, waitTimedOut));
  }

  /** The seed's fields only (what a wait re-reads on every event). */
  private async leanView(taskId: string, waitTimedOut = false): Promise<DelegateTaskResult> {
    const task = await this.engine.reader.get("delegatedTask", taskId);
    if (task === null) throw new OrchestratorFailure("task_not_found", `Task ${taskId} does not exist.`, { taskId });
    return await taskView(this.engine.reader, task, this.links, waitTimedOut);
  }

  /**
   * Adds the task's usage (own and whole tree), the provider-native sub-agents its child's turns
   * spawned, its budget, the budget that stopped it, and the child's change set.
   */
  private async withUsage(view: DelegateTaskResult): Promise<DelegateTaskResult> {
    const task = (await this.engine.reader.get("delegatedTask", view.taskId))!;
    const nativeSubagents = await nativeSubagentsOfThread(this.engine.store, task.childThreadId);
    return {
      ...view,
      usage: await this.usage.task(task.id),
      ...(nativeSubagents.length > 0 ? { nativeSubagents } : {}),
      budget: await this.usage.taskBudget(task.id),
      budgetStop: await this.usage.budgetStopOf(task),
      changes: await this.changeSets.view(task.childThreadId),
    };
  }

  /** Reads a task the caller may see: its own (agents), any (clients). */
  private async taskFor(caller: Caller, taskId: string): Promise<DelegatedTaskRecord> {
    const task = await this.engine.reader.get("delegatedTask", taskId);
    if (task === null || (caller.kind === "agent" && task.parentThreadId !== caller.threadId)) {
      throw new OrchestratorFailure(
        "task_not_found",
        `Task ${taskId} does not exist${caller.kind === "agent" ? " among the tasks your thread delegated (an agent sees only its own tasks)" : ""}.`,
        { taskId },
      );
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
      ...(input.profile !== undefined ? { profile: input.profile } : {}),
    };
    const replay = await conflictsAsInvalid(() =>
      this.engine.replay<{ taskId: string }>(commandId, "delegated_task.request", request),
    );
    const taskId = replay !== null ? replay.result.taskId : await this.requestTask(caller, input, commandId, request);
    if (input.mode !== "wait") return this.view(taskId);
    return this.waitForTask(taskId, input.timeoutMs, control, (await this.callers.liveRun(caller))?.id ?? null);
  }

  /**
   * A first delegate_task call: where the task hangs (an agent's live run, or an outside
   * session's attached thread), then the child's provider and workspace, then one command that
   * creates the task under its parent.
   */
  private async requestTask(
    caller: Caller,
    requested: DelegateTaskInput,
    commandId: string,
    request: Record<string, unknown>,
  ): Promise<string> {
    // A profile supplies defaults and lowers the ceiling before anything is resolved from the input.
    const profiled = await this.profiles.apply(
      caller,
      requested.profile,
      requested,
      await this.callers.ceiling(caller),
    );
    const input = profiled.input;
    const parent = await (caller.kind === "agent"
      ? agentParent(this.callers, this.engine, caller, input)
      : await attachedParent(this.callers, this.engine, caller, input));
    const selection = await this.selection.resolve({
      target: input.target,
      inherited: parent.inherited,
      ceiling: profiled.ceiling,
      runtimeMode: input.runtimeMode,
      interactionMode: input.interactionMode,
    });
    // The shared policy: can the selected provider enforce the profile's rules and apply its home?
    const supported = checkProfileSupport(profiled.harness, profiled.stamp?.name ?? null, selection);
    const planned = await this.workspaces.plan({
      choice: input.workspace,
      threadId: derive.delegatedThread(commandId),
      title: input.title ?? titleFromMessage(input.task),
      source: await parent.workspaceSource(),
    });
    const outcome = await this.engine.execute({
      commandId,
      operation: "delegated_task.request",
      request,
      handle: async (ctx) => {
        const at = await parent.at(ctx);
        return this.creation.create(
          ctx,
          caller,
          at.input,
          withNotes(selection, [...supported.notes, ...planned.notes]),
          at.parent,
          planned.plan,
          { ...profiled, harness: supported.harness },
        );
      },
    });
    return outcome.result.taskId;
  }

  /** Waits (up to the server cap) for a result, a blocking question or a pending approval. */
  async waitForTask(
    taskId: string,
    timeoutMs: number | undefined,
    control: WaitControl,
    waiterRunId: string | null = null,
  ): Promise<DelegateTaskResult> {
    const task = (await this.engine.reader.get("delegatedTask", taskId))!;
    const limit = Math.min(timeoutMs ?? this.config.server.maxWaitMs, this.config.server.maxWaitMs);
    const isDone = (view: DelegateTaskResult) =>
      view.workState === "result_available" || view.hasPendingQuestion || view.pendingApproval !== null;
    // While it is registered, a blocking question of the task reaches the parent through this wait.
    const endLiveWait = this.liveWaits.begin({
      kind: "delegate_task",
      waiterThreadId: task.parentThreadId,
      subjectId: taskId,
    });
    let lastProgress = 0;
    try {
      const done = await this.waiter.waitFor(
        async () => {
          // A parent whose turn is being stopped (task_cancel above it, a budget) gets no answer:
          // handing its harness a result now would let it call its model again before the
          // interrupt lands, and a turn that already ended would drop it (acknowledged, never
          // delivered). The wait holds until the harness cancels it or the cap passes.
          if (await waiterStopping(this.engine.reader, waiterRunId)) return null;
          // Most of the child's events (its items, its turn starting) end nothing: the full view
          // (a dozen reads) is built only once the task is finalized or a request is pending.
          if (!(await this.mayBeDone(taskId))) return null;
          const view = await this.leanView(taskId);
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
          relevant: (change) =>
            (change.entity === "delegatedTask" && change.id === taskId) ||
            (change.threadId === task.childThreadId &&
              (change.entity === "runtimeRequest" || change.entity === "run")) ||
            (change.entity === "run" && waiterRunId !== null && change.id === waiterRunId),
          heartbeatMs: PROGRESS_HEARTBEAT_MS,
          onProgress: () => {
            const now = Date.now();
            if (now - lastProgress < 1_000) return;
            lastProgress = now;
            // A progress note is best effort: a read that fails (the store closing) ends no wait.
            this.leanView(taskId)
              .then((view) => control.onProgress?.(`task ${taskId}: ${view.status}`))
              .catch(() => undefined);
          },
        },
      );
      if (done === null) return this.view(taskId, true);
      if (done.workState === "result_available") await this.acknowledge(taskId);
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
  private async mayBeDone(taskId: string): Promise<boolean> {
    const task = await this.engine.reader.get("delegatedTask", taskId);
    if (task === null || task.finalizedAt !== null) return true;
    return (
      (await this.engine.reader.count("runtimeRequest", "thread_id = ? AND status = 'pending'", [task.childThreadId])) >
      0
    );
  }

  /** The parent read the published result: no wake message is needed for it. */
  private async acknowledge(taskId: string): Promise<void> {
    await this.engine.apply(async (ctx) => {
      const task = await ctx.get("delegatedTask", taskId);
      if (task !== null && task.finalizedAt !== null && task.delivery === "pending")
        ctx.put("delegatedTask", { ...task, delivery: "acknowledged", updatedAt: ctx.now });
    });
  }

  /** task_status: the durable state; reading a terminal result acknowledges it. */
  async status(caller: Caller, taskId: string): Promise<DelegateTaskResult> {
    const task = await this.taskFor(caller, taskId);
    const view = await this.view(task.id);
    if (view.workState === "result_available" && caller.kind === "agent") await this.acknowledge(task.id);
    return view;
  }

  /**
   * task_cancel: stops the tasks the child delegated, then the child thread (interrupt the
   * running turn, hold queued turns), cancels the task's own queued turn, and disposes automatic
   * parent delivery. A terminal task keeps its result; its child thread still stops.
   */
  async cancel(
    caller: Caller,
    taskId: string,
    reason: string | undefined,
  ): Promise<DelegateTaskResult & { cancelled: boolean; reason: string }> {
    const task = await this.taskFor(caller, taskId);
    await this.callers.requireLiveRunForChanges(caller, "task_cancel");
    // An agent cancels its own children; anyone else with operate on the project may stop any
    // task there, whatever its modes (CallerContext.requireMayStop).
    const why = reason ?? "cancelled_by_parent";
    const outcome = await this.engine.execute({
      commandId: `cmd:task_cancel:${this.engine.ids.random("req")}`,
      operation: "delegated_task.cancel",
      request: { taskId, reason: why },
      handle: async (ctx) => {
        const current = await ctx.require("delegatedTask", task.id);
        const terminal = current.finalizedAt !== null;
        if (!terminal) {
          const work = await taskWork(ctx, current);
          const decision = this.policy.decideTaskCancel({
            activeRun: work.active === null ? null : await stoppableRun(ctx, work.active),
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
        await stopTaskTree(ctx, current.id, why, { disposeDelivery: true });
        const latest = await ctx.require("delegatedTask", task.id);
        ctx.put("delegatedTask", {
          ...latest,
          delivery: latest.delivery === "pending" ? "disposed" : latest.delivery,
          cancelRequestedAt: latest.cancelRequestedAt ?? ctx.now,
          cancelReason: why,
          updatedAt: ctx.now,
        });
        return { cancelled: !terminal };
      },
    });
    return { ...(await this.view(task.id)), cancelled: outcome.result.cancelled, reason: why };
  }
}

/** A provider selection with the workspace's notes added (they travel together to the parent's item). */
function withNotes<T extends { notes: readonly string[] }>(selection: T, notes: readonly string[]): T {
  return notes.length === 0 ? selection : { ...selection, notes: [...selection.notes, ...notes] };
}

/** True once the run that waits is being interrupted, or has ended. */
async function waiterStopping(reader: ProjectionReader, runId: string | null): Promise<boolean> {
  const run = runId === null ? null : await reader.get("run", runId);
  return run !== null && (run.interruptRequested || isTerminalRunStatus(run.status));
}
