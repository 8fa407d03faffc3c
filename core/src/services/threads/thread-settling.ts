import { OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import type { ProjectionReader } from "../../engine/run-lifecycle.js";
import { pendingBackgroundTasks } from "../thread-views.js";

/** Refuses to settle a thread that still has work: unfinished runs, pending requests, or delegated work. */
export async function refuseSettlingBusyThread(reader: ProjectionReader, threadId: string): Promise<void> {
  const unfinished = await reader.select(
    "run",
    "thread_id = ? AND status NOT IN ('completed', 'failed', 'cancelled', 'interrupted')",
    [threadId],
  );
  if (unfinished.length > 0) {
    throw new OrchestratorFailure(
      "invalid_request",
      `Thread ${threadId} still has ${unfinished.length} unfinished run(s) (${unfinished.map((run) => `${run.id}: ${run.status}`).join(", ")}), so it cannot be settled. Interrupt or stop it, or wait for it, then settle it.`,
      {
        threadId,
        reason: "unfinished_runs",
        runIds: unfinished.map((run) => run.id),
      },
    );
  }
  const pending = await reader.count("runtimeRequest", "thread_id = ? AND status = 'pending'", [threadId]);
  if (pending > 0) {
    throw new OrchestratorFailure(
      "invalid_request",
      `Thread ${threadId} has ${pending} pending request(s) waiting for an answer, so it cannot be settled. Answer or dismiss them first (t3_pending_request).`,
      { threadId, reason: "pending_requests" },
    );
  }
  const background = await pendingBackgroundTasks(reader, threadId);
  if (background > 0) {
    throw new OrchestratorFailure(
      "invalid_request",
      `Thread ${threadId} still waits on ${background} delegated task(s), so it cannot be settled. Wait for them or cancel them (task_cancel) first.`,
      { threadId, reason: "pending_background_tasks" },
    );
  }
}
