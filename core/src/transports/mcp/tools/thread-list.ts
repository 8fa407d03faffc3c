import { z } from "zod";
import { callerFromScope } from "../caller-from-scope.js";
import { ThreadShell } from "../contract.js";
import { defineTool, READ_ONLY } from "../tool-definition.js";

export const threadListTool = defineTool({
  name: "t3_thread_list",
  title: "List threads",
  description:
    "Lists thread shells in one project, newest first: projectId when given, else your thread's project. Filter by title (substring), run status, snoozed, settled, and whether sub-agent threads are included. Offset-paginated; deleted threads are never listed.",
  input: z
    .object({
      projectId: z.string().min(1).optional(),
      title: z.string().min(1).max(200).optional(),
      runStatus: z.array(z.enum(["idle", "queued", "running", "waiting", "completed", "failed", "cancelled", "interrupted"])).optional(),
      includeSubagents: z.boolean().optional(),
      snoozed: z.boolean().optional(),
      settled: z.boolean().optional().describe("true lists only settled threads, false only active ones; omitted lists both."),
      limit: z.number().int().min(1).max(100).optional(),
      offset: z.number().int().min(0).optional(),
    })
    .strict(),
  output: z.object({
    projectId: z.string(),
    threads: z.array(ThreadShell),
    total: z.number(),
    offset: z.number(),
    limit: z.number(),
    hasMore: z.boolean(),
    nextOffset: z.number().nullable(),
  }),
  annotations: READ_ONLY,
  requires: "orchestration:read",
  handle: async (input, { scope, services }) => services.queries.list(callerFromScope(scope), input),
});
