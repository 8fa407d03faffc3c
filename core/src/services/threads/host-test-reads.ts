import { inject, injectable } from "tsyringe";
import { EngineToken, type Engine } from "../../engine/ports.js";
import { OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import type { RunRecord, RuntimeRequestRecord } from "../../store/records.js";

/**
 * The two reads of the host's thread API that stay synchronous (`host.threads.runs`,
 * `host.threads.pendingRequests`): no transport calls them, only tests, and the plugins' host
 * tests read them synchronously (plugins/* change with the port itself). Every other read
 * outside a command goes through `Engine.reader`; these join it when the port becomes async.
 */
@injectable()
export class HostTestReads {
  constructor(@inject(EngineToken) private readonly engine: Engine) {}

  /** A thread's runs, newest first; `thread_not_found` for a missing or deleted thread. */
  runs(threadId: string, limit = 20): RunRecord[] {
    this.requireThread(threadId);
    // eslint-disable-next-line no-restricted-syntax -- synchronous by design, see the class
    return this.engine.store.select(
      "run",
      "thread_id = ?",
      [threadId],
      `ORDER BY ordinal DESC LIMIT ${Math.max(1, Math.floor(limit))}`,
    );
  }

  /** A thread's pending runtime requests, oldest first. */
  pendingRequests(threadId: string): RuntimeRequestRecord[] {
    this.requireThread(threadId);
    // eslint-disable-next-line no-restricted-syntax -- synchronous by design, see the class
    return this.engine.store.select(
      "runtimeRequest",
      "thread_id = ? AND status = 'pending'",
      [threadId],
      "ORDER BY rowid",
    );
  }

  private requireThread(threadId: string): void {
    // eslint-disable-next-line no-restricted-syntax -- synchronous by design, see the class
    const thread = this.engine.store.get("thread", threadId);
    if (thread === null || thread.deletedAt !== null)
      throw new OrchestratorFailure("thread_not_found", `Thread ${threadId} does not exist.`, { threadId });
  }
}
