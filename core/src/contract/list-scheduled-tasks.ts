import { z } from "zod";
import { ScheduledTaskSchema } from "./scheduled-task.js";

/** list_scheduled_tasks / listScheduledTasks: scheduled tasks, newest first, offset-paginated. */
export const ListScheduledTasksInput = z
  .object({
    projectId: z.string().min(1).optional(),
    limit: z.number().int().min(1).max(100).optional(),
    offset: z.number().int().min(0).optional(),
  })
  .strict();

export const ListScheduledTasksOutput = z.object({
  tasks: z.array(ScheduledTaskSchema),
  total: z.number(),
  offset: z.number(),
  limit: z.number(),
  hasMore: z.boolean(),
});
