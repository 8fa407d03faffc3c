import { z } from "zod";

/** delete_scheduled_task / deleteScheduledTask: a scheduled task deleted for good. */
export const DeleteScheduledTaskInput = z.object({ scheduledTaskId: z.string().min(1).max(200) }).strict();

export const DeleteScheduledTaskOutput = z.object({
  scheduledTaskId: z.string(),
  title: z.string(),
  deleted: z.literal(true),
  replayed: z.boolean(),
});
