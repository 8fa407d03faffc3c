import { z } from "zod";
import { DelegateTaskResultSchema } from "./delegated-task.js";

/** task_status / getTask: a delegated task, read from durable state. */
export const TaskStatusInput = z.object({ taskId: z.string().min(1) }).strict();

export const TaskStatusOutput = DelegateTaskResultSchema;
