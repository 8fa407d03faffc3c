import { inject, injectable } from "tsyringe";
import {
  INTERACTION_MODES,
  RUNTIME_MODES,
  runtimeModeRank,
  type InteractionMode,
  type RuntimeMode,
} from "../../spec/index.js";
import { type SwitchyardConfig, ConfigToken } from "../../config/config-schema.js";
import type { ProjectionReader } from "../../engine/projection-reader.js";
import type { CommandContext } from "../../engine/command-context.js";
import type { EngineReaction } from "../../engine/engine-reaction.js";
import { type Engine, EngineToken } from "../../engine/ports.js";
import { deliverMessage } from "../../engine/message-delivery.js";
import { conflictsAsInvalid, OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import { finishRun } from "../../engine/run-lifecycle.js";
import { createThread, titleFromMessage } from "../../engine/thread-records.js";
import { isTerminalRunStatus, type RunRecord } from "../../store/records.js";
import { type ReachForeignTaskRow, ReachForeignTasksTable } from "../../store/tables/reach-foreign-tasks.js";
import { derive } from "../../util/ids.js";
import { EventWaiter, PROGRESS_HEARTBEAT_MS } from "../event-waiter.js";
import { ProviderSelectionService } from "../provider-selection-service.js";
import { ROLE_INSTRUCTIONS } from "../delegation/role-instructions.js";
import type { DelegateTaskInput } from "../delegation/delegated-task-service.js";
import type { DelegateTaskResult } from "../delegation/task-view.js";
import { resultText } from "../../engine/task-work.js";
import { stopThread } from "../../engine/task-stop.js";
import { ThreadLinks } from "../thread-links.js";
import type { ForeignParent, ReachCallMeta } from "./link-calls.js";
import type { ReachGrant } from "../credentials/reach-grant.js";
import { ReachGrants } from "./reach-grants.js";
import type { Caller } from "../caller.js";
import { ProfileLibrary } from "../profiles/profile-library.js";
import { checkProfileSupport } from "../profiles/profile-harness.js";
import { childInstructions } from "../delegation/task-creation.js";

/** A finished foreign task's result, as the outbox hands it to the delegating side. */
export interface ForeignTaskResult {
  readonly taskId: string;
  readonly status: "completed" | "failed" | "cancelled" | "interrupted";
  readonly summary: string;
  readonly parent: ForeignParent;
}

interface ForeignTaskData {
  parent: ForeignParent;
  title: string;
  providerInstanceId: string;
  model: string | null;
  childNodeId: string;
  cancelRequestedAt: string | null;
}

/** The linked environment behind a grant, as the shared services see a caller (for its profile). */
function grantCaller(grant: ReachGrant): Caller {
  return {
    kind: "environment",
    threadId: null,
    projectId: null,
    providerInstanceId: null,
    providerSessionId: null,
    requestScope: `credential:${grant.id}`,
    credentialId: grant.id,
    capabilities: new Set(),
    projects: grant.projects,
    grant,
    authority: { kind: "grant", grantId: grant.id },
  };
}

/** How many results one hand-over carries at most (the rest follow in the next). */
const MAX_RESULTS_PER_PULL = 50;

/**
 * Delegated tasks whose parent is in another environment, on the side that runs them (B). The
 * child is a thread of its own here, carrying its parent's foreign lineage (environment, thread,
 * run, root) and its depth in the whole tree, so nested delegation here counts from it. When the
 * child's run ends, its result goes to this side's durable outbox (the task's row), in the
 * transaction that ended the run (`ForeignTaskOutbox`); the delegating side takes it with
 * `results` and acknowledges it with `acknowledge`, which is the only thing that removes it
 * from the outbox: a hand-over lost to a cut link or a restart is handed over again.
 */
@injectable()
export class ForeignTasks {
  /** The tasks, read outside a command (inside one, through the command's store). */
  private readonly tasks: ReachForeignTasksTable;

  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(ConfigToken) private readonly config: SwitchyardConfig,
    private readonly selection: ProviderSelectionService,
    private readonly grants: ReachGrants,
    private readonly waiter: EventWaiter,
    private readonly links: ThreadLinks,
    private readonly profiles: ProfileLibrary,
  ) {
    this.tasks = new ReachForeignTasksTable(engine.store);
  }

  /**
   * delegate_task from a linked environment: checked against the grant (verb, project, mode),
   * the budgets that travelled with it and this side's own, then created in one command.
   * A retry with the same clientRequestId (from the same environment and grant) is the same task.
   */
  async delegate(
    grant: ReachGrant,
    meta: ReachCallMeta,
    input: DelegateTaskInput,
    signal?: AbortSignal,
  ): Promise<DelegateTaskResult> {
    const parent = meta.delegation;
    if (parent === undefined) {
      throw new OrchestratorFailure(
        "parent_not_active",
        "delegate_task from another environment needs its parent's lineage (a delegating thread's run there); this call carried none.",
      );
    }
    const requestKey = `${meta.environmentId}:${parent.threadId}:${input.clientRequestId ?? this.engine.ids.random("req")}`;
    const commandId = derive.command(`grant:${grant.id}`, "delegate_task", requestKey);
    const request = {
      task: input.task,
      target: input.target ?? null,
      projectId: input.projectId ?? null,
      title: input.title ?? null,
      role: input.role ?? null,
      runtimeMode: input.runtimeMode ?? null,
      interactionMode: input.interactionMode ?? null,
      // Only when named, so a retry of a request recorded before profiles crossed links still matches.
      ...(input.profile !== undefined ? { profile: input.profile } : {}),
      parent,
    };
    const replay = await conflictsAsInvalid(() =>
      this.engine.replay<{ taskId: string }>(commandId, "reach.foreign_task.request", request),
    );
    let taskId: string;
    if (replay !== null) {
      taskId = replay.result.taskId;
    } else {
      // Checked before the provider is resolved, so a refusal names itself and nothing is created.
      await this.checkBudgets(this.engine.reader, parent);
      const projectId = await this.projectFor(grant, input.projectId);
      const ceiling = intersectCeiling(meta.ceiling, grant.maxRuntimeMode);
      this.grants.authorize(grant, {
        verb: "delegate",
        projectId,
        runtimeMode: input.runtimeMode === undefined || input.runtimeMode === "inherit" ? null : input.runtimeMode,
      });
      // A profile is named, never shipped: resolved in this machine's own config and projects,
      // held to the grant's list, and applied by the path a local call takes (it narrows, the
      // grant's and the profile's ceilings both hold).
      const profiled = await this.profiles.apply(grantCaller(grant), input.profile, input, ceiling, projectId);
      if (profiled.input.target === undefined) {
        // The parent's provider is one of the other environment's; nothing here can be inherited.
        throw new OrchestratorFailure(
          "invalid_request",
          "delegate_task into another environment needs target.providerInstanceId or target.driverKind of a provider there, or a profile there that names one (orchestrator_capabilities lists each environment's providers and the profiles its grant allows).",
          { field: "target" },
        );
      }
      const selection = await this.selection.resolve({
        target: profiled.input.target,
        inherited: null,
        ceiling: profiled.ceiling,
        runtimeMode: profiled.input.runtimeMode,
        interactionMode: profiled.input.interactionMode,
      });
      // The shared policy: can the selected provider enforce the profile's rules and apply its home?
      const supported = checkProfileSupport(profiled.harness, profiled.stamp?.name ?? null, selection);
      const outcome = await this.engine.execute({
        commandId,
        operation: "reach.foreign_task.request",
        request,
        handle: async (ctx) => {
          await this.checkBudgets(ctx, parent);
          const project = await ctx.get("project", projectId);
          if (project === null)
            throw new OrchestratorFailure("invalid_request", `Project ${projectId} does not exist here.`, {
              projectId,
            });
          const id = derive.delegatedTask(commandId);
          const childThreadId = derive.delegatedThread(commandId);
          const title = input.title ?? titleFromMessage(input.task);
          await createThread(ctx, {
            id: childThreadId,
            projectId: project.id,
            title,
            providerInstanceId: selection.providerInstanceId,
            model: selection.model,
            effort: selection.effort,
            runtimeMode: selection.runtimeMode,
            interactionMode: selection.interactionMode,
            cwd: project.rootPath,
            branch: null,
            worktreePath: null,
            workspaceStrategy: "root",
            // A root here (its parent is not a thread of this store), at its depth in the whole tree.
            profile: profiled.stamp,
            harness: supported.harness,
            lineage: {
              relationship: "root",
              parentThreadId: null,
              parentRunId: null,
              parentNodeId: null,
              delegatedTaskId: null,
              depth: parent.depth,
              foreignParent: {
                environmentId: parent.environmentId,
                threadId: parent.threadId,
                runId: parent.runId,
                rootThreadId: parent.rootThreadId,
              },
              reachedFrom: { environment: grant.for, grantId: grant.id },
            },
            createdBy: "agent",
            creationSource: "mcp",
            authority: { kind: "grant", grantId: grant.id },
          });
          const delivery = await deliverMessage(ctx, {
            threadId: childThreadId,
            messageId: derive.messageFromCommand(commandId),
            text: input.task,
            mode: "auto",
            createdBy: "agent",
            creationSource: "mcp",
            instructions: childInstructions(
              profiled.instructions,
              input.role === undefined ? null : ROLE_INSTRUCTIONS[input.role],
            ),
            capabilities: selection.capabilities,
          });
          const data: ForeignTaskData = {
            parent,
            title,
            providerInstanceId: selection.providerInstanceId,
            model: selection.model,
            childNodeId: derive.delegatedNode(commandId),
            cancelRequestedAt: null,
          };
          await ctx
            .table(ReachForeignTasksTable)
            .insert(
              { taskId: id, grantId: grant.id, childThreadId, childRunId: delivery.runId, createdAt: ctx.nowMs },
              data,
            );
          return { taskId: id };
        },
      });
      taskId = outcome.result.taskId;
    }
    if (input.mode !== "wait") return await this.view(grant, taskId);
    return this.wait(grant, taskId, input.timeoutMs, signal);
  }

  /** task_status from a linked environment: only tasks delegated under the same grant. */
  async view(grant: ReachGrant, taskId: string, waitTimedOut = false): Promise<DelegateTaskResult> {
    const row = await this.rowFor(grant, taskId);
    const data = JSON.parse(row.data) as ForeignTaskData;
    const run = await this.engine.reader.get("run", row.child_run_id);
    const result = row.result === null ? null : (JSON.parse(row.result) as ForeignTaskResult);
    const pending = await this.engine.reader.select("runtimeRequest", "thread_id = ? AND status = 'pending'", [
      row.child_thread_id,
    ]);
    const approval =
      result === null
        ? (pending.find((request) => request.kind === "approval" && request.runId === row.child_run_id) ?? null)
        : null;
    const status: DelegateTaskResult["status"] =
      result !== null
        ? result.status
        : run === null || run.status === "queued"
          ? "queued"
          : run.status === "waiting"
            ? "waiting"
            : "running";
    const finishedRun = result !== null ? run : null;
    const webUrl = this.links.webUrl(row.child_thread_id);
    return {
      taskId: row.task_id,
      childThreadId: row.child_thread_id,
      childThreadLink: this.links.link(row.child_thread_id),
      // The delegating environment passes it through: this server is the one that knows its UI's address.
      ...(webUrl !== undefined ? { childThreadWebUrl: webUrl } : {}),
      childRunId: row.child_run_id,
      childNodeId: data.childNodeId,
      status,
      workState: result !== null ? "result_available" : "working",
      hasPendingChildRuns: false,
      providerInstanceId: data.providerInstanceId,
      model: data.model,
      summary: result?.summary ?? null,
      resultContextTransferId: null,
      latestTerminalRunId: finishedRun?.id ?? null,
      latestTerminalStatus: result?.status ?? null,
      latestTerminalSummary: result?.summary ?? null,
      latestTerminalResultContextTransferId: null,
      hasPendingQuestion: pending.some((request) => request.kind === "user_input" && request.blocking),
      pendingApproval:
        approval === null
          ? null
          : { requestId: approval.id, kind: approval.approvalKind ?? "permission", runId: approval.runId },
      waitTimedOut,
    };
  }

  /** Waits (up to the server cap) for the result, a blocking question or a pending approval. */
  async wait(
    grant: ReachGrant,
    taskId: string,
    timeoutMs: number | undefined,
    signal?: AbortSignal,
  ): Promise<DelegateTaskResult> {
    const row = await this.rowFor(grant, taskId);
    const limit = Math.min(timeoutMs ?? this.config.server.maxWaitMs, this.config.server.maxWaitMs);
    const done = await this.waiter.waitFor(
      async () => {
        const view = await this.view(grant, taskId);
        return view.workState === "result_available" || view.hasPendingQuestion || view.pendingApproval !== null
          ? view
          : null;
      },
      {
        timeoutMs: limit,
        ...(signal !== undefined ? { signal } : {}),
        relevant: (change) => change.threadId === row.child_thread_id,
        heartbeatMs: PROGRESS_HEARTBEAT_MS,
      },
    );
    return done ?? (await this.view(grant, taskId, true));
  }

  /** task_cancel from a linked environment: stops the child (its running turn, its queued turns); the result records how it ended. */
  async cancel(
    grant: ReachGrant,
    taskId: string,
    reason: string | undefined,
  ): Promise<DelegateTaskResult & { cancelled: boolean; reason: string }> {
    this.grants.authorize(grant, { verb: "cancel" });
    const row = await this.rowFor(grant, taskId);
    const why = reason ?? "cancelled_by_parent";
    const cancelled = await this.engine.apply(async (ctx) => {
      const tasks = ctx.table(ReachForeignTasksTable);
      const current = (await tasks.byId(taskId))!;
      if (current.finished_at !== null) return false;
      const data = JSON.parse(current.data) as ForeignTaskData;
      if (data.cancelRequestedAt === null) await tasks.updateData(taskId, { ...data, cancelRequestedAt: ctx.now });
      // Stop, as the user's Stop button: the running turn is interrupted, queued turns held; the
      // task's own run, if it never started, is cancelled (its end writes the outbox row).
      await stopThread(ctx, row.child_thread_id, why);
      if ((await ctx.require("run", row.child_run_id)).status === "queued")
        await finishRun(ctx, row.child_run_id, "cancelled", null, why);
      return true;
    });
    return { ...(await this.view(grant, taskId)), cancelled, reason: why };
  }

  /**
   * The outbox's hand-over: first acknowledges what the delegating side took last time, then
   * returns the results it has not acknowledged, waiting (woken by commits, never polling) up to
   * `waitMs` for one when there is none.
   */
  async results(
    grant: ReachGrant,
    options: { acknowledge?: readonly string[]; waitMs: number; signal?: AbortSignal },
  ): Promise<ForeignTaskResult[]> {
    if (options.acknowledge !== undefined && options.acknowledge.length > 0)
      await this.acknowledge(grant, options.acknowledge);
    const unacked = async () => {
      const rows = await this.tasks.unacknowledged(grant.id, MAX_RESULTS_PER_PULL);
      return rows.length === 0 ? null : rows.map((row) => JSON.parse(row.result!) as ForeignTaskResult);
    };
    const limit = Math.min(Math.max(0, options.waitMs), this.config.server.maxWaitMs);
    return (
      (await this.waiter.waitFor(unacked, {
        timeoutMs: limit,
        ...(options.signal !== undefined ? { signal: options.signal } : {}),
        relevant: (change) => change.entity === "run",
      })) ?? []
    );
  }

  /** Removes results from the outbox once the delegating side holds them (its receipt is durable first). */
  async acknowledge(grant: ReachGrant, taskIds: readonly string[]): Promise<void> {
    const now = this.engine.clock.nowMs();
    const store = this.engine.store;
    // One transaction for them all, in the store's turn (as `writeAsync` of a `transaction()` was).
    await store.transactionAsync(async () => {
      for (const taskId of taskIds) await this.tasks.acknowledge(taskId, grant.id, now);
    });
  }

  /** The project a foreign child works in: the one named (within the grant), else the grant's only one, else the oldest here. */
  private async projectFor(grant: ReachGrant, projectId: string | undefined): Promise<string> {
    if (projectId !== undefined) return projectId;
    if (grant.projects !== "*") {
      if (grant.projects.length === 1) return grant.projects[0]!;
      throw new OrchestratorFailure(
        "invalid_request",
        `Grant ${grant.id} covers several projects (${grant.projects.join(", ")}); name one with projectId.`,
        { grantId: grant.id, allowedProjects: [...grant.projects] },
      );
    }
    const oldest = (await this.engine.reader.select("project", "1 = 1", [], "ORDER BY rowid LIMIT 1"))[0];
    if (oldest === undefined)
      throw new OrchestratorFailure(
        "invalid_request",
        "This environment has no project to work in; the user adds one with `switchyard project add`.",
        {},
      );
    return oldest.id;
  }

  /** Depth and breadth budgets across machines: the delegating side's depth limit and this side's own. */
  private async checkBudgets(ctx: ProjectionReader, parent: ForeignParent): Promise<void> {
    const budgets = this.config.budgets;
    const maxDepth = Math.min(budgets.maxDelegationDepth, parent.maxDepth);
    if (parent.depth > maxDepth) {
      throw new OrchestratorFailure(
        "invalid_request",
        `Delegation depth ${parent.depth} exceeds the budget of ${maxDepth} (budgets.maxDelegationDepth, the stricter of both environments); finish this work there instead of delegating further.`,
        {
          budget: "maxDelegationDepth",
          limit: maxDepth,
        },
      );
    }
    const tasks = ctx.table(ReachForeignTasksTable);
    const running = await tasks.countUnfinishedOfParentRun(parent.environmentId, parent.runId);
    if (running >= budgets.maxConcurrentChildrenPerRun) {
      throw new OrchestratorFailure(
        "invalid_request",
        `The delegating run already has ${running} unfinished tasks here, the budget (budgets.maxConcurrentChildrenPerRun); wait for one before starting another.`,
        {
          budget: "maxConcurrentChildrenPerRun",
          limit: budgets.maxConcurrentChildrenPerRun,
        },
      );
    }
    const total = await tasks.countOfParentTree(parent.environmentId, parent.rootThreadId);
    if (total >= budgets.maxTasksPerRootThread) {
      throw new OrchestratorFailure(
        "invalid_request",
        `The delegating thread tree has already delegated ${total} tasks here, the budget (budgets.maxTasksPerRootThread).`,
        { budget: "maxTasksPerRootThread", limit: budgets.maxTasksPerRootThread },
      );
    }
  }

  /** A task of this grant; another grant's (or none) is `task_not_found`, as if it did not exist. */
  private async rowFor(grant: ReachGrant, taskId: string): Promise<ReachForeignTaskRow> {
    const row = await this.tasks.byId(taskId);
    if (row === null || row.grant_id !== grant.id)
      throw new OrchestratorFailure(
        "task_not_found",
        `Task ${taskId} does not exist among the tasks delegated here under this link.`,
        { taskId },
      );
    return row;
  }
}

