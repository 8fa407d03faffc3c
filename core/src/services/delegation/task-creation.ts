import { inject, injectable } from "tsyringe";
import { ConfigToken, type SwitchyardConfig } from "../../config/config-schema.js";
import type { CommandContext } from "../../engine/command-context.js";
import { deliverMessage } from "../../engine/message-delivery.js";
import { OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import { putItem } from "../../engine/run-lifecycle.js";
import { createThread, titleFromMessage } from "../../engine/thread-records.js";
import type { DelegatedTaskRecord, ThreadHarness, ThreadProfile, ThreadRecord } from "../../store/records.js";
import { derive } from "../../util/ids.js";
import type { Caller } from "../caller.js";
import type { ResolvedSelection } from "../provider-selection-service.js";
import { TreeBudgets } from "../usage/tree-budgets.js";
import { WorkspacePlanner, type WorkspacePlan } from "../workspaces/workspace-planner.js";
import type { ParentAt } from "./delegation-parents.js";
import type { DelegateTaskInput } from "./delegate-task-input.js";
import { ROLE_INSTRUCTIONS } from "./role-instructions.js";

/** What a profile adds to the task's child: its instructions, and the record of which profile it is. */
export interface ChildProfile {
  readonly instructions: string | null;
  readonly stamp: ThreadProfile | null;
  /** What the profile asks of the child's harness sessions, as the provider can carry it. */
  readonly harness?: ThreadHarness | null;
}

const NO_PROFILE: ChildProfile = { instructions: null, stamp: null };

/** The ids a task's records get, derived from the command that asked for it (a retry lands on the same rows). */
interface TaskIds {
  readonly taskId: string;
  readonly childThreadId: string;
  readonly childNodeId: string;
  readonly parentNodeId: string;
  readonly parentItemId: string;
  readonly spawnTransferId: string;
}

function taskIds(commandId: string, parentRunId: string): TaskIds {
  return {
    taskId: derive.delegatedTask(commandId),
    childThreadId: derive.delegatedThread(commandId),
    childNodeId: derive.delegatedNode(commandId),
    parentNodeId: derive.runNode(parentRunId),
    parentItemId: derive.delegatedItem(commandId),
    spawnTransferId: derive.spawnTransfer(commandId),
  };
}

/**
 * Creates a delegated task inside the command that asked for it: the budgets are checked, then
 * the child thread, the spawn's context transfer, the child's first run and node, the task
 * record (with its tree budget) and the parent's item are written together.
 */
@injectable()
export class TaskCreation {
  constructor(
    @inject(ConfigToken) private readonly config: SwitchyardConfig,
    private readonly treeBudgets: TreeBudgets,
    private readonly workspaces: WorkspacePlanner,
  ) {}

  /**
   * Creates the task under `parentAt`: an agent's thread at its live run, or an attached thread,
   * whose session stands for the run (`runId` is then its key and no run record exists).
   */
  async create(
    ctx: CommandContext,
    caller: Caller,
    input: DelegateTaskInput,
    selection: ResolvedSelection,
    parentAt: ParentAt,
    plan: WorkspacePlan | null,
    profile: ChildProfile = NO_PROFILE,
  ): Promise<{ taskId: string }> {
    const commandId = ctx.commandId!;
    const parent = parentAt.thread;
    const parentRun = { id: parentAt.runId, currentAttemptId: parentAt.attemptId };
    const attached = parent.lineage.relationship === "attached";
    await this.checkBudgets(ctx, parent.lineage.depth + 1, parentRun.id, parent.lineage.rootThreadId);
    const budget = await this.treeBudgets.limitsForNewTask(ctx, parent.id, input.budget);
    const ids = taskIds(commandId, parentRun.id);
    const title = input.title ?? titleFromMessage(input.task);
    const workspace =
      plan === null
        ? await childWorkspace(ctx, parent, input.projectId)
        : { projectId: plan.projectId, ...(await this.workspaces.record(ctx, plan)) };

    await createThread(ctx, {
      id: ids.childThreadId,
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
        parentNodeId: ids.parentNodeId,
        delegatedTaskId: ids.taskId,
        depth: parent.lineage.depth + 1,
        rootThreadId: parent.lineage.rootThreadId,
      },
      createdBy: "agent",
      creationSource: "mcp",
      authority: parent.authority ?? null,
      profile: profile.stamp,
      harness: profile.harness ?? null,
    });
    ctx.put("contextTransfer", {
      id: ids.spawnTransferId,
      kind: "subagent_spawn",
      sourceThreadId: parent.id,
      targetThreadId: ids.childThreadId,
      strategy: "prompt_only",
      status: "consumed",
      content: input.task,
      delegatedTaskId: ids.taskId,
      createdAt: ctx.now,
      consumedAt: ctx.now,
    });
    const delivery = await deliverMessage(ctx, {
      threadId: ids.childThreadId,
      messageId: derive.messageFromCommand(commandId),
      text: input.task,
      mode: "auto",
      createdBy: "agent",
      creationSource: "mcp",
      instructions: childInstructions(
        profile.instructions,
        input.role === undefined ? null : ROLE_INSTRUCTIONS[input.role],
      ),
      delegatedTaskId: ids.taskId,
      capabilities: selection.capabilities,
    });
    ctx.put("node", {
      id: ids.childNodeId,
      threadId: ids.childThreadId,
      runId: delivery.runId,
      kind: "subagent",
      parentNodeId: ids.parentNodeId,
      status: "queued",
      createdAt: ctx.now,
      updatedAt: ctx.now,
    });
    const task = await taskRecord(ctx, {
      caller,
      input,
      selection,
      parent,
      parentRunId: parentRun.id,
      ids,
      title,
      childRunId: delivery.runId,
    });
    ctx.put("delegatedTask", task);
    if (budget !== null) this.treeBudgets.recordTaskBudget(ctx, task, budget);
    await putItem(ctx, {
      id: ids.parentItemId,
      threadId: parent.id,
      runId: attached ? null : parentRun.id,
      attemptId: parentRun.currentAttemptId,
      kind: "subagent",
      status: "in_progress",
      text: title,
      data: {
        origin: "app_owned",
        taskId: ids.taskId,
        childThreadId: ids.childThreadId,
        providerInstanceId: selection.providerInstanceId,
        model: selection.model,
        role: input.role ?? null,
        ...(profile.stamp !== null ? { profile: profile.stamp.name } : {}),
        notes: selection.notes,
      },
      createdBy: "agent",
      creationSource: "mcp",
    });
    return { taskId: ids.taskId };
  }

  private async checkBudgets(
    ctx: CommandContext,
    depth: number,
    parentRunId: string,
    rootThreadId: string,
  ): Promise<void> {
    const budgets = this.config.budgets;
    if (depth > budgets.maxDelegationDepth) {
      throw new OrchestratorFailure(
        "invalid_request",
        `Delegation depth ${depth} exceeds the budget of ${budgets.maxDelegationDepth} (budgets.maxDelegationDepth); finish this work here instead of delegating further.`,
        {
          budget: "maxDelegationDepth",
          limit: budgets.maxDelegationDepth,
        },
      );
    }
    const running = (await ctx.select("delegatedTask", "parent_run_id = ?", [parentRunId])).filter(
      (task) => task.finalizedAt === null,
    ).length;
    if (running >= budgets.maxConcurrentChildrenPerRun) {
      throw new OrchestratorFailure(
        "invalid_request",
        `This run already has ${running} unfinished delegated tasks, the budget (budgets.maxConcurrentChildrenPerRun); wait for one with task_status or delegate_task mode "wait" before starting another.`,
        {
          budget: "maxConcurrentChildrenPerRun",
          limit: budgets.maxConcurrentChildrenPerRun,
        },
      );
    }
    const total = await ctx.count("delegatedTask", "root_thread_id = ?", [rootThreadId]);
    if (total >= budgets.maxTasksPerRootThread) {
      throw new OrchestratorFailure(
        "invalid_request",
        `This thread tree has already delegated ${total} tasks, the budget (budgets.maxTasksPerRootThread).`,
        {
          budget: "maxTasksPerRootThread",
          limit: budgets.maxTasksPerRootThread,
        },
      );
    }
  }
}

