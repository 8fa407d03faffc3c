import { z } from "zod";
import { ThreadShell } from "./thread-shell.js";

/** t3_thread_list / listThreads: a project's thread shells, newest first, offset-paginated. */
export const ThreadListInput = z
  .object({
    projectId: z.string().min(1).optional(),
    title: z.string().min(1).max(200).optional(),
    runStatus: z
      .array(z.enum(["idle", "queued", "running", "waiting", "completed", "failed", "cancelled", "interrupted"]))
      .optional(),
    includeSubagents: z.boolean().optional(),
    snoozed: z.boolean().optional(),
    settled: z
      .boolean()
      .optional()
      .describe("true lists only settled threads, false only active ones; omitted lists both."),
    limit: z.number().int().min(1).max(100).optional(),
    offset: z.number().int().min(0).optional(),
  })
  .strict();

export const ThreadListOutput = z.object({
  projectId: z.string(),
  threads: z.array(ThreadShell),
  total: z.number(),
  offset: z.number(),
  limit: z.number(),
  hasMore: z.boolean(),
  nextOffset: z.number().nullable(),
});
