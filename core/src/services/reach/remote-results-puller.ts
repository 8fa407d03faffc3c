import { setTimeout as sleep } from "node:timers/promises";
import { inject, injectable } from "tsyringe";
import { type Engine, EngineToken } from "../../engine/ports.js";
import { type Logger, LoggerToken } from "../../logging/logger.js";
import { environmentId } from "../../store/settings.js";
import { ReachLinkCalls } from "./link-calls.js";
import { RemoteTasks, type RemoteTaskResult } from "./remote-tasks.js";

/** How long one hand-over waits on the other side for a result (woken there by commits). */
export const RESULTS_WAIT_MS = 25_000;
/** The first and the longest pause before calling an unreachable link again. */
const FIRST_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 2_000;

/**
 * Takes the results of tasks delegated to linked environments, once each: per link with tasks
 * still owed, one loop of long waits on the other side's outbox (`delegated_task_results`, which
 * answers the moment a result is there), each acknowledging what the previous one took once its
 * receipt here committed. When the link is cut or the other side restarts, the loop calls again
 * after a bounded backoff and catches up on whatever finished meanwhile; on start, every link with
 * tasks owed is caught up the same way, so a restart of this side loses nothing either. The loop
 * ends when nothing is owed on its link (and is started again by the next delegation).
 */
@injectable()
export class RemoteResultsPuller {
  private readonly loops = new Map<string, Promise<void>>();
  private readonly stopping = new AbortController();
  private started = false;

  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(LoggerToken) private readonly logger: Logger,
    private readonly calls: ReachLinkCalls,
    private readonly tasks: RemoteTasks,
  ) {}

  /** Catches up every link with tasks owed (what finished while this side was down). */
  async start(): Promise<void> {
    this.started = true;
    for (const linkName of await this.tasks.linksWithOutstanding()) this.wake(linkName);
  }

  /** Makes sure a link's results are being taken. */
  wake(linkName: string): void {
    if (!this.started || this.stopping.signal.aborted || this.loops.has(linkName)) return;
    const loop = this.loop(linkName).finally(() => {
      this.loops.delete(linkName);
      // A delegation recorded while the loop was ending needs a loop of its own.
      void this.wakeIfOwed(linkName);
    });
    this.loops.set(linkName, loop);
  }

  /** Wakes a link's loop again when a task behind it is still owed (read after its loop ended). */
  private async wakeIfOwed(linkName: string): Promise<void> {
    if (this.stopping.signal.aborted) return;
    try {
      if ((await this.tasks.outstanding(linkName)).length > 0) this.wake(linkName);
    } catch (error) {
      // A store closed meanwhile (the host stopping): the next start catches the link up.
      if (!this.stopping.signal.aborted)
        this.logger.warn("remote results: could not read what a link owes", {
          link: linkName,
          error: (error as Error).message,
        });
    }
  }

  /** Stops every loop (their waits there are cancelled); what they had not acknowledged is handed over again next time. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await Promise.allSettled([...this.loops.values()]);
  }

  private async loop(linkName: string): Promise<void> {
    let acknowledge: string[] = [];
    let backoff = FIRST_BACKOFF_MS;
    const meta = {
      environmentId: environmentId(this.engine.store),
      callerThreadId: null,
      ceiling: { runtimeMode: "approval-required", interactionMode: "plan" },
    };
    while (!this.stopping.signal.aborted) {
      const owed = (await this.tasks.outstanding(linkName)).length > 0;
      // Nothing owed and nothing to acknowledge: the loop's work is done.
      if (!owed && acknowledge.length === 0) return;
      try {
        const answer = await this.calls.call(
          linkName,
          "delegated_task_results",
          { acknowledge, waitMs: owed ? RESULTS_WAIT_MS : 0 },
          meta,
          { signal: this.stopping.signal },
        );
        acknowledge = [];
        backoff = FIRST_BACKOFF_MS;
        const results = Array.isArray(answer.results) ? (answer.results as RemoteTaskResult[]) : [];
        for (const result of results) {
          // The receipt commits before the acknowledgement goes out: a crash between them
          // only hands the result over again, and the receipt takes it once.
          await this.tasks.receive(linkName, result);
          acknowledge.push(result.taskId);
        }
      } catch (error) {
        if (this.stopping.signal.aborted) return;
        const details = (error as { details?: { reason?: unknown } }).details;
        // A link removed here, or a grant refused there, does not heal by calling again.
        if (
          typeof details?.reason === "string" &&
          (details.reason === "unknown_environment" ||
            details.reason === "unknown_link" ||
            details.reason.startsWith("grant_") ||
            details.reason === "link_secret_unusable")
        ) {
          this.logger.warn("remote results: link unusable", { link: linkName, reason: String(details.reason) });
          return;
        }
        this.logger.info("remote results: link unreachable, calling again", {
          link: linkName,
          backoffMs: backoff,
          error: (error as Error).message.slice(0, 200),
        });
        await sleep(backoff, undefined, { signal: this.stopping.signal }).catch(() => undefined);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  }
}
