import { authorityId, type EntityName, type EntityRecords } from "./records.js";

/** How one entity maps onto its projection table. */
export interface EntityTable<E extends EntityName> {
  readonly table: string;
  /** Indexed columns (besides `data`), each with how to read it from a record. */
  readonly columns: Readonly<Record<string, (record: EntityRecords[E]) => string | number | null>>;
  /** The thread an upsert belongs to, for per-thread event reads. */
  readonly threadId: (record: EntityRecords[E]) => string | null;
  /** True for an upsert that is a tombstone: it deletes the projection row instead of writing it. */
  readonly removes?: (record: EntityRecords[E]) => boolean;
}

type EntityTables = { readonly [E in EntityName]: EntityTable<E> };

export const ENTITY_TABLES: EntityTables = {
  project: {
    table: "projects",
    columns: {
      id: (r) => r.id,
      name: (r) => r.name,
      root_path: (r) => r.rootPath,
      created_at: (r) => r.createdAt,
    },
    threadId: () => null,
    removes: (r) => r.removedAt !== undefined,
  },
  thread: {
    table: "threads",
    columns: {
      id: (r) => r.id,
      project_id: (r) => r.projectId,
      parent_thread_id: (r) => r.lineage.parentThreadId,
      relationship: (r) => r.lineage.relationship,
      provider_instance_id: (r) => r.providerInstanceId,
      title: (r) => r.title,
      deleted: (r) => (r.deletedAt === null ? 0 : 1),
      created_at: (r) => r.createdAt,
      updated_at: (r) => r.updatedAt,
    },
    threadId: (r) => r.id,
  },
  run: {
    table: "runs",
    columns: {
      id: (r) => r.id,
      thread_id: (r) => r.threadId,
      ordinal: (r) => r.ordinal,
      status: (r) => r.status,
      delegated_task_id: (r) => r.delegatedTaskId,
      created_at: (r) => r.createdAt,
    },
    threadId: (r) => r.threadId,
  },
  attempt: {
    table: "attempts",
    columns: {
      id: (r) => r.id,
      run_id: (r) => r.runId,
      thread_id: (r) => r.threadId,
      status: (r) => r.status,
      // Missing and null alike (as json_extract read it).
      provider_session_id: (r) => r.providerSessionId ?? null,
    },
    threadId: (r) => r.threadId,
  },
  item: {
    table: "items",
    columns: {
      id: (r) => r.id,
      thread_id: (r) => r.threadId,
      run_id: (r) => r.runId,
      position: (r) => r.position,
      kind: (r) => r.kind,
    },
    threadId: (r) => r.threadId,
  },
  providerSession: {
    table: "provider_sessions",
    columns: {
      id: (r) => r.id,
      thread_id: (r) => r.threadId,
      provider_instance_id: (r) => r.providerInstanceId,
      status: (r) => r.status,
    },
    threadId: (r) => r.threadId,
  },
  runtimeRequest: {
    table: "runtime_requests",
    columns: {
      id: (r) => r.id,
      thread_id: (r) => r.threadId,
      run_id: (r) => r.runId,
      status: (r) => r.status,
    },
    threadId: (r) => r.threadId,
  },
  contextTransfer: {
    table: "context_transfers",
    columns: {
      id: (r) => r.id,
      kind: (r) => r.kind,
      source_thread_id: (r) => r.sourceThreadId,
      target_thread_id: (r) => r.targetThreadId,
      delegated_task_id: (r) => r.delegatedTaskId,
    },
    threadId: (r) => r.targetThreadId,
  },
  delegatedTask: {
    table: "delegated_tasks",
    columns: {
      id: (r) => r.id,
      parent_thread_id: (r) => r.parentThreadId,
      parent_run_id: (r) => r.parentRunId,
      child_thread_id: (r) => r.childThreadId,
      root_thread_id: (r) => r.rootThreadId,
      status: (r) => r.status,
      // Missing and null alike (as json_extract read it): a record from before the field is unfinalized.
      finalized: (r) => ((r.finalizedAt ?? null) === null ? 0 : 1),
      created_at: (r) => r.createdAt,
    },
    threadId: (r) => r.parentThreadId,
  },
  node: {
    table: "nodes",
    columns: {
      id: (r) => r.id,
      thread_id: (r) => r.threadId,
      run_id: (r) => r.runId,
    },
    threadId: (r) => r.threadId,
  },
  turnUsage: {
    table: "turn_usage",
    columns: {
      id: (r) => r.id,
      run_id: (r) => r.runId,
      thread_id: (r) => r.threadId,
      root_thread_id: (r) => r.rootThreadId,
      input_tokens: (r) => r.inputTokens,
      output_tokens: (r) => r.outputTokens,
      cache_read_tokens: (r) => r.cacheReadInputTokens,
      cache_write_tokens: (r) => r.cacheCreationInputTokens,
      reasoning_tokens: (r) => r.reasoningOutputTokens,
      total_tokens: (r) => r.totalTokens,
      cost_usd: (r) => r.costUsd,
      cost_basis: (r) => r.costBasis,
    },
    threadId: (r) => r.threadId,
  },
  budget: {
    table: "budgets",
    columns: {
      id: (r) => r.id,
      scope: (r) => r.scope,
      thread_id: (r) => r.threadId,
      task_id: (r) => r.taskId,
      root_thread_id: (r) => r.rootThreadId,
      wall_clock_ms: (r) => r.limits.wallClockMs ?? null,
    },
    threadId: (r) => r.threadId,
  },
  scheduledTask: {
    table: "scheduled_tasks",
    columns: {
      id: (r) => r.id,
      project_id: (r) => r.projectId,
      kind: (r) => r.schedule.type,
      enabled: (r) => (r.enabled ? 1 : 0),
      created_at: (r) => r.createdAt,
      authority_id: (r) => (r.authority ? authorityId(r.authority) : null),
    },
    threadId: (r) => r.boundThreadId,
    removes: (r) => r.deletedAt !== undefined,
  },
  scheduledTrigger: {
    table: "scheduled_triggers",
    columns: {
      id: (r) => r.id,
      task_id: (r) => r.scheduledTaskId,
      scheduled_for: (r) => r.scheduledFor,
      outcome: (r) => r.outcome,
      run_id: (r) => r.runId,
      dedupe_key: (r) => r.dedupeKey,
      signature_digest: (r) => r.signatureDigest,
      created_at: (r) => r.createdAt,
    },
    threadId: (r) => r.threadId,
  },
  workspace: {
    table: "workspaces",
    columns: {
      id: (r) => r.id,
      thread_id: (r) => r.threadId,
      project_id: (r) => r.projectId,
      target_thread_id: (r) => r.target.threadId,
      status: (r) => r.status,
    },
    threadId: (r) => r.threadId,
  },
};

export const ENTITY_NAMES = Object.keys(ENTITY_TABLES) as EntityName[];
