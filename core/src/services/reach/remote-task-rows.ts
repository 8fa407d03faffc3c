import type { CommandContext } from "../../engine/command-context.js";
import { latestExecutedRun } from "../../engine/run-lifecycle.js";
import type { ThreadRecord } from "../../store/records.js";
import type { RemoteTask } from "./remote-tasks.js";

/** A row of `reach_remote_tasks`. */
export interface RemoteTaskRow {
  link_name: string;
  remote_task_id: string;
  parent_thread_id: string;
  data: string;
  created_at: number;
  received_at: number | null;
  delivered_at: number | null;
}

/** What a remote task's `data` column holds. */
export type RemoteTaskData = Omit<RemoteTask, "linkName" | "remoteTaskId" | "parentThreadId" | "createdAt" | "receivedAt">;

/** The parent's timeline item that shows a remote child. */
export const remoteTaskItemId = (linkName: string, remoteTaskId: string) => `item:remote-task:${linkName}:${remoteTaskId}`;
/** The message that delivers a remote task's result; its id makes the delivery happen once. */
export const remoteResultMessageId = (linkName: string, remoteTaskId: string) => `message:remote-task-result:${linkName}:${remoteTaskId}`;

/** Whether the system may start a turn in a parent on its own (the rule of local results). */
export function acceptsAutomaticTurn(ctx: CommandContext, thread: ThreadRecord): boolean {
  if (thread.deletedAt !== null || thread.stopped) return false;
  return latestExecutedRun(ctx, thread.id)?.interruptedOnRequest !== true;
}
