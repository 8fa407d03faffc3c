import { z } from "zod";
import { ClientRequestId, InteractionModeInput, ProfileName, RuntimeModeInput, Target } from "./fields.js";
import { ScheduledTaskSchema, ScheduleInputSchema } from "./scheduled-task.js";

/** schedule_task / createScheduledTask, updateScheduledTask: a scheduled task created, or changed with scheduledTaskId. */
export const ScheduleTaskInput = z
  .object({
    scheduledTaskId: z.string().min(1).max(200).optional().describe("Update this task instead of creating one."),
    projectId: z
      .string()
      .min(1)
      .optional()
      .describe("The task's project; default your thread's. Callers outside a thread must name one."),
    title: z.string().min(1).max(200).optional(),
    prompt: z
      .string()
      .min(1)
      .max(1_000_000)
      .optional()
      .describe(
        "What every run is asked to do (required to create); self-contained, since runs may start in a fresh thread.",
      ),
    schedule: ScheduleInputSchema.optional(),
    target: Target.optional(),
    runtimeMode: RuntimeModeInput.optional(),
    interactionMode: InteractionModeInput.optional(),
    enabled: z.boolean().optional().describe("false pauses the task; true resumes it (default true on create)."),
    bindToCurrentThread: z
      .boolean()
      .optional()
      .describe(
        "Post each run into your thread (default: true only when your thread is in the task's project and no profile is given).",
      ),
    profile: ProfileName.nullable()
      .optional()
      .describe(
        "A profile from orchestrator_capabilities profiles for every run: checked now like delegate_task's (explicit fields narrow it, never widen it; unknown is invalid_request listing the available ones), stored by name and resolved again at each fire; a fire whose profile was removed or would now be refused fails with the reason (recentTriggers). Each run launches a fresh thread (not with bindToCurrentThread: true). null removes it (update).",
      ),
    clientRequestId: ClientRequestId.optional(),
  })
  .strict();

export const ScheduleTaskOutput = ScheduledTaskSchema.extend({
  created: z.boolean(),
  replayed: z.boolean(),
  signatureSecret: z
    .string()
    .nullable()
    .describe("A generated signature secret, shown only by the call that generated it: give it to the sender now."),
  notes: z.array(z.string()),
});
