import type { RecordUpsert } from "../../../src/store/ports.js";

// Whole records of the entities the contract writes, built the way the services build them.
// They exercise what a backend must get right: a tombstone (a removed project), indexed
// columns that change (an item that moves, an attempt that gets its session), and records
// that `forget` removes (scheduled triggers).

const CREATED = "2026-12-01T00:00:00.000Z";

export function project(id: string, name: string, removed = false): RecordUpsert<"project"> {
  return {
    entity: "project",
    record: {
      id,
      name,
      rootPath: `/work/${id}`,
      scratch: false,
      createdAt: CREATED,
      updatedAt: CREATED,
      ...(removed ? { removedAt: CREATED } : {}),
    },
  };
}

export function thread(id: string, projectId: string, title: string): RecordUpsert<"thread"> {
  return {
    entity: "thread",
    record: {
      id,
      projectId,
      title,
      titleSource: "user",
      titleRegenerationPending: false,
      providerInstanceId: "provider:test",
      model: null,
      runtimeMode: "full-access",
      interactionMode: "default",
      cwd: `/work/${projectId}`,
      branch: null,
      worktreePath: null,
      workspaceStrategy: "root",
      lineage: {
        relationship: "root",
        parentThreadId: null,
        parentRunId: null,
        parentNodeId: null,
        delegatedTaskId: null,
        depth: 0,
        rootThreadId: id,
      },
      createdBy: "user",
      creationSource: "api",
      linkedPullRequest: null,
      snoozedUntil: null,
      snoozedAt: null,
      deletedAt: null,
      stopped: false,
      createdAt: CREATED,
      updatedAt: CREATED,
    },
  };
}

export function item(
  id: string,
  threadId: string,
  position: number,
  text: string,
  kind: "assistant_message" | "user_message" = "assistant_message",
): RecordUpsert<"item"> {
  return {
    entity: "item",
    record: {
      id,
      threadId,
      runId: null,
      attemptId: null,
      position,
      kind,
      status: "completed",
      text,
      data: {},
      createdBy: "provider",
      creationSource: "provider",
      createdAt: CREATED,
      updatedAt: CREATED,
    },
  };
}

export function attempt(
  id: string,
  threadId: string,
  status: "pending" | "running" | "completed",
  providerSessionId: string | null,
): RecordUpsert<"attempt"> {
  return {
    entity: "attempt",
    record: {
      id,
      runId: `run:${threadId}:1`,
      threadId,
      ordinal: 1,
      status,
      providerSessionId,
      providerTurnId: null,
      text: "work",
      instructions: null,
      restartOfAttemptId: null,
      reason: "initial",
      createdAt: CREATED,
      startedAt: null,
      endedAt: null,
      error: null,
    },
  };
}

export function trigger(
  id: string,
  scheduledTaskId: string,
  outcome: "started" | "skipped",
): RecordUpsert<"scheduledTrigger"> {
  return {
    entity: "scheduledTrigger",
    record: {
      id,
      scheduledTaskId,
      kind: "interval",
      scheduledFor: CREATED,
      catchUp: false,
      coalesced: 0,
      outcome,
      reason: outcome === "skipped" ? "overlap" : null,
      detail: null,
      runId: null,
      threadId: null,
      dedupeKey: null,
      signatureDigest: null,
      request: null,
      createdAt: CREATED,
    },
  };
}
