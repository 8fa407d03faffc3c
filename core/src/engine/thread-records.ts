import { SwitchyardError, type InteractionMode, type RuntimeMode } from "../spec/index.js";
import type {
  Actor,
  BudgetLimits,
  Authority,
  CreationSource,
  ProjectRecord,
  ThreadLineage,
  ThreadHarness,
  ThreadProfile,
  ThreadRecord,
} from "../store/records.js";
import type { CommandContext } from "./command-context.js";
import { titleFromMessage } from "./thread-title.js";

/** What a new project needs. */
export interface NewProjectInput {
  readonly id: string;
  readonly name: string;
  readonly rootPath: string;
  readonly scratch?: boolean;
}

/** Creates a project (or returns it unchanged if the id exists with the same root). */
export async function createProject(ctx: CommandContext, input: NewProjectInput): Promise<ProjectRecord> {
  const existing = await ctx.get("project", input.id);
  if (existing !== null) return existing;
  const sameRoot = (await ctx.select("project", "root_path = ?", [input.rootPath]))[0];
  if (sameRoot !== undefined) {
    throw new SwitchyardError(
      "conflict",
      `A project already uses ${input.rootPath}: "${sameRoot.name}" (${sameRoot.id}).`,
      {
        projectId: sameRoot.id,
        rootPath: input.rootPath,
      },
    );
  }
  return ctx.put("project", {
    id: input.id,
    name: input.name,
    rootPath: input.rootPath,
    scratch: input.scratch ?? false,
    createdAt: ctx.now,
    updatedAt: ctx.now,
  });
}

/** What a new thread needs. */
export interface NewThreadInput {
  readonly id: string;
  readonly projectId: string;
  readonly title: string | null;
  readonly providerInstanceId: string;
  readonly model: string | null;
  /** The reasoning effort new runs use, or null / omitted for the provider's default. */
  readonly effort?: string | null;
  readonly runtimeMode: RuntimeMode;
  readonly interactionMode: InteractionMode;
  readonly cwd: string;
  readonly branch: string | null;
  readonly worktreePath: string | null;
  readonly workspaceStrategy: ThreadRecord["workspaceStrategy"];
  readonly lineage: Omit<ThreadLineage, "rootThreadId" | "depth"> & { rootThreadId?: string; depth?: number };
  readonly createdBy: Actor;
  readonly creationSource: CreationSource;
  /** Whose authority its work acts under (see ThreadRecord.authority); null when unknown. */
  readonly authority: Authority | null;
  /** The profile it starts with (a delegated task's), if any. */
  readonly profile?: ThreadProfile | null;
  /** What its profile asks of its harness sessions, if anything. */
  readonly harness?: ThreadHarness | null;
  /** A top-level thread's profile budget: limits on its whole tree (see ThreadRecord.profileBudget). */
  readonly profileBudget?: BudgetLimits | null;
}

// Kept importable from here: thread records are where callers look for a new thread's defaults.
export { titleFromMessage };

/** Creates a thread record. */
export async function createThread(
  ctx: CommandContext,
  input: NewThreadInput,
  firstMessage: string | null = null,
): Promise<ThreadRecord> {
  if ((await ctx.get("project", input.projectId)) === null) {
    throw new SwitchyardError("not_found", `Project ${input.projectId} does not exist.`, {
      projectId: input.projectId,
    });
  }
  const existing = await ctx.get("thread", input.id);
  if (existing !== null) return existing;
  return ctx.put("thread", {
    id: input.id,
    projectId: input.projectId,
    title: input.title ?? titleFromMessage(firstMessage),
    titleSource: input.title === null ? "default" : "user",
    titleRegenerationPending: false,
    providerInstanceId: input.providerInstanceId,
    model: input.model,
    effort: input.effort ?? null,
    runtimeMode: input.runtimeMode,
    interactionMode: input.interactionMode,
    cwd: input.cwd,
    branch: input.branch,
    worktreePath: input.worktreePath,
    workspaceStrategy: input.workspaceStrategy,
    lineage: {
      relationship: input.lineage.relationship,
      parentThreadId: input.lineage.parentThreadId,
      parentRunId: input.lineage.parentRunId,
      parentNodeId: input.lineage.parentNodeId,
      delegatedTaskId: input.lineage.delegatedTaskId,
      depth: input.lineage.depth ?? 0,
      rootThreadId: input.lineage.rootThreadId ?? input.id,
      ...(input.lineage.reportBack !== undefined ? { reportBack: input.lineage.reportBack } : {}),
      ...(input.lineage.foreignParent !== undefined ? { foreignParent: input.lineage.foreignParent } : {}),
      ...(input.lineage.attached !== undefined ? { attached: input.lineage.attached } : {}),
      ...(input.lineage.reachedFrom !== undefined ? { reachedFrom: input.lineage.reachedFrom } : {}),
    },
    createdBy: input.createdBy,
    creationSource: input.creationSource,
    linkedPullRequest: null,
    snoozedUntil: null,
    snoozedAt: null,
    settledAt: null,
    deletedAt: null,
    stopped: false,
    authority: input.authority,
    ...(input.profile != null ? { profile: input.profile } : {}),
    ...(input.harness != null ? { harness: input.harness } : {}),
    ...(input.profileBudget != null ? { profileBudget: input.profileBudget } : {}),
    createdAt: ctx.now,
    updatedAt: ctx.now,
  });
}

/** Reads a thread that exists and is not deleted, or throws `not_found`. */
export async function requireLiveThread(ctx: CommandContext, threadId: string): Promise<ThreadRecord> {
  const thread = await ctx.get("thread", threadId);
  if (thread === null || thread.deletedAt !== null) {
    throw new SwitchyardError("not_found", `Thread ${threadId} does not exist.`, { threadId });
  }
  return thread;
}