/** The task's record as it starts: its child's first run queued, its delivery pending. */
async function taskRecord(
  ctx: CommandContext,
  task: {
    caller: Caller;
    input: DelegateTaskInput;
    selection: ResolvedSelection;
    parent: ThreadRecord;
    parentRunId: string;
    ids: TaskIds;
    title: string;
    childRunId: string;
  },
): Promise<DelegatedTaskRecord> {
  const { caller, input, selection, parent, ids } = task;
  return {
    id: ids.taskId,
    parentThreadId: parent.id,
    parentRunId: task.parentRunId,
    parentNodeId: ids.parentNodeId,
    parentItemId: ids.parentItemId,
    childThreadId: ids.childThreadId,
    childRunId: task.childRunId,
    childNodeId: ids.childNodeId,
    providerInstanceId: selection.providerInstanceId,
    model: selection.model,
    role: input.role ?? null,
    title: task.title,
    task: input.task,
    status: (await ctx.require("run", task.childRunId)).status,
    summary: null,
    spawnContextTransferId: ids.spawnTransferId,
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
}

/**
 * Where a delegated child works: in its parent's project and workspace, or, given another
 * project, in that project's root (the parent's branch and worktree belong to its own project).
 * The project is read inside the command, so one removed meanwhile is refused, not half-used.
 */
async function childWorkspace(
  ctx: CommandContext,
  parent: ThreadRecord,
  projectId: string | undefined,
): Promise<Pick<ThreadRecord, "projectId" | "cwd" | "branch" | "worktreePath" | "workspaceStrategy">> {
  if (projectId === undefined || projectId === parent.projectId) {
    return {
      projectId: parent.projectId,
      cwd: parent.cwd,
      branch: parent.branch,
      worktreePath: parent.worktreePath,
      workspaceStrategy: parent.workspaceStrategy,
    };
  }
  const project = await ctx.get("project", projectId);
  if (project === null)
    throw new OrchestratorFailure(
      "invalid_request",
      `Project ${projectId} does not exist; orchestrator_capabilities lists the projects you may use.`,
      { projectId },
    );
  return { projectId: project.id, cwd: project.rootPath, branch: null, worktreePath: null, workspaceStrategy: "root" };
}

/** A profile's instructions, then a role's: either, both (the profile's first) or none. */
export function childInstructions(profile: string | null, role: string | null): string | null {
  const parts = [profile, role].filter((part): part is string => part !== null);
  return parts.length === 0 ? null : parts.join("\n\n");
}
