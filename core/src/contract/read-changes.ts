import { z } from "zod";
import { threadReference } from "./fields.js";
import { WorkspaceViewSchema } from "./workspace.js";

/** read_changes / readChanges: a thread's change set and a page of its diff. */
export const ReadChangesInput = z
  .object({
    threadId: threadReference("The child thread (a task's childThreadId)"),
    path: z.string().min(1).max(4096).optional().describe("Only this file (or folder) of the change set."),
    offset: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("Where the page starts in the diff (a previous page's nextOffset)."),
    maxChars: z.number().int().min(1_000).max(100_000).optional(),
  })
  .strict();

export const ReadChangesOutput = z.object({
  threadId: z.string(),
  workspace: WorkspaceViewSchema,
  baseCommit: z.string().nullable(),
  head: z.string().nullable(),
  files: z
    .array(
      z.object({
        path: z.string(),
        status: z.string().describe("A added, M modified, D deleted, T type changed."),
        insertions: z.number().nullable(),
        deletions: z.number().nullable(),
      }),
    )
    .readonly(),
  fileCount: z.number(),
  commits: z.array(z.object({ commit: z.string(), subject: z.string() })).readonly(),
  commitCount: z.number(),
  uncommitted: z.boolean().describe("The folder has changes no commit holds yet (its run is still going)."),
  diff: z.string(),
  offset: z.number(),
  nextOffset: z.number().nullable().describe("Pass as offset for the next page; null at the end."),
  totalChars: z.number(),
  truncated: z.boolean(),
});
