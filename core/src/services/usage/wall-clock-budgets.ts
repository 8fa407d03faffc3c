import { inject, injectable } from "tsyringe";
import { type Engine, EngineToken } from "../../engine/ports.js";
import { type Logger, LoggerToken } from "../../logging/logger.js";
import { type Clock, ClockToken } from "../../util/clock.js";
import { TreeBudgets } from "./tree-budgets.js";

/** setTimeout's longest delay; a longer wait is taken in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** A check that failed is not retried in a tight loop. */
const RETRY_AFTER_ERROR_MS = 1_000;

/**
 * The timer behind wall-clock budgets: one timeout for the next deadline of any running tree,
 * re-armed whenever tasks or budgets change, and checked at start, so deadlines that passed
 * while the host was down stop their trees at boot. Deadlines come from durable records
 * (a task's creation, the oldest unfinished task of a root thread), so nothing is lost in a
 * restart; time is the injected clock's, so a test can move it.
 */
@injectable()
export class WallClockBudgets {
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private unsubscribeJump: (() => void) | null = null;
  private rearmQueued = false;
  private running = false;

  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(ClockToken) private readonly clock: Clock,
    @inject(LoggerToken) private readonly logger: Logger,
    private readonly budgets: TreeBudgets,
  ) {}

  /** Starts watching (the host calls this after boot reconciliation). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.unsubscribe = this.engine.onChanges(({ changes }) => {
      if (changes.some((change) => change.entity === "delegatedTask" || change.entity === "budget")) this.queueRearm();
    });
    // A clock a test moves: the timer was armed for the old time.
    this.unsubscribeJump = this.clock.onJump?.(() => this.queueRearm()) ?? null;
    void this.check();
  }

  /** Stops the timer. */
  stop(): void {
    this.running = false;
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.unsubscribeJump?.();
    this.unsubscribeJump = null;
    this.clearTimer();
  }

  /** Stops every tree whose wall clock has run out now, then waits for the next deadline. */
  async check(): Promise<number> {
    if (!this.running || !this.engine.store.isOpen()) return 0;
    let stopped = 0;
    try {
      stopped = await this.engine.apply((ctx) => this.budgets.enforceWallClocks(ctx));
      if (stopped > 0) this.logger.info("wall-clock budgets stopped delegation trees", { trees: stopped });
    } catch (error) {
      this.logger.error("checking wall-clock budgets failed; trying again in a second", {
        error: (error as Error).message,
      });
      await this.arm(RETRY_AFTER_ERROR_MS);
      return 0;
    }
    await this.arm();
    return stopped;
  }

  // Events come in batches (one per commit); one re-arm per turn of the event loop is enough.
  private queueRearm(): void {
    if (this.rearmQueued) return;
    this.rearmQueued = true;
    setImmediate(() => {
      this.rearmQueued = false;
      void this.arm();
    });
  }

  /** Sets the timer for the next deadline; never rejects (a failed read checks again in a second). */
  private async arm(minimumDelayMs = 0): Promise<void> {
    this.clearTimer();
    if (!this.running || !this.engine.store.isOpen()) return;
    let deadline: number | null;
    try {
      deadline = await this.budgets.nextWallClockDeadline(this.engine.reader);
    } catch (error) {
      this.logger.error("reading wall-clock deadlines failed; checking again in a second", {
        error: (error as Error).message,
      });
      deadline = this.clock.nowMs() + RETRY_AFTER_ERROR_MS;
    }
    // Another arm may have set the timer while this one read; the later reading wins.
    this.clearTimer();
    if (deadline === null || !this.running) return;
    const delay = Math.min(MAX_TIMER_MS, Math.max(minimumDelayMs, deadline - this.clock.nowMs()));
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.check();
    }, delay);
    this.timer.unref();
  }

  private clearTimer(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
