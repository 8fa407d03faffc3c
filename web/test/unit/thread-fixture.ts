import type { ThreadShell } from "../../src/api/types.js";

/** A thread's shell as the API answers it, idle at the root of project p, with `overrides`. */
export function threadShell(overrides: Partial<ThreadShell> = {}): ThreadShell {
  const threadId = overrides.threadId ?? "t";
  return {
    threadId,
    link: `switchyard-thread://v2/env/${threadId}`,
    title: threadId,
    projectId: "p",
    providerInstanceId: "alpha",
    model: null,
    effort: null,
    runtimeMode: "approval-required",
    interactionMode: "default",
    status: "idle",
    latestRunId: null,
    queuedRuns: 0,
    relationship: "root",
    parentThreadId: null,
    delegatedTaskId: null,
    reportBack: false,
    branch: null,
    worktreePath: null,
    cwd: "/work",
    linkedPullRequest: null,
    titleRegenerationPending: false,
    snoozed: false,
    snoozedUntil: null,
    settled: false,
    settledAt: null,
    blockedOnThreadWait: false,
    pendingBackgroundTasks: 0,
    createdBy: "user",
    creationSource: "api",
    createdAt: "2026-12-01T10:00:00.000Z",
    updatedAt: "2026-12-01T10:00:00.000Z",
    ...overrides,
  };
}
