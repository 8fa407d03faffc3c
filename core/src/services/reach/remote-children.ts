import { inject, injectable } from "tsyringe";
import { type Engine, EngineToken } from "../../engine/ports.js";
import { OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import type { Caller } from "../caller.js";
import { ReachForwarder } from "./reach-forwarder.js";
import { RemoteTasks, type RemoteTask } from "./remote-tasks.js";

/**
 * How long a listing waits for each linked environment's task_status: a panel a person looks at
 * must not hang on a peer that does not answer.
 */
export const REMOTE_STATUS_TIMEOUT_MS = 3_000;

/** A child a thread delegated to a linked environment, as a thread's views show it. */
export interface RemoteChild {
  /** The link's name here (what `environmentId` takes). */
  readonly environment: string;
  /** The other environment's own id (the one in its links). */
  readonly environmentId: string;
  readonly taskId: string;
  readonly childThreadId: string;
  readonly childThreadLink: string;
  /** The child's page in the other environment's web UI, as that environment sent it. */
  readonly childThreadWebUrl?: string;
  readonly title: string;
  /** The task's status there; `unreachable` when it is not finished here and the other side did not answer (see `problem`). */
  readonly status:
    "queued" | "running" | "waiting" | "completed" | "failed" | "cancelled" | "interrupted" | "unreachable";
  /** Where the status comes from: the result received here, or the other side's answer now. */
  readonly statusFrom: "receipt" | "environment" | "none";
  readonly workState: "working" | "waiting_for_children" | "result_available" | null;
  readonly providerInstanceId: string | null;
  readonly model: string | null;
  /** The published result (its last reply) once it finished. */
  readonly summary: string | null;
  readonly createdAt: string;
  /** When its result arrived here. */
  readonly finishedAt: string | null;
  /** Why the other side's status is missing (it did not answer, refused, or this caller may not ask). */
  readonly problem: { readonly code: string; readonly reason: string; readonly message: string } | null;
}

const LIVE_STATUSES = new Set(["queued", "running", "waiting", "completed", "failed", "cancelled", "interrupted"]);

/**
 * A thread's children in linked environments: what this side knows (the task's row and, once it
 * arrived, its result's receipt) first; for a task not finished here, the other side's
 * task_status through the link, bounded, so one unreachable environment shows as such on its own
 * rows and never fails the listing. A result that answer carries is received here as the puller
 * would (once).
 */
@injectable()
export class RemoteChildren {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    private readonly tasks: RemoteTasks,
    private readonly forwarder: ReachForwarder,
  ) {}

  /** The remote children of a thread the caller may read (its project scope was checked by the caller), oldest first. */
  async ofThread(caller: Caller, threadId: string): Promise<RemoteChild[]> {
    const thread = await this.engine.reader.get("thread", threadId);
    if (thread === null || thread.deletedAt !== null)
      throw new OrchestratorFailure("thread_not_found", `Thread ${threadId} does not exist.`, { threadId });
    // In parallel: each view may ask its environment (a network call), outside any transaction.
    return Promise.all((await this.tasks.ofParent(threadId)).map((task) => this.view(caller, task)));
  }

  private async view(caller: Caller, task: RemoteTask): Promise<RemoteChild> {
    const known = {
      environment: task.linkName,
      environmentId: task.environmentId,
      taskId: task.remoteTaskId,
      childThreadId: task.childThreadId,
      childThreadLink: task.childThreadLink,
      ...(task.childThreadWebUrl !== undefined ? { childThreadWebUrl: task.childThreadWebUrl } : {}),
      title: task.title,
      providerInstanceId: task.providerInstanceId ?? null,
      model: task.model ?? null,
      createdAt: task.createdAt,
    };
    if (task.receivedAt !== null && task.status !== null) {
      return {
        ...known,
        status: statusOf(task.status),
        statusFrom: "receipt",
        workState: "result_available",
        summary: task.summary,
        finishedAt: task.receivedAt,
        problem: null,
      };
    }
    try {
      const answer = await withinBound(
        this.forwarder.forward(caller, "task_status", { taskId: task.remoteTaskId }, task.linkName, {
          signal: AbortSignal.timeout(REMOTE_STATUS_TIMEOUT_MS),
        }),
      );
      // The answer may have carried the result: the row then holds its receipt.
      const received = await this.tasks.get(task.linkName, task.remoteTaskId);
      return {
        ...known,
        providerInstanceId:
          typeof answer.providerInstanceId === "string" ? answer.providerInstanceId : known.providerInstanceId,
        model: typeof answer.model === "string" ? answer.model : known.model,
        status: statusOf(answer.status),
        statusFrom: "environment",
        workState:
          answer.workState === "working" ||
          answer.workState === "waiting_for_children" ||
          answer.workState === "result_available"
            ? answer.workState
            : null,
        summary: typeof answer.summary === "string" ? answer.summary : null,
        finishedAt: received?.receivedAt ?? null,
        problem: null,
      };
    } catch (error) {
      const failure = error as { code?: unknown; message?: string; details?: { reason?: unknown }; name?: string };
      const timedOut = failure.name === "TimeoutError" || failure.name === "AbortError";
      return {
        ...known,
        status: "unreachable",
        statusFrom: "none",
        workState: null,
        summary: null,
        finishedAt: null,
        problem: {
          // A timeout's DOMException has a numeric code: only a typed failure's code is one of ours.
          code: typeof failure.code === "string" && !timedOut ? failure.code : "provider_unavailable",
          reason:
            typeof failure.details?.reason === "string" ? failure.details.reason : timedOut ? "timeout" : "unreachable",
          message: timedOut
            ? `Environment ${task.linkName} did not answer task_status within ${REMOTE_STATUS_TIMEOUT_MS} ms.`
            : String(failure.message ?? error).slice(0, 300),
        },
      };
    }
  }
}

function statusOf(status: unknown): RemoteChild["status"] {
  return typeof status === "string" && LIVE_STATUSES.has(status) ? (status as RemoteChild["status"]) : "unreachable";
}

/** The answer, or a TimeoutError once the bound passed (opening the connection is not covered by the request's signal). */
async function withinBound<T>(call: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new DOMException("task_status timed out", "TimeoutError")),
      REMOTE_STATUS_TIMEOUT_MS + 250,
    );
  });
  try {
    return await Promise.race([call, bound]);
  } finally {
    clearTimeout(timer);
  }
}
