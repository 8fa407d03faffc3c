import { inject, injectable } from "tsyringe";
import { EngineToken, type Engine } from "../../engine/ports.js";
import { OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import type { RunRecord, RuntimeRequestRecord } from "../../store/records.js";

/**
 * Two reads of the host's thread API that no transport calls (`host.threads.runs`,
 * `host.threads.pendingRequests`): tests, the plugins' host tests among them, read a thread's
 * runs and pending requests through them. They read committed state through `Engine.reader`.
 */
@injectable()
export class HostTestReads {
  constructor(@inject(EngineToken) private readonly engine: Engine) {}

  /** A thread's runs, newest first; `thread_not_found` for a missing or deleted thread. */
  async runs(threadId: string, limit = 20): Promise<RunRecord[]> {
    await this.requireThread(threadId);
    return this.engine.reader.select(
      "run",
      "thread_id = ?",
      [threadId],
      `ORDER BY ordinal DESC LIMIT ${Math.max(1, Math.floor(limit))}`,
    );
  }

  /** A thread's pending runtime requests, oldest first. */
  async pendingRequests(threadId: string): Promise<RuntimeRequestRecord[]> {
    await this.requireThread(threadId);
    return this.engine.reader.select(
      "runtimeRequest",
      "thread_id = ? AND status = 'pending'",
      [threadId],
      "ORDER BY rowid",
    );
  }

  private async requireThread(threadId: string): Promise<void> {
    const thread = await this.engine.reader.get("thread", threadId);
    if (thread === null || thread.deletedAt !== null)
      throw new OrchestratorFailure("thread_not_found", `Thread ${threadId} does not exist.`, { threadId });
  }
}
