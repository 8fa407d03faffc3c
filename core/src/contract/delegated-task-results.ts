import { z } from "zod";

/** delegated_task_results (linked environments only): the results of tasks delegated here that the environment has not acknowledged. */
export const DelegatedTaskResultsInput = z
  .object({
    acknowledge: z.array(z.string().min(1).max(300)).max(200).optional(),
    waitMs: z.number().int().min(0).max(3_600_000).optional(),
  })
  .strict();

export const DelegatedTaskResultsOutput = z.object({
  results: z.array(
    z.object({
      taskId: z.string(),
      status: z.enum(["completed", "failed", "cancelled", "interrupted"]),
      summary: z.string(),
      parent: z.object({
        environmentId: z.string(),
        threadId: z.string(),
        runId: z.string(),
        rootThreadId: z.string(),
        depth: z.number(),
        maxDepth: z.number(),
      }),
    }),
  ),
});
