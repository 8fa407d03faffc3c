import { inject, injectable } from "tsyringe";
import type { CommandContext } from "../../engine/command-context.js";
import { type Engine, EngineToken } from "../../engine/ports.js";
import { type Logger, LoggerToken } from "../../logging/logger.js";
import {
  authorityId,
  type Authority,
  type ScheduledTaskRecord,
  type SchedulePause,
  type SchedulePauseReason,
} from "../../store/records.js";
import { McpSessionRegistry } from "../credentials/mcp-session-registry.js";
import { ReachGrants } from "../reach/reach-grants.js";

/** Why an authority no longer stands, in words a person can act on. */
export interface Lapse {
  readonly reason: SchedulePauseReason;
  readonly detail: string;
}

/** How a task is resumed, which binds it to the resumer's credential. */
function resumeHint(taskId: string): string {
  return `someone who may change the task resumes it (schedule_task or POST /api/v1/scheduled-tasks/${taskId} with enabled: true, or switchyard schedules resume ${taskId}), which binds it to their own credential`;
}

/** An authority as a person reads it. */
export function describeAuthority(authority: Authority): string {
  return authority.kind === "token"
    ? `token ${authority.credentialId}`
    : authority.kind === "grant"
      ? `grant ${authority.grantId}`
      : "the home's owner";
}

/**
 * Whether the credential a scheduled task runs under still stands, and the pauses that follow
 * when it does not. A task fires on its own, long after the call that made it, so it is held to
 * its credential at every firing (and at boot), not only when it was made: a revoked or expired
 * token or grant pauses it, and so does a task that records none (made before tasks recorded
 * it). The home's owner (the CLI on this machine) always stands.
 */
@injectable()
export class ScheduleStanding {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(LoggerToken) private readonly logger: Logger,
    private readonly credentials: McpSessionRegistry,
    private readonly grants: ReachGrants,
  ) {}

  /** Null while the authority stands; else why not. `taskId` names the task in the words. */
  async lapse(authority: Authority | null | undefined, taskId: string): Promise<Lapse | null> {
    if (authority === null || authority === undefined) {
      return {
        reason: "authority_unknown",
        detail: `This task was made before Switchyard recorded which credential a schedule runs under, so it is paused; ${resumeHint(taskId)}.`,
      };
    }
    if (authority.kind === "owner") return null;
    if (authority.kind === "token") {
      const standing = await this.credentials.standing(authority.credentialId);
      if (standing.state === "active") return null;
      const what = standing.state === "unknown" ? "no longer exists" : `was ${standing.state} at ${standing.at}`;
      return {
        reason: standing.state === "expired" ? "credential_expired" : "credential_revoked",
        detail: `Token ${authority.credentialId}, which this task runs under, ${what}, so the task is paused; ${resumeHint(taskId)}.`,
      };
    }
    const grant = await this.grants.get(authority.grantId);
    if (grant === null || grant.revokedAt !== null) {
      return {
        reason: "credential_revoked",
        detail: `Grant ${authority.grantId}, which this task runs under, ${grant === null ? "no longer exists" : `was revoked at ${grant.revokedAt}`}, so the task is paused; ${resumeHint(taskId)}.`,
      };
    }
    if (Date.parse(grant.expiresAt) <= this.engine.clock.nowMs()) {
      return {
        reason: "credential_expired",
        detail: `Grant ${authority.grantId}, which this task runs under, expired at ${grant.expiresAt}, so the task is paused; ${resumeHint(taskId)}.`,
      };
    }
    return null;
  }

  /** Whether an authority stands now: `active`, or the reason it does not (for listings). */
  async state(authority: Authority | null | undefined): Promise<"active" | "revoked" | "expired" | "unknown"> {
    const lapse = await this.lapse(authority, "");
    if (lapse === null) return "active";
    return lapse.reason === "credential_expired"
      ? "expired"
      : lapse.reason === "credential_revoked"
        ? "revoked"
        : "unknown";
  }

  /** Pauses a task inside a command, saying why (its record keeps the credential it ran under). */
  static pause(ctx: CommandContext, task: ScheduledTaskRecord, lapse: Lapse): ScheduledTaskRecord {
    const pause: SchedulePause = { reason: lapse.reason, detail: lapse.detail, at: ctx.now };
    return ctx.put("scheduledTask", { ...task, enabled: false, pause, updatedAt: ctx.now });
  }

  /**
   * Pauses every enabled task that runs under `authority` (after `switchyard token revoke` or
   * `grant revoke`), in one command; returns how many. Tasks already paused stay as they are.
   */
  async pauseTasksOf(authority: Authority): Promise<number> {
    return this.pauseWhere("authority_id = ? AND enabled = 1", [authorityId(authority)]);
  }

  /**
   * Pauses every enabled task whose credential no longer stands, or that records none (a home
   * upgraded from before tasks recorded it): the scheduler's first look after it starts, so
   * nothing a lapsed credential made fires or takes webhook requests after a restart.
   */
  async pauseLapsed(): Promise<number> {
    return this.pauseWhere("enabled = 1", []);
  }

  private async pauseWhere(where: string, params: readonly unknown[]): Promise<number> {
    const candidates: ScheduledTaskRecord[] = [];
    // One after another: each lapse may read a credential or a grant.
    for (const task of await this.engine.reader.select("scheduledTask", where, params))
      if ((await this.lapse(task.authority, task.id)) !== null) candidates.push(task);
    if (candidates.length === 0) return 0;
    const paused = (
      await this.engine.execute({
        commandId: `cmd:scheduled_task.pause_lapsed:${this.engine.ids.random("req")}`,
        operation: "scheduled_task.pause_lapsed",
        request: { scheduledTaskIds: candidates.map((task) => task.id) },
        handle: async (ctx) => {
          let count = 0;
          for (const candidate of candidates) {
            const current = await ctx.get("scheduledTask", candidate.id);
            if (current === null || !current.enabled) continue;
            const lapse = await this.lapse(current.authority, current.id);
            if (lapse === null) continue;
            ScheduleStanding.pause(ctx, current, lapse);
            count += 1;
          }
          return count;
        },
      })
    ).result;
    if (paused > 0) this.logger.info("paused scheduled tasks whose credential no longer stands", { count: paused });
    return paused;
  }
}
