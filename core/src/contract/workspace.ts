import { z } from "zod";

/** Where new work runs, and a thread's own workspace with its change set (read_changes, apply_changes, discard_changes). */

const WorkspaceStrategyInput = z.enum(["shared", "worktree", "scratch", "existing"]);

/** Switchyard's addition: where new work runs (delegate_task, create_threads entries). */
export const WorkspaceInput = z
  .union([
    WorkspaceStrategyInput,
    z
      .object({
        strategy: WorkspaceStrategyInput,
        baseRef: z
          .string()
          .min(1)
          .max(250)
          .optional()
          .describe("worktree: the branch or commit to start from (default: your current commit)."),
        branch: z
          .string()
          .min(1)
          .max(250)
          .optional()
          .describe("worktree: the new branch's name (default switchyard/<title>-<tag>)."),
        path: z.string().min(1).max(4096).optional().describe("existing: the worktree to work in."),
      })
      .strict(),
  ])
  .describe(
    'Where it works: "shared" (your workspace; the default unless the project sets another), "worktree" (a new git worktree on a new branch from your current commit, or baseRef), "scratch" (an empty folder), "existing" (the worktree at path). A worktree\'s changes come back with read_changes / apply_changes / discard_changes; orchestrator_capabilities lists what each project supports.',
  );

const WorkspaceOutcomeSchema = z.object({
  action: z.enum(["apply", "discard", "keep"]),
  outcome: z.enum(["applied", "conflict", "nothing_to_apply", "failed", "discarded", "kept"]),
  method: z.enum(["merge", "cherry-pick"]).nullable(),
  commit: z.string().nullable(),
  files: z.array(z.string()).readonly().describe("conflict: the files that conflict (nothing was changed)."),
  message: z.string().nullable(),
  requestId: z.string(),
  at: z.string(),
});

/** Switchyard's addition: a thread's own workspace and its change set, as last recorded. */
export const WorkspaceViewSchema = z.object({
  workspaceId: z.string(),
  strategy: z.enum(["worktree", "scratch", "existing"]),
  status: z.enum(["creating", "ready", "failed", "removed"]),
  path: z.string(),
  branch: z.string().nullable(),
  baseCommit: z.string().nullable(),
  targetThreadId: z
    .string()
    .nullable()
    .describe("The thread its changes go back to (null: the project folder, for a client)."),
  targetPath: z.string(),
  hasChanges: z
    .boolean()
    .nullable()
    .describe(
      "Whether it holds changes against its base, as recorded when its last run ended (null: not known yet, or a scratch folder).",
    ),
  changes: z
    .object({
      head: z.string().nullable(),
      commits: z.number(),
      files: z.array(z.string()).readonly(),
      fileCount: z.number(),
      insertions: z.number(),
      deletions: z.number(),
      recordedAt: z.string(),
    })
    .nullable(),
  disposition: z.enum(["applied", "discarded", "kept"]).nullable(),
  pending: z.enum(["apply", "removal"]).nullable(),
  lastOutcome: WorkspaceOutcomeSchema.nullable(),
  error: z.string().nullable(),
});

/** apply_changes / discard_changes result. */
export const ChangeSetDecisionSchema = z.object({
  threadId: z.string(),
  requestId: z.string(),
  replayed: z.boolean(),
  outcome: WorkspaceOutcomeSchema.nullable().describe("What came of it; null while still under way (pending)."),
  pending: z.boolean().describe("The wait ended first; read_changes shows the outcome once it is there."),
  workspace: WorkspaceViewSchema,
});
