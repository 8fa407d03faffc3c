import { DelegateTaskInput, DelegateTaskOutput } from "../../../contract/delegate-task.js";
import { callerFromScope } from "../../caller-from-scope.js";
import { linkedGrantOf, reachMetaOf } from "../linked-caller.js";
import { CREATES_WORK, defineTool } from "../tool-definition.js";

export const delegateTaskTool = defineTool({
  name: "delegate_task",
  title: "Delegate a task",
  description: [
    "Creates a sub-agent thread on any available provider and sends it the task. The child gets ONLY the task text (plus the optional role instruction), not this conversation: make the task self-contained.",
    'mode "wait" returns when the result is ready, when the child asks a blocking question (hasPendingQuestion: answer with t3_pending_request), when it waits for an approval of its own work (pendingApproval), or when the wait cap passes (waitTimedOut: the task keeps running; call task_status or wait again). mode "async" (default) returns at once.',
    "Provider, model and modes inherit from you when omitted; a child never gets broader modes than yours. Use a distinct clientRequestId per task, stable across retries of that task.",
    "For a follow-up in the same child conversation use t3_thread_send on childThreadId.",
    "budget (optional) caps the task's tree in tokens, dollars or wall-clock time; usage shows what the tree used so far.",
    "profile (optional) names a kit from orchestrator_capabilities profiles (target, instructions, mode ceilings); your explicit fields may narrow it, never widen it.",
    'workspace "worktree" gives the child its own git worktree (several children editing files never overwrite each other); take its changes back with apply_changes or drop them with discard_changes.',
  ].join(" "),
  input: DelegateTaskInput,
  output: DelegateTaskOutput,
  annotations: CREATES_WORK,
  requires: "orchestration:operate",
  handle: (input, { scope, services, signal, reportProgress, meta }) => {
    // From a linked environment: the child's parent is there (a foreign lineage).
    const grant = linkedGrantOf(scope);
    if (grant !== null) return services.foreignTasks.delegate(grant, reachMetaOf(meta), input, signal);
    return services.tasks.delegate(callerFromScope(scope), input, {
      signal,
      onProgress: (message) => void reportProgress(message),
    });
  },
});
