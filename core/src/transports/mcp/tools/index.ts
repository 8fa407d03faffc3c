import type { McpToolDefinition } from "../tool-definition.js";
import { createThreadsTool } from "./create-threads.js";
import { delegateTaskTool } from "./delegate-task.js";
import { deleteScheduledTaskTool } from "./delete-scheduled-task.js";
import { linkPullRequestTool, unlinkPullRequestTool } from "./link-pull-request.js";
import { listScheduledTasksTool } from "./list-scheduled-tasks.js";
import { orchestratorCapabilitiesTool } from "./orchestrator-capabilities.js";
import { pendingRequestTool } from "./pending-request.js";
import { delegatedTaskResultsTool } from "./delegated-task-results.js";
import { scheduleTaskTool } from "./schedule-task.js";
import { setThreadSettledTool } from "./set-thread-settled.js";
import { taskCancelTool } from "./task-cancel.js";
import { taskStatusTool } from "./task-status.js";
import { threadInterruptTool } from "./thread-interrupt.js";
import { threadLaunchTool } from "./thread-launch.js";
import { threadListTool } from "./thread-list.js";
import { threadReadTool } from "./thread-read.js";
import { threadSendTool } from "./thread-send.js";
import { threadUpdateTool } from "./thread-update.js";
import { threadWaitTool } from "./thread-wait.js";
import { applyChangesTool } from "./apply-changes.js";
import { discardChangesTool } from "./discard-changes.js";
import { readChangesTool } from "./read-changes.js";

/** The orchestration tool surface (seed 000), in the order tools/list shows it. */
export const ORCHESTRATOR_TOOLS: readonly McpToolDefinition[] = [
  orchestratorCapabilitiesTool,
  delegateTaskTool,
  taskStatusTool,
  taskCancelTool,
  createThreadsTool,
  threadLaunchTool,
  threadListTool,
  threadReadTool,
  threadUpdateTool,
  linkPullRequestTool,
  unlinkPullRequestTool,
  threadSendTool,
  threadWaitTool,
  threadInterruptTool,
  setThreadSettledTool,
  readChangesTool,
  applyChangesTool,
  discardChangesTool,
  pendingRequestTool,
  scheduleTaskTool,
  listScheduledTasksTool,
  deleteScheduledTaskTool,
  delegatedTaskResultsTool,
] as unknown as readonly McpToolDefinition[];
