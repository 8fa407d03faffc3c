import { z } from "zod";
import { callerFromScope } from "../caller-from-scope.js";
import { WorkspaceViewSchema } from "../contract.js";
import { defineTool, READ_ONLY } from "../tool-definition.js";

export const readChangesTool = defineTool({
  name: "read_changes",
  title: "Read a child's changes",
  description:
    "Reads the change set of a thread that works in its own workspace (delegate_task or create_threads with workspace \"worktree\"): the files it changed, its commits and the diff against the commit it started from, a page at a time (offset = nextOffset reads on; a page stays under maxChars, default 30000). path limits the diff to one file. Work a run left is committed when the run ends.",
  input: z
    .object({
      threadId: z.string().min(1).describe("The child thread (a task's childThreadId)."),
      path: z.string().min(1).max(4096).optional().describe("Only this file (or folder) of the change set."),
      offset: z.number().int().min(0).optional().describe("Where the page starts in the diff (a previous page's nextOffset)."),
      maxChars: z.number().int().min(1_000).max(100_000).optional(),
    })
    .strict(),
  output: z.object({
    threadId: z.string(),
    workspace: WorkspaceViewSchema,
    baseCommit: z.string().nullable(),
    head: z.string().nullable(),
    files: z.array(z.object({ path: z.string(), status: z.string().describe("A added, M modified, D deleted, T type changed."), insertions: z.number().nullable(), deletions: z.number().nullable() })).readonly(),
    fileCount: z.number(),
    commits: z.array(z.object({ commit: z.string(), subject: z.string() })).readonly(),
    commitCount: z.number(),
    uncommitted: z.boolean().describe("The folder has changes no commit holds yet (its run is still going)."),
    diff: z.string(),
    offset: z.number(),
    nextOffset: z.number().nullable().describe("Pass as offset for the next page; null at the end."),
    totalChars: z.number(),
    truncated: z.boolean(),
  }),
  annotations: READ_ONLY,
  requires: "orchestration:read",
  handle: (input, { scope, services }) => services.changeSets.read(callerFromScope(scope), input),
});
