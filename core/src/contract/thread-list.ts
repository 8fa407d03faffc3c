import { z } from "zod";
import { RunStatus } from "./fields.js";
import { ThreadShell } from "./thread-shell.js";

/** t3_thread_list / listThreads: a project's thread shells, newest first, offset-paginated. */
export const ThreadListInput = z
  .object({
    projectId: z.string().min(1).optional(),
    title: z.string().min(1).max(200).optional(),
    runStatus: z
      .array(z.union([RunStatus, z.literal("idle")]))
      .optional()
      .describe(
        "Shells whose status is one of these (any status a shell can have); running also lists threads whose run is starting.",
      ),
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
