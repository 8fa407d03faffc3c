import { inject, injectable } from "tsyringe";
import { type SwitchyardConfig, ConfigToken } from "../../config/config-schema.js";
import { type Engine, EngineToken } from "../../engine/ports.js";
import { type Logger, LoggerToken } from "../../logging/logger.js";
import { isTerminalRunStatus, type ScheduledTriggerRecord } from "../../store/records.js";
import { ScheduledTriggersTable } from "../../store/tables/scheduled-triggers.js";
import { lastTimedTrigger } from "./scheduled-run-launch.js";

/** How many triggers one prune removes at most (the next trigger or sweep takes the rest). */
const PRUNE_BATCH = 500;

/**
 * Keeps a task's triggers within `scheduling.triggerRetention`: its newest `maxPerTask`, none
 * older than `maxAgeMs`. A trigger goes with its event and its command's receipt, so a flood of
 * webhook requests cannot grow the store without bound. Some are never removed: a trigger whose
 * run has not finished (its run links to it), the newest timed trigger (a task's next occurrence
 * counts from it; without it, past occurrences would be due again), and any trigger a window
 * still reads (the replay window for signed requests, the dedupe window, the rate limit's).
 */
@injectable()
export class TriggerRetention {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(ConfigToken) private readonly config: SwitchyardConfig,
    @inject(LoggerToken) private readonly logger: Logger,
  ) {}

  /**
   * Prunes one task's triggers (after it recorded one); returns how many went. Its reads are
   * awaited, so a command may commit between them and the removal; what it removes stays
   * removable all the same: a trigger keeps the run it was recorded with, a finished run stays
   * finished, the candidates are older than every window that reads them, and a newer timed
   * trigger only makes the one kept as newest older still.
   */
  async pruneTask(taskId: string): Promise<number> {
    return this.engine.store.writeAsync(() => this.pruneTaskNow(taskId));
  }

  private async pruneTaskNow(taskId: string): Promise<number> {
    const { maxPerTask, maxAgeMs } = this.config.scheduling.triggerRetention;
    const nowMs = this.engine.clock.nowMs();
    const beyondCount =
      (await this.engine.reader.count("scheduledTrigger", "task_id = ?", [taskId])) > maxPerTask
        ? await this.engine.reader.select(
            "scheduledTrigger",
            "task_id = ?",
            [taskId],
            `ORDER BY created_at DESC, rowid DESC LIMIT ${PRUNE_BATCH} OFFSET ${maxPerTask}`,
          )
        : [];
    const tooOld = await this.engine.reader.select(
      "scheduledTrigger",
      "task_id = ? AND created_at < ?",
      [taskId, new Date(nowMs - maxAgeMs).toISOString()],
      `ORDER BY created_at LIMIT ${PRUNE_BATCH}`,
    );
    return await this.forget(taskId, [...beyondCount, ...tooOld], nowMs);
  }

  /** Prunes every task's triggers by age, deleted tasks' included (at start, and from time to time). */
  async pruneAll(): Promise<number> {
    const cutoff = new Date(this.engine.clock.nowMs() - this.config.scheduling.triggerRetention.maxAgeMs).toISOString();
    let pruned = 0;
    for (const taskId of await new ScheduledTriggersTable(this.engine.store).taskIdsWithTriggersBefore(cutoff))
      pruned += await this.pruneTask(taskId);
    return pruned;
  }

  /** The windows that still read a task's triggers: none younger than the longest is removed. */
  private async protectedMs(taskId: string): Promise<number> {
    const scheduling = this.config.scheduling;
    const task = await this.engine.reader.get("scheduledTask", taskId);
    const dedupeMs = task?.schedule.type === "webhook" ? (task.schedule.dedupe?.windowMs ?? 0) : 0;
    return Math.max(scheduling.webhookReplayWindowMs, scheduling.webhookRateLimit.windowMs, dedupeMs);
  }

  private async forget(taskId: string, candidates: readonly ScheduledTriggerRecord[], nowMs: number): Promise<number> {
    if (candidates.length === 0) return 0;
    const protectedSince = new Date(nowMs - (await this.protectedMs(taskId))).toISOString();
    const store = this.engine.store;
    const newestTimed = (await lastTimedTrigger(this.engine.reader, taskId))?.id ?? null;
    const ids = new Set<string>();
    for (const trigger of candidates) {
      if (trigger.createdAt >= protectedSince || trigger.id === newestTimed) continue;
      const run = trigger.runId === null ? null : await this.engine.reader.get("run", trigger.runId);
      if (run !== null && !isTerminalRunStatus(run.status)) continue;
      ids.add(trigger.id);
    }
    if (ids.size === 0) return 0;
    const pruned = store.transaction(() => store.forget("scheduledTrigger", [...ids]));
    this.logger.debug("pruned scheduled triggers", { scheduledTaskId: taskId, count: pruned });
    return pruned;
  }
}
