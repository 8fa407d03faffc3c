import type { ProjectionReader } from "./run-lifecycle.js";
import {
  isActiveRunStatus,
  isTerminalRunStatus,
  type DelegatedTaskRecord,
  type RunRecord,
  type RunStatus,
} from "../store/records.js";

/**
 * A delegated task's known work: its original run, the follow-up runs the system started in the
 * child thread because of that work (nested results, questions from nested tasks) while the task
 * was unfinalized, and the unfinished tasks the child delegated. The task stays nonterminal until
 * all of it has finished; its result is the final work turn's.
 */
export interface TaskWork {
  /** The task's own runs, in thread order (the original run first). */
  readonly runs: readonly RunRecord[];
  readonly original: RunRecord | null;
  /** The task's run that is live now (starting, running or waiting). */
  readonly active: RunRecord | null;
  /** The task's runs still queued (held ones included). */
  readonly queued: readonly RunRecord[];
  /** Unfinalized tasks the child thread delegated. */
  readonly nested: readonly DelegatedTaskRecord[];
}

/** Unfinalized tasks the child thread itself delegated (its nested work). */
export async function openNestedTasks(reader: ProjectionReader, childThreadId: string): Promise<DelegatedTaskRecord[]> {
  return (await reader.select("delegatedTask", "parent_thread_id = ?", [childThreadId])).filter(
    (task) => task.finalizedAt === null,
  );
}

/** Reads a task's known work from the projections. */
export async function taskWork(reader: ProjectionReader, task: DelegatedTaskRecord): Promise<TaskWork> {
  const runs = await reader.select(
    "run",
    "thread_id = ? AND delegated_task_id = ?",
    [task.childThreadId, task.id],
    "ORDER BY ordinal",
  );
  return {
    runs,
    original: runs.find((run) => run.id === task.childRunId) ?? (await reader.get("run", task.childRunId)),
    active: runs.find((run) => isActiveRunStatus(run.status)) ?? null,
    queued: runs.filter((run) => run.status === "queued"),
    nested: await openNestedTasks(reader, task.childThreadId),
  };
}

/** True while any of the task's known work is unfinished. */
export function hasRemainingWork(work: TaskWork): boolean {
  return (
    work.original === null ||
    !isTerminalRunStatus(work.original.status) ||
    work.active !== null ||
    work.queued.length > 0 ||
    work.nested.length > 0
  );
}

/** The final work turn: the newest of the task's runs that reached a provider (else the original run). */
export function finalWorkTurn(work: TaskWork): RunRecord | null {
  return [...work.runs].reverse().find((run) => run.startedAt !== null) ?? work.original;
}

/** The latest assistant content up to and including `run` among the task's runs. */
export function latestContent(work: TaskWork, run: RunRecord): string {
  const candidates = work.runs.filter((candidate) => candidate.ordinal <= run.ordinal).reverse();
  if (!candidates.some((candidate) => candidate.id === run.id)) candidates.unshift(run);
  return candidates.map((candidate) => candidate.summary?.trim() ?? "").find((text) => text !== "") ?? "";
}

/** A failed run shows its provider error first; a successful one its latest assistant content. */
export function resultText(progress: string, error: RunRecord["error"], status: RunStatus): string {
  if (status === "failed") {
    const message = error?.message ?? "The provider reported a failure without a message.";
    return progress === "" ? `Error: ${message}` : `Error: ${message}\n\nProgress before the failure:\n${progress}`;
  }
  if (status === "completed") return progress;
  return progress === "" ? `(${status}; no result text)` : `(${status}) ${progress}`;
}
