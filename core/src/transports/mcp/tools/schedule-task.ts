import { z } from "zod";
import { callerFromScope } from "../caller-from-scope.js";
import { ClientRequestId, InteractionModeInput, RuntimeModeInput, Target } from "../contract.js";
import { ScheduledTaskSchema, ScheduleInputSchema } from "../scheduled-task-contract.js";
import { CREATES_WORK, defineTool } from "../tool-definition.js";

export const scheduleTaskTool = defineTool({
  name: "schedule_task",
  title: "Schedule a task",
  description: [
    "Schedules recurring work that runs even when no turn is active: the prompt runs on an interval, at a fixed time in the server's local time zone (cron, or once with at), or on each qualifying request to the task's webhook URL. With scheduledTaskId it updates that task instead (omitted fields stay); enabled: false pauses it, enabled: true resumes it.",
    "bindToCurrentThread defaults to true only when you call from a thread in the task's project: each run then posts into your thread, queued behind its work. Otherwise (or with false) each run launches a fresh thread in the project; explicit true without a thread in that project is refused.",
    "Provider, model and modes inherit from you as for delegate_task, never broader than yours. A trigger while the task's previous run is still going is skipped, never stacked.",
    "The task runs under the credential that started your thread's tree (a client's own token): once that is revoked or expires, the task pauses (pausedReason says why), and resuming it binds it to the resumer's credential.",
    "Without a signature, anyone with the webhook URL can trigger a run, so that URL (which ends with a key) is shown only to callers that may change the task. With one, requests need X-Switchyard-Timestamp and X-Switchyard-Signature; filters and dedupe can skip requests (recorded with the reason). The request body reaches the prompt as delimited data.",
  ].join(" "),
  input: z
    .object({
      scheduledTaskId: z.string().min(1).max(200).optional().describe("Update this task instead of creating one."),
      projectId: z.string().min(1).optional().describe("The task's project; default your thread's. Callers outside a thread must name one."),
      title: z.string().min(1).max(200).optional(),
      prompt: z.string().min(1).max(1_000_000).optional().describe("What every run is asked to do (required to create); self-contained, since runs may start in a fresh thread."),
      schedule: ScheduleInputSchema.optional(),
      target: Target.optional(),
      runtimeMode: RuntimeModeInput.optional(),
      interactionMode: InteractionModeInput.optional(),
      enabled: z.boolean().optional().describe("false pauses the task; true resumes it (default true on create)."),
      bindToCurrentThread: z.boolean().optional().describe("Post each run into your thread (default: true only when your thread is in the task's project)."),
      clientRequestId: ClientRequestId.optional(),
    })
    .strict(),
  output: ScheduledTaskSchema.extend({
    created: z.boolean(),
    replayed: z.boolean(),
    signatureSecret: z.string().nullable().describe("A generated signature secret, shown only by the call that generated it: give it to the sender now."),
    notes: z.array(z.string()),
  }),
  annotations: CREATES_WORK,
  requires: "orchestration:operate",
  handle: (input, { scope, services }) => services.schedules.schedule(callerFromScope(scope), input),
});
