import { inject, injectable } from "tsyringe";
import { EngineToken, type Engine } from "../../engine/ports.js";
import { isTerminalRunStatus, type RunRecord, type RuntimeRequestRecord } from "../../store/records.js";
import { EventWaiter, PROGRESS_HEARTBEAT_MS } from "../event-waiter.js";
import { LiveWaits } from "../live-waits.js";
import { ThreadCommands } from "./thread-commands.js";

/** A pending request that needs someone's answer, as a wait reports it. */
export interface AttentionRequest {
  /** A blocking question (user input) or an approval. */
  readonly kind: "question" | "approval";
  readonly request: RuntimeRequestRecord;
  /** The durable event sequence that opened it: the cursor that skips it next time. */
  readonly sequence: number;
}

/** A wait's outcome. */
export interface RunWaitResult {
  readonly threadId: string;
  /** The run waited on, or null when the thread had none. */
  readonly run: RunRecord | null;
  /** True when the wait ended by timeout (the run still works). */
  readonly timedOut: boolean;
  /**
   * What ended the wait: the thread had no run (`idle`), the run ended (`run_finished`), a
   * request that needs an answer opened after the cursor (`question`, `approval`), or time.
   */
  readonly endedBy: "idle" | "run_finished" | "question" | "approval" | "timeout";
  /** The request that ended the wait (`question` or `approval`), else null. */
  readonly attention: AttentionRequest | null;
  /** Pass it to the next wait so the requests already reported do not end it again. */
  readonly cursor: number;
}

/** Waits on a thread's run: until it ends, a request that needs an answer opens, or time runs out. */
@injectable()
export class RunWaits {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    private readonly commands: ThreadCommands,
    private readonly waiter: EventWaiter,
    private readonly liveWaits: LiveWaits,
  ) {}

  /**
   * Waits for a run to become terminal. Without `runId` it pins the latest run at call time; an
   * idle thread returns at once. A timeout reports the latest status and cancels nothing. While
   * it blocks, the waiting thread (when an agent waits) shows `blockedOnThreadWait`.
   */
  async waitForRun(request: {
    threadId: string;
    runId?: string;
    timeoutMs: number;
    /**
     * Also end the wait when a request that needs an answer opens (t3_thread_wait); requests
     * opened at or before `cursor` (an event sequence) were reported already and do not.
     * Without it the wait ends only with the run.
     */
    attention?: { cursor: number };
    signal?: AbortSignal;
    onProgress?: () => void;
    /** The thread whose agent is waiting, if any. */
    waiterThreadId?: string | null;
  }): Promise<RunWaitResult> {
    const cursor = request.attention?.cursor ?? 0;
    const pinned = await this.commands.selectRun(request.threadId, request.runId, "wait");
    if (pinned === null)
      return { threadId: request.threadId, run: null, timedOut: false, endedBy: "idle", attention: null, cursor };
    const check = async (): Promise<RunWaitResult | null> => {
      const run = await this.engine.reader.get("run", pinned.id);
      if (run !== null && isTerminalRunStatus(run.status))
        return { threadId: request.threadId, run, timedOut: false, endedBy: "run_finished", attention: null, cursor };
      const attention = request.attention === undefined ? null : await this.attentionAfter(request.threadId, cursor);
      if (attention === null) return null;
      return {
        threadId: request.threadId,
        run,
        timedOut: false,
        endedBy: attention.kind,
        attention,
        cursor: attention.sequence,
      };
    };
    const now = await check();
    if (now !== null) return now;
    const endLiveWait = this.liveWaits.begin({
      kind: "t3_thread_wait",
      waiterThreadId: request.waiterThreadId ?? null,
      subjectId: pinned.id,
    });
    try {
      const done = await this.waiter.waitFor(check, {
        timeoutMs: request.timeoutMs,
        ...(request.signal ? { signal: request.signal } : {}),
        ...(request.onProgress ? { onProgress: request.onProgress, heartbeatMs: PROGRESS_HEARTBEAT_MS } : {}),
        threadIds: [request.threadId],
        relevant: (change) =>
          (change.entity === "run" && change.id === pinned.id) ||
          (change.entity === "runtimeRequest" && change.threadId === request.threadId),
      });
      return (
        done ?? {
          threadId: request.threadId,
          run: await this.engine.reader.get("run", pinned.id),
          timedOut: true,
          endedBy: "timeout",
          attention: null,
          cursor,
        }
      );
    } finally {
      endLiveWait();
    }
  }

  /**
   * The oldest pending request of a thread that needs an answer and opened after `cursor`: a
   * blocking question or an approval (a non-blocking question lets the agent work on, so it
   * ends no wait, as in delegate_task). Ordered by the event that opened each request.
   */
  private async attentionAfter(threadId: string, cursor: number): Promise<AttentionRequest | null> {
    const pending = (
      await this.engine.reader.select("runtimeRequest", "thread_id = ? AND status = 'pending'", [threadId])
    ).filter((pendingRequest) => pendingRequest.kind === "approval" || pendingRequest.blocking);
    if (pending.length === 0) return null;
    const sequenced: { request: RuntimeRequestRecord; sequence: number }[] = [];
    for (const pendingRequest of pending)
      sequenced.push({
        request: pendingRequest,
        sequence: (await this.engine.reader.firstUpsertSequence("runtimeRequest", pendingRequest.id)) ?? 0,
      });
    const candidates = sequenced
      .filter((candidate) => candidate.sequence > cursor)
      .sort((a, b) => a.sequence - b.sequence);
    const first = candidates[0];
    if (first === undefined) return null;
    return {
      kind: first.request.kind === "approval" ? "approval" : "question",
      request: first.request,
      sequence: first.sequence,
    };
  }
}
