import { createHash } from "node:crypto";
import { join } from "node:path";
import type { CommandContext } from "../../engine/command-context.js";
import type { ProjectionReader } from "../../engine/run-lifecycle.js";
import type { ChangeSummary, ThreadRecord, WorkspaceOutcome, WorkspaceRecord } from "../../store/records.js";

/** The outbox effects of workspaces; each runs again safely after a crash. */
export const WORKSPACE_EFFECT = {
  /** Make the worktree or scratch folder (before the thread's first turn: same lane). */
  create: "workspace.create",
  /** Commit what the thread's run left in its worktree, after the run ended. */
  snapshot: "workspace.snapshot",
  /** Apply the change set onto its target. */
  apply: "workspace.apply",
  /** Remove the worktree (and its branch unless kept). */
  remove: "workspace.remove",
} as const;

/** A workspace effect's payload. */
export interface WorkspaceEffectPayload {
  readonly workspaceId: string;
}

/** The id of a thread's workspace record. */
export function workspaceIdOf(threadId: string): string {
  return `workspace:${threadId}`;
}

/** A thread's own workspace record, or null when it shares one. */
export async function workspaceOf(reader: ProjectionReader, threadId: string): Promise<WorkspaceRecord | null> {
  return await reader.get("workspace", workspaceIdOf(threadId));
}

/** A short stable name for a thread in folder and branch names (thread ids hold `:`). */
export function threadTag(threadId: string): string {
  return createHash("sha256").update(threadId).digest("hex").slice(0, 10);
}

/** Lowercase words joined by `-`, for branch and folder names. */
export function slug(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 40) || "task"
  );
}

/** Writes the workspace's next state (an upsert event: every outcome is one). */
export function putWorkspace(
  ctx: CommandContext,
  workspace: WorkspaceRecord,
  change: Partial<WorkspaceRecord>,
): WorkspaceRecord {
  return ctx.put("workspace", { ...workspace, ...change, updatedAt: ctx.now });
}

/** The workspace's outcomes with one more (the newest 20 are kept). */
export function withOutcome(
  ctx: CommandContext,
  workspace: WorkspaceRecord,
  fields: Omit<WorkspaceOutcome, "at">,
): readonly WorkspaceOutcome[] {
  return [...workspace.outcomes, { ...fields, at: ctx.now }].slice(-20);
}

/** The outcome that answers a request, once there is one. */
export function outcomeOf(workspace: WorkspaceRecord, requestId: string): WorkspaceOutcome | null {
  return workspace.outcomes.find((entry) => entry.requestId === requestId) ?? null;
}

/** Where a thread with this workspace works: the fields its record carries. */
export function threadPlacement(
  workspace: WorkspaceRecord,
): Pick<ThreadRecord, "cwd" | "branch" | "worktreePath" | "workspaceStrategy"> {
  return {
    cwd: workspace.subfolder ? join(workspace.path, workspace.subfolder) : workspace.path,
    branch: workspace.branch,
    worktreePath: workspace.strategy === "scratch" ? null : workspace.path,
    workspaceStrategy: workspace.strategy === "existing" ? "existing_worktree" : workspace.strategy,
  };
}

/** What readers see of a workspace: where, from what, what changed, what the parent decided. */
export interface WorkspaceView {
  readonly workspaceId: string;
  readonly strategy: WorkspaceRecord["strategy"];
  readonly status: WorkspaceRecord["status"];
  readonly path: string;
  readonly branch: string | null;
  readonly baseCommit: string | null;
  readonly targetThreadId: string | null;
  readonly targetPath: string;
  /** Whether it holds changes against its base, as last recorded (null: not known yet, or not a git worktree). */
  readonly hasChanges: boolean | null;
  readonly changes: ChangeSummary | null;
  readonly disposition: WorkspaceRecord["disposition"];
  /** An apply or removal asked for and still under way. */
  readonly pending: "apply" | "removal" | null;
  readonly lastOutcome: WorkspaceOutcome | null;
  readonly error: string | null;
}

export function workspaceView(workspace: WorkspaceRecord): WorkspaceView {
  const changes = workspace.changes;
  const hasChanges =
    workspace.strategy === "scratch" || changes === null ? null : changes.commits > 0 || changes.fileCount > 0;
  return {
    workspaceId: workspace.id,
    strategy: workspace.strategy,
    status: workspace.status,
    path: workspace.path,
    branch: workspace.branch,
    baseCommit: workspace.baseCommit,
    targetThreadId: workspace.target.threadId,
    targetPath: workspace.target.path,
    hasChanges,
    changes,
    disposition: workspace.disposition,
    pending:
      workspace.pendingApply !== null || workspace.applying !== null
        ? "apply"
        : workspace.pendingRemoval !== null
          ? "removal"
          : null,
    lastOutcome: workspace.outcomes.at(-1) ?? null,
    error: workspace.error,
  };
}
