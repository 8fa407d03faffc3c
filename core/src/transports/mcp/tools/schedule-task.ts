import { ScheduleTaskInput, ScheduleTaskOutput } from "../../../contract/schedule-task.js";
import { callerFromScope } from "../../caller-from-scope.js";
import { CREATES_WORK, defineTool } from "../tool-definition.js";

export const scheduleTaskTool = defineTool({
  name: "schedule_task",
  title: "Schedule a task",
  description: [
    "Schedules recurring work that runs even when no turn is active: the prompt runs on an interval, at a fixed time in the server's local time zone (cron, or once with at), or on each qualifying request to the task's webhook URL. With scheduledTaskId it updates that task instead (omitted fields stay); enabled: false pauses it, enabled: true resumes it.",
    "bindToCurrentThread defaults to true only when you call from a thread in the task's project: each run then posts into your thread, queued behind its work. Otherwise (or with false) each run launches a fresh thread in the project; explicit true without a thread in that project is refused.",
    "Provider, model and modes inherit from you as for delegate_task, never broader than yours. A trigger while the task's previous run is still going is skipped, never stacked.",
    "profile (from orchestrator_capabilities) shapes every run as it does delegate_task's work: checked now, stored by name and resolved again at each fire; a fire whose profile was removed or would now be refused fails with the reason (recentTriggers) and never runs without it.",
    "The task runs under the credential that started your thread's tree (a client's own token): once that is revoked or expires, the task pauses (pausedReason says why), and resuming it binds it to the resumer's credential.",
    "Without a signature, anyone with the webhook URL can trigger a run, so that URL (which ends with a key) is shown only to callers that may change the task. With one, requests need X-Switchyard-Timestamp and X-Switchyard-Signature; filters and dedupe can skip requests (recorded with the reason). The request body reaches the prompt as delimited data.",
  ].join(" "),
  input: ScheduleTaskInput,
  output: ScheduleTaskOutput,
  annotations: CREATES_WORK,
  requires: "orchestration:operate",
  handle: async (input, { scope, services }) => await services.schedules.schedule(callerFromScope(scope), input),
});
