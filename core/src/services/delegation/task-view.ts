import type { ProjectionReader } from "../../engine/run-lifecycle.js";
import { isTerminalRunStatus, type DelegatedTaskRecord, type RunRecord } from "../../store/records.js";
import { threadLink } from "../thread-views.js";

/** seed 000 `DelegateTaskResult`, plus links. */
export interface DelegateTaskResult {
  taskId: string;
  childThreadId: string;
  childThreadLink: string;
  childRunId: string | null;
  childNodeId: string;
  status: "queued" | "running" | "waiting" | "completed" | "failed" | "cancelled" | "interrupted";
  workState: "working" | "waiting_for_children" | "result_available";
  hasPendingChildRuns: boolean;
  providerInstanceId: string;
  model: string | null;
  summary: string | null;
  resultContextTransferId: string | null;
  latestTerminalRunId: string | null;
  latestTerminalStatus: "completed" | "failed" | "cancelled" | "interrupted" | null;
  latestTerminalSummary: string | null;
  latestTerminalResultContextTransferId: string | null;
  hasPendingQuestion: boolean;
  pendingApproval: { requestId: string; kind: "command" | "file-read" | "file-change" | "mcp-elicitation" | "permission"; runId: string } | null;
  waitTimedOut: boolean;
}

/** `starting` is internal; the contract shows it as `running`. */
function publicStatus(status: RunRecord["status"]): DelegateTaskResult["status"] {
  return status === "starting" ? "running" : status;
}

/** Unfinalized tasks the child thread itself delegated (its nested work). */
export function openNestedTasks(reader: ProjectionReader, childThreadId: string): DelegatedTaskRecord[] {
  return reader.store.select("delegatedTask", "parent_thread_id = ?", [childThreadId]).filter((task) => task.finalizedAt === null);
}

/** Builds the durable view of a task from the projections. */
export function taskView(reader: ProjectionReader, task: DelegatedTaskRecord, environmentId: string, waitTimedOut = false): DelegateTaskResult {
  const childRun = reader.store.get("run", task.childRunId);
  const finalized = task.finalizedAt !== null;
  const runStatus = childRun?.status ?? task.status;
  const workState: DelegateTaskResult["workState"] = finalized ? "result_available" : isTerminalRunStatus(runStatus) ? "waiting_for_children" : "working";
  const later = reader.store
    .select("run", "thread_id = ?", [task.childThreadId], "ORDER BY ordinal")
    .filter((run) => run.ordinal > (childRun?.ordinal ?? 0) && run.kind === "work");
  const latestTerminal = [...later].reverse().find((run) => isTerminalRunStatus(run.status)) ?? null;
  const pending = reader.store.select("runtimeRequest", "thread_id = ? AND status = 'pending'", [task.childThreadId]);
  const approval = pending.find((request) => request.kind === "approval" && request.runId === task.childRunId && !finalized) ?? null;
  return {
    taskId: task.id,
    childThreadId: task.childThreadId,
    childThreadLink: threadLink(environmentId, task.childThreadId),
    childRunId: task.childRunId,
    childNodeId: task.childNodeId,
    status: publicStatus(finalized ? task.status : runStatus),
    workState,
    hasPendingChildRuns: later.some((run) => !isTerminalRunStatus(run.status)),
    providerInstanceId: task.providerInstanceId,
    model: task.model,
    summary: finalized ? task.summary : null,
    resultContextTransferId: task.resultContextTransferId,
    latestTerminalRunId: latestTerminal?.id ?? null,
    latestTerminalStatus: latestTerminal === null ? null : (latestTerminal.status as DelegateTaskResult["latestTerminalStatus"]),
    latestTerminalSummary: latestTerminal?.summary ?? null,
    latestTerminalResultContextTransferId: null,
    hasPendingQuestion: pending.some((request) => request.kind === "user_input" && request.blocking),
    pendingApproval:
      approval === null ? null : { requestId: approval.id, kind: approval.approvalKind ?? "permission", runId: approval.runId },
    waitTimedOut,
  };
}
