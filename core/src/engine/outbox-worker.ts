import { type Logger, LoggerToken } from "../logging/logger.js";
import type { OutboxAgenda, OutboxEffect } from "../store/ports.js";
import { type Clock, ClockToken } from "../util/clock.js";
import { type Engine, EffectExecutorToken, EngineToken } from "./ports.js";
import type { EffectRunner, EffectWorker } from "./ports.js";
import { inject, injectable } from "tsyringe";
import { isStoreBusy } from "../util/store-busy.js";
import { BUSY_RETRY_MAX_MS, recordWhenStoreFree } from "./busy-store-retry.js";

/**
 * Runs outbox effects: one at a time per lane (thread), lanes in parallel. Woken by commits that
 * queue effects and by the timer of the next delayed effect; it never polls.
 */
@injectable()
export class OutboxWorker implements EffectWorker {
  private readonly busyLanes = new Set<string>();
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private scheduled = false;
  private ticking = false;
  private tickAgain = false;
  private unsubscribe: (() => void) | null = null;

  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(EffectExecutorToken) private readonly executor: EffectRunner,
    @inject(ClockToken) private readonly clock: Clock,
    @inject(LoggerToken) private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.unsubscribe = this.engine.onEffectsQueued(() => this.schedule());
    this.schedule();
  }

  /** Stops taking new effects and waits for the ones in flight. */
  async stop(): Promise<void> {
    this.running = false;
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    await Promise.allSettled([...this.inFlight]);
  }

  /** Resolves when no effect is in flight or due (tests use it to wait for quiescence). */
  async drain(): Promise<void> {
    for (;;) {
      if (this.inFlight.size === 0 && (await this.engine.reader.dueEffects(this.clock.nowMs())).length === 0) return;
      await Promise.race([...this.inFlight, new Promise((resolve) => setTimeout(resolve, 5))]);
    }
  }

  private schedule(): void {
    if (!this.running || this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.tick();
    });
  }

  /** One tick at a time: a tick asked for while one reads or claims runs when that one is done. */
  private tick(): void {
    if (!this.running || !this.engine.store.isOpen()) return;
    if (this.ticking) {
      this.tickAgain = true;
      return;
    }
    this.ticking = true;
    const claiming = this.claimDue();
    this.inFlight.add(claiming);
    void claiming.finally(() => {
      this.inFlight.delete(claiming);
      this.ticking = false;
      if (!this.tickAgain) return;
      this.tickAgain = false;
      this.schedule();
    });
  }

  private async claimDue(): Promise<void> {
    const now = this.clock.nowMs();
    // When the next effect not claimed now becomes due (the timer's time): read with the due
    // effects, the ones left pending (a lane busy) added as they are passed over.
    let next: number | null | undefined;
    try {
      const agenda = await this.engine.reader.outboxAgenda(now);
      // The claims wait for a command's transaction under way (they would join it otherwise);
      // with none open they run now, in this turn. Each claim is one statement that takes only
      // a pending effect, so an agenda a commit overtook claims nothing twice.
      next = await this.engine.store.writeAsync(() => this.claim(agenda, now));
    } catch (error) {
      if (!isStoreBusy(error)) throw error;
      // Another connection holds the database locked: claim the effects when it lets go.
      this.logger.warn("the database is locked by another connection; effects wait for it", {
        error: (error as Error).message,
      });
      this.retryTickLater();
      return;
    }
    if (next !== undefined) this.armTimer(next);
  }

  /** Claims and runs the agenda's due effects of free lanes; when the next one is due (undefined: stopped). */
  private claim(agenda: OutboxAgenda, now: number): number | null | undefined {
    if (!this.running || !this.engine.store.isOpen()) return undefined;
    let next = agenda.laterDueAt;
    for (const effect of agenda.due) {
      if (this.busyLanes.has(effect.lane)) {
        next = next === null ? effect.availableAt : Math.min(next, effect.availableAt);
        continue;
      }
      // One another worker claimed first is not pending any more.
      if (!this.engine.store.claimEffect(effect.id, now)) continue;
      this.run(effect);
    }
    return next;
  }

  private retryTickLater(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.schedule(), BUSY_RETRY_MAX_MS);
    this.timer.unref();
  }

  private armTimer(next: number | null): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (next === null) return;
    const delay = Math.max(0, next - this.clock.nowMs());
    if (delay === 0) return;
    this.timer = setTimeout(() => this.schedule(), delay);
    this.timer.unref();
  }

  private run(effect: OutboxEffect): void {
    this.busyLanes.add(effect.lane);
    const task = (async () => {
      const isOpen = () => this.engine.store.isOpen();
      try {
        let outcome: { status: "done" | "failed"; error: string | null } | null;
        try {
          await this.executor.execute(effect);
          outcome = { status: "done", error: null };
        } catch (error) {
          if (isStoreBusy(error)) {
            // The effect wrote nothing its retry would repeat (the executor records what a
            // provider did before it gives up): run it again once the lock is gone.
            this.logger.warn("an outbox effect waits for the database, locked by another connection", {
              id: effect.id,
              type: effect.type,
            });
            outcome = null;
          } else {
            this.logger.error("outbox effect failed", {
              id: effect.id,
              type: effect.type,
              error: (error as Error).message,
            });
            outcome = { status: "failed", error: (error as Error).message };
          }
        }
        if (outcome === null) {
          await recordWhenStoreFree(
            () =>
              this.engine.store.writeAsync(() =>
                this.engine.store.retryEffect(
                  effect.id,
                  this.clock.nowMs() + BUSY_RETRY_MAX_MS,
                  "the database was locked by another connection",
                  this.clock.nowIso(),
                ),
              ),
            isOpen,
            this.logger,
            `retry of effect ${effect.id}`,
          );
        } else {
          const settled = outcome;
          await recordWhenStoreFree(
            () =>
              this.engine.store.writeAsync(() =>
                this.engine.store.settleEffect(effect.id, settled.status, settled.error, this.clock.nowIso()),
              ),
            isOpen,
            this.logger,
            `settling effect ${effect.id}`,
          );
        }
      } finally {
        this.busyLanes.delete(effect.lane);
      }
    })();
    this.inFlight.add(task);
    void task.finally(() => {
      this.inFlight.delete(task);
      this.schedule();
    });
  }
}
