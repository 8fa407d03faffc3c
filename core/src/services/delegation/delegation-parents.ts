import type { CommandContext } from "../../engine/command-context.js";
import { OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import type { Engine } from "../../engine/ports.js";
import type { ThreadRecord } from "../../store/records.js";
import { attachedSessionRunKey, ensureAttachedThread } from "../attached-threads.js";
import type { Caller } from "../caller.js";
import type { CallerContext } from "../caller-context.js";
import type { InheritedSelection } from "../provider-selection-service.js";
import type { WorkspaceSource } from "../workspaces/workspace-planner.js";
import type { DelegateTaskInput } from "./delegate-task-input.js";

/** The parent a task is created under, at the command: its thread and the run (or session key) it hangs off. */
export interface ParentAt {
  readonly thread: ThreadRecord;
  readonly runId: string;
  readonly attemptId: string | null;
}

/**
 * Where a caller's delegated task hangs, as each kind of caller has it: what the child's
 * selection inherits, where its workspace is planned from, and the parent inside the command
 * (read there, so a parent that ended meanwhile is refused, not half-used).
 */
export interface DelegationParent {
  readonly inherited: InheritedSelection | null;
  /** Read after the provider is resolved, as the parent stands then. */
  workspaceSource(): Promise<WorkspaceSource>;
  /** The parent in the command's transaction, and the input as the task is created from it. */
  at(ctx: CommandContext): Promise<{ parent: ParentAt; input: DelegateTaskInput }>;
}

/**
 * An agent in a Switchyard thread: the task hangs off its live run. Checked before the provider
 * is resolved, so a refused project names itself and nothing is created.
 */
export async function agentParent(
  callers: CallerContext,
  engine: Engine,
  caller: Caller,
  input: DelegateTaskInput,
): Promise<DelegationParent> {
  const parentRun = await callers.liveRun(caller);
  if (parentRun === null) {
    throw new OrchestratorFailure(
      "parent_not_active",
      "delegate_task needs an active parent run owned by this credential's provider session; call it during a turn.",
    );
  }
  if (input.projectId !== undefined) await callers.project(caller, input.projectId);
  return {
    inherited: await callers.inherited(caller),
    workspaceSource: async () => {
      const parent = (await callers.thread(caller))!;
      const childProject = input.projectId ?? parent.projectId;
      return {
        projectId: childProject,
        cwd:
          childProject === parent.projectId ? parent.cwd : (await engine.reader.get("project", childProject))!.rootPath,
        threadId: parent.id,
      };
    },
    at: async (ctx) => {
      const run = await callers.liveRun(caller);
      if (run === null)
        throw new OrchestratorFailure("parent_not_active", "The parent run ended before the task could be created.");
      return {
        parent: { thread: await ctx.require("thread", run.threadId), runId: run.id, attemptId: run.currentAttemptId },
        input,
      };
    },
  };
}

/**
 * An outside agent session (a connected harness): its attached thread is the parent, in the
 * project its roots or connection name (checked before anything is resolved). It works in the
 * project's folder (or the root it named); its changes go back there, applied by whoever holds
 * operate on the project.
 */
export async function attachedParent(
  callers: CallerContext,
  engine: Engine,
  caller: Caller,
  input: DelegateTaskInput,
): Promise<DelegationParent> {
  const place = await callers.workProject(caller, input.projectId);
  return {
    inherited: null,
    workspaceSource: async () => ({
      projectId: place.projectId,
      cwd: (await engine.reader.get("project", place.projectId))!.rootPath,
      threadId: null,
    }),
    at: async (ctx) => {
      const parent = await ensureAttachedThread(ctx, caller, place);
      const childProject = place.projectId === parent.projectId ? undefined : place.projectId;
      return {
        parent: { thread: parent, runId: attachedSessionRunKey(parent.id), attemptId: null },
        input: { ...input, projectId: childProject },
      };
    },
  };
}
