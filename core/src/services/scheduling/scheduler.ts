import { inject, injectable } from "tsyringe";
import { type SwitchyardConfig, ConfigToken } from "../../config/config-schema.js";
import { type Engine, EngineToken } from "../../engine/ports.js";
import { type Logger, LoggerToken } from "../../logging/logger.js";
import type { ScheduledTaskRecord } from "../../store/records.js";
import { setAlarm, type Clock, ClockToken } from "../../util/clock.js";
import { isTimed, nextOccurrence, occurrencesFrom } from "./schedule-occurrences.js";
import { ScheduleStanding } from "./schedule-standing.js";
import { lastTimedTrigger } from "./scheduled-run-launch.js";
import { ScheduledTriggerService } from "./scheduled-trigger-service.js";
import { TriggerRetention } from "./trigger-retention.js";

/** How long a task whose firing failed unexpectedly waits before it is tried again (no hot loop). */
const RETRY_AFTER_FAILURE_MS = 30_000;

/**
 * How often the scheduler tends the store on its own: prunes triggers past their age, pauses
 * tasks whose credential lapsed, and looks at the tasks again, which also picks up what a
 * command in another process changed (`switchyard schedules resume` beside a running server),
 * whose events this process never hears.
 */
export const HOUSEKEEPING_INTERVAL_MS = 5 * 60_000;

/**
 * The app scheduler: fires interval and fixed-time tasks when they are due. Timer-driven, on
 * the injectable clock, never polling: one alarm for the earliest next occurrence, re-armed when
 * a task changes (a committed scheduledTask event), when the clock jumps, and after each sweep.
 * Its state is the store's: on start (after a restart or kill -9) the first sweep fires every
 * occurrence that came due while it was down, once per task (see `ScheduledTriggerService`).
 * The host starts it after reconciling and stops it first.
 */
@injectable()
export class Scheduler {
  private running = false;
  /** When this scheduler started: an occurrence due before then was missed while no engine ran. */
  private startedAtMs = 0;
  private cancelAlarm: (() => void) | null = null;
  private cancelHousekeeping: (() => void) | null = null;
  private sweeping: Promise<void> | null = null;
  private sweepAgain = false;
  private readonly unsubscribers: (() => void)[] = [];
  /** Tasks whose firing threw, and when they may be tried again. */
  private readonly retryAt = new Map<string, number>();

  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(ClockToken) private readonly clock: Clock,
    @inject(ConfigToken) private readonly config: SwitchyardConfig,
    @inject(LoggerToken) private readonly logger: Logger,
    private readonly triggers: ScheduledTriggerService,
    private readonly standing: ScheduleStanding,
    private readonly retention: TriggerRetention,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.startedAtMs = this.clock.nowMs();
    this.unsubscribers.push(
      this.engine.onChanges(({ changes }) => {
        if (changes.some((change) => change.entity === "scheduledTask")) this.wake();
      }),
    );
    const unsubscribeJump = this.clock.onJump?.(() => this.wake());
    if (unsubscribeJump !== undefined) this.unsubscribers.push(unsubscribeJump);
    void this.housekeeping();
    this.wake();
  }

  /** Tends the store now and every HOUSEKEEPING_INTERVAL_MS (see there). */
  private async housekeeping(): Promise<void> {
    this.cancelHousekeeping = null;
    if (!this.running || !this.engine.store.isOpen()) return;
    try {
      // The pause commits before this call returns (its transaction is synchronous), so the
      // first wake after start fires nothing a lapsed credential made.
      await this.standing.pauseLapsed();
      await this.retention.pruneAll();
    } catch (error) {
      this.logger.error("scheduled task housekeeping failed", { error: (error as Error).message });
    }
    if (!this.running) return;
    this.wake();
    this.cancelHousekeeping = setAlarm(
      this.clock,
      this.clock.nowMs() + HOUSEKEEPING_INTERVAL_MS,
      () => void this.housekeeping(),
    );
  }

  /** Stops firing and waits for a sweep in progress. */
  async stop(): Promise<void> {
    this.running = false;
    this.cancelAlarm?.();
    this.cancelAlarm = null;
    this.cancelHousekeeping?.();
    this.cancelHousekeeping = null;
    for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe();
    await this.settled();
  }

  /** Resolves once no sweep is in progress (tests wait on it after moving the clock). */
  async settled(): Promise<void> {
    while (this.sweeping !== null) await this.sweeping;
  }

  /** Looks at the tasks now: fires what is due, then arms the alarm for the next occurrence. */
  wake(): void {
    if (!this.running) return;
    if (this.sweeping !== null) {
      this.sweepAgain = true;
      return;
    }
    this.sweeping = this.sweep().finally(() => {
      this.sweeping = null;
    });
  }

  private async timedTasks(): Promise<ScheduledTaskRecord[]> {
    return await this.engine.reader.select("scheduledTask", "enabled = 1 AND kind != 'webhook'");
  }

  /** A task's next occurrence (an overdue one included), or null. */
  private async nextFor(task: ScheduledTaskRecord): Promise<number | null> {
    if (!isTimed(task.schedule)) return null;
    const from = occurrencesFrom(task, (await lastTimedTrigger(this.engine.reader, task.id))?.scheduledFor ?? null);
    const next = nextOccurrence(task.schedule, Date.parse(task.anchorAt), from, this.config.scheduling.timeZone);
    if (next === null) return null;
    const retry = this.retryAt.get(task.id);
    return retry !== undefined ? Math.max(next, retry) : next;
  }

  private async sweep(): Promise<void> {
    do {
      this.sweepAgain = false;
      if (!this.running || !this.engine.store.isOpen()) return;
      const now = this.clock.nowMs();
      const due = [];
      for (const task of await this.timedTasks()) {
        const next = await this.nextFor(task);
        if (next !== null && next <= now) due.push(task);
      }
      await Promise.all(
        due.map(async (task) => {
          try {
            await this.triggers.fireDue(task.id, { schedulerStartedAtMs: this.startedAtMs });
            this.retryAt.delete(task.id);
          } catch (error) {
            this.retryAt.set(task.id, this.clock.nowMs() + RETRY_AFTER_FAILURE_MS);
            this.logger.error("scheduled task trigger failed", {
              scheduledTaskId: task.id,
              error: (error as Error).message,
            });
          }
        }),
      );
    } while (this.sweepAgain && this.running);
    await this.arm();
  }

  private async arm(): Promise<void> {
    this.cancelAlarm?.();
    this.cancelAlarm = null;
    if (!this.running || !this.engine.store.isOpen()) return;
    let earliest: number | null = null;
    for (const task of await this.timedTasks()) {
      const next = await this.nextFor(task);
      if (next !== null && (earliest === null || next < earliest)) earliest = next;
    }
    if (earliest !== null) this.cancelAlarm = setAlarm(this.clock, earliest, () => this.wake());
  }
}
