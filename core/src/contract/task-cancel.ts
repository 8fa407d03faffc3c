import { z } from "zod";
import { DelegateTaskResultSchema } from "./delegated-task.js";

/** task_cancel / cancelTask: a delegated task stopped, its own delegations first. */
export const TaskCancelInput = z
  .object({ taskId: z.string().min(1), reason: z.string().max(1_000).optional() })
  .strict();

export const TaskCancelOutput = DelegateTaskResultSchema.extend({ cancelled: z.boolean(), reason: z.string() });