/**
 * The outbox: when a foreign child's run ends, its result is written to the task's row in the
 * same transaction, so it exists exactly once whatever happens to the process afterwards.
 */
@injectable()
export class ForeignTaskOutbox implements EngineReaction {
  readonly name = "foreign-task-outbox";

  async onRunTerminal(ctx: CommandContext, run: RunRecord): Promise<void> {
    if (!isTerminalRunStatus(run.status)) return;
    const tasks = ctx.table(ReachForeignTasksTable);
    const row = await tasks.unfinishedOfChildRun(run.id);
    if (row === null) return;
    const data = JSON.parse(row.data) as ForeignTaskData;
    const status =
      data.cancelRequestedAt !== null && run.status === "completed"
        ? "interrupted"
        : (run.status as ForeignTaskResult["status"]);
    const result: ForeignTaskResult = {
      taskId: row.task_id,
      status,
      summary: resultText(run.summary?.trim() ?? "", run.error, status),
      parent: data.parent,
    };
    await tasks.finish(row.task_id, result, ctx.nowMs);
  }
}

/**
 * The broadest modes work may have: the caller's ceiling on its side (a claim, so only ever
 * narrowing), never above the grant's here. A mode this side does not know counts as the
 * narrowest.
 */
export function intersectCeiling(
  ceiling: ReachCallMeta["ceiling"] | undefined,
  grantMax: RuntimeMode,
): { runtimeMode: RuntimeMode; interactionMode: InteractionMode } {
  const claimed = (RUNTIME_MODES as readonly string[]).includes(ceiling?.runtimeMode ?? "")
    ? (ceiling!.runtimeMode as RuntimeMode)
    : RUNTIME_MODES[0]!;
  const runtimeMode = runtimeModeRank(claimed) <= runtimeModeRank(grantMax) ? claimed : grantMax;
  const interactionMode = (INTERACTION_MODES as readonly string[]).includes(ceiling?.interactionMode ?? "")
    ? (ceiling!.interactionMode as InteractionMode)
    : INTERACTION_MODES[0]!;
  return { runtimeMode, interactionMode };
}
