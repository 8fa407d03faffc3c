import { createHash } from "node:crypto";
import { inject, injectable } from "tsyringe";
import { type SwitchyardConfig, ConfigToken } from "../../config/config-schema.js";
import { type Engine, EngineToken } from "../../engine/ports.js";
import { type ProviderCatalog, ProviderCatalogToken } from "../../engine/provider-catalog.js";
import { type Logger, LoggerToken } from "../../logging/logger.js";
import type { ScheduledTaskRecord, ScheduledTriggerRecord, ScheduleSpec } from "../../store/records.js";
import type { CommandContext } from "../../engine/command-context.js";
import { ProviderSelectionService } from "../provider-selection-service.js";
import { isTimed, latestDueOccurrence, occurrencesFrom } from "./schedule-occurrences.js";
import {
  lastTimedTrigger,
  launchScheduledRun,
  recordTrigger,
  type LaunchContext,
  type TriggerDraft,
} from "./scheduled-run-launch.js";
import { ScheduleStanding } from "./schedule-standing.js";
import { ScheduledProfileResolver } from "./scheduled-profile.js";
import { TriggerRetention } from "./trigger-retention.js";
import { matchFilters } from "./webhook-filters.js";
import { promptWithWebhookBody } from "./webhook-prompt.js";
import { webhookRateCheck } from "./webhook-rate-limit.js";
import { WebhookSecretBox } from "./webhook-secret-box.js";
import {
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  verifyWebhookSignature,
  type SignatureRefusal,
} from "./webhook-signature.js";

/** A trigger later than this after its occurrence counts as a catch-up. */
const CATCH_UP_LATENESS_MS = 5_000;

/** The task changed (or went) between reading it and deciding its trigger: nothing is recorded. */
class StaleTrigger extends Error {}

/** A webhook request as the HTTP transport hands it over. */
export interface WebhookRequest {
  readonly scheduledTaskId: string;
  /** The key after the task id in the URL (`/hooks/<task>/<key>`), or null when the URL had none. */
  readonly urlKey: string | null;
  /** Header names lower-case; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly body: Buffer;
}

/** Why a webhook request was refused before anything was recorded. */
export type WebhookRefusal =
  | SignatureRefusal
  | "not_found"
  | "url_key_invalid"
  | "replayed"
  | "rate_limited"
  | "body_not_text"
  | "signature_unreadable"
  | "task_changed";

/** What became of a webhook request. */
export type WebhookOutcome =
  | {
      readonly kind: "refused";
      readonly refusal: WebhookRefusal;
      readonly message: string;
      readonly retryAfterSeconds?: number;
    }
  | { readonly kind: "recorded"; readonly trigger: ScheduledTriggerRecord; readonly runStatus: string | null };

const UTF8 = new TextDecoder("utf-8", { fatal: true });

type WebhookSchedule = Extract<ScheduleSpec, { type: "webhook" }>;

/**
 * Fires scheduled tasks: the due occurrence of an interval or fixed-time task, and webhook
 * requests. Each trigger is one command whose id derives from the task and the occurrence (or
 * the signed request), and whose transaction decides it (runs it, or records why not) and
 * writes the trigger together with the run: a crash before it commits leaves nothing, so the
 * occurrence is still due after a restart; after it commits, it is never fired again.
 */
@injectable()
export class ScheduledTriggerService {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(ProviderCatalogToken) private readonly registry: ProviderCatalog,
    @inject(ConfigToken) private readonly config: SwitchyardConfig,
    @inject(LoggerToken) private readonly logger: Logger,
    private readonly selection: ProviderSelectionService,
    private readonly secrets: WebhookSecretBox,
    private readonly standing: ScheduleStanding,
    private readonly retention: TriggerRetention,
    private readonly profiles: ScheduledProfileResolver,
  ) {}

  /**
   * The provider a task's runs go to, its availability and capabilities, and its profile as it
   * is now (read before the transaction: profile files and availability are asynchronous).
   */
  private async launchContext(task: ScheduledTaskRecord): Promise<LaunchContext> {
    if (task.profile != null && task.boundThreadId === null) {
      const profile = await this.profiles.atFire(task);
      if (profile.ok) return { unavailable: null, capabilities: profile.selection.capabilities, profile };
      return { unavailable: null, capabilities: this.registry.capabilities(task.providerInstanceId), profile };
    }
    const bound = task.boundThreadId === null ? null : await this.engine.reader.get("thread", task.boundThreadId);
    const instanceId = bound?.providerInstanceId ?? task.providerInstanceId;
    const refusal = await this.selection.unavailableReason(instanceId);
    return {
      unavailable: refusal?.reason ?? null,
      capabilities: this.registry.capabilities(instanceId),
      profile: null,
    };
  }

  /**
   * Fires a timed task's due occurrence, if it has one now: the latest occurrence it has not
   * fired for, standing for any earlier ones it missed (at most one run per catch-up). One older
   * than `scheduling.catchUpWindowMs` is recorded as skipped (`missed`) instead. Returns the
   * trigger, or null when nothing was due. `schedulerStartedAtMs` marks an occurrence that came
   * due before the scheduler started as a catch-up.
   */
  async fireDue(
    taskId: string,
    options: { readonly schedulerStartedAtMs?: number } = {},
  ): Promise<ScheduledTriggerRecord | null> {
    const task = await this.engine.reader.get("scheduledTask", taskId);
    if (task === null || !task.enabled || !isTimed(task.schedule)) return null;
    const schedule = task.schedule;
    const from = occurrencesFrom(task, (await lastTimedTrigger(this.engine.reader, task.id))?.scheduledFor ?? null);
    const due = latestDueOccurrence(
      schedule,
      Date.parse(task.anchorAt),
      from,
      this.engine.clock.nowMs(),
      this.config.scheduling.timeZone,
    );
    if (due === null) return null;
    const launch = await this.launchContext(task);
    const scheduledFor = new Date(due.atMs).toISOString();
    const triggerId = `trigger:${task.id}:${due.atMs}`;
    try {
      const trigger = (
        await this.engine.execute({
          commandId: `cmd:scheduled_task.fire:${task.id}:${due.atMs}`,
          operation: "scheduled_task.fire",
          request: { scheduledTaskId: task.id, scheduledFor },
          handle: async (ctx) => {
            const current = await ctx.get("scheduledTask", task.id);
            if (current === null || current.updatedAt !== task.updatedAt || !current.enabled) throw new StaleTrigger();
            const late = ctx.nowMs - due.atMs;
            const draft: TriggerDraft = {
              id: triggerId,
              scheduledTaskId: task.id,
              kind: schedule.type,
              scheduledFor,
              // Late: it came due before this scheduler started (the server was down), or while
              // the process slept, or it stands for occurrences missed meanwhile.
              catchUp:
                due.atMs < (options.schedulerStartedAtMs ?? -Infinity) ||
                late > CATCH_UP_LATENESS_MS ||
                due.coalesced > 0,
              coalesced: due.coalesced,
              dedupeKey: null,
              signatureDigest: null,
              request: null,
            };
            // Held to its credential at every firing: a revoked or expired one pauses it here.
            const lapse = await this.standing.lapse(current.authority, current.id);
            if (lapse !== null) {
              ScheduleStanding.pause(ctx, current, lapse);
              return recordTrigger(ctx, draft, { outcome: "skipped", reason: lapse.reason, detail: lapse.detail });
            }
            if (late > this.config.scheduling.catchUpWindowMs) {
              return recordTrigger(ctx, draft, {
                outcome: "skipped",
                reason: "missed",
                detail: `The occurrence at ${scheduledFor} was missed by ${Math.round(late / 1000)} s, beyond the catch-up window (scheduling.catchUpWindowMs, ${Math.round(this.config.scheduling.catchUpWindowMs / 1000)} s).`,
              });
            }
            return await launchScheduledRun(ctx, current, draft, current.prompt, launch);
          },
        })
      ).result;
      await this.retention.pruneTask(task.id);
      return trigger;
    } catch (error) {
      if (error instanceof StaleTrigger) return null;
      throw error;
    }
  }

  /** Whether a webhook task with this id exists (an unknown one answers 404 whatever the method). */
  async webhookExists(scheduledTaskId: string): Promise<boolean> {
    return (await this.engine.reader.get("scheduledTask", scheduledTaskId))?.schedule.type === "webhook";
  }

  /**
   * Handles a webhook request: a signed task's signature, or an unsigned task's URL key, first
   * (refused without a record, so an unauthenticated sender cannot grow the database); then the
   * task's rate limit (refused without a record too); then, recorded as a trigger: a lapsed
   * credential (which pauses the task), paused, filters, dedupe and overlap skips, or a run
   * whose prompt carries the body as data.
   */
  async deliver(request: WebhookRequest): Promise<WebhookOutcome> {
    const task = await this.engine.reader.get("scheduledTask", request.scheduledTaskId);
    if (task === null || task.schedule.type !== "webhook")
      return {
        kind: "refused",
        refusal: "not_found",
        message: "No webhook task has this URL (it may have been deleted).",
      };
    const schedule = task.schedule;
    const receivedAtMs = this.engine.clock.nowMs();
    const authenticated = this.authenticate(task, schedule, request, receivedAtMs);
    if ("refused" in authenticated) return authenticated.refused;
    const digest = authenticated.digest;
    let bodyText: string;
    try {
      bodyText = UTF8.decode(request.body);
    } catch {
      return {
        kind: "refused",
        refusal: "body_not_text",
        message: "The request body is not UTF-8 text; a webhook run's prompt carries the body as text.",
      };
    }
    const deliveryId = schedule.dedupe?.deliveryIdHeader
      ? (request.headers[schedule.dedupe.deliveryIdHeader] ?? null)
      : null;
    const dedupeKey = dedupeKeyOf(schedule, request, deliveryId);
    const launch = await this.launchContext(task);
    // A signed request is identified by its signature, so even two copies racing each other land
    // on one command; an unsigned one is new work every time.
    const triggerId =
      digest !== null
        ? `trigger:${task.id}:signed:${digest}`
        : `trigger:${task.id}:${this.engine.ids.random("delivery")}`;
    const contentType = request.headers["content-type"] ?? null;
    const delivery: WebhookDelivery = {
      task,
      schedule,
      request,
      digest,
      dedupeKey,
      deliveryId,
      triggerId,
      contentType,
      bodyText,
      receivedAtMs,
      launch,
    };
    try {
      const outcome = await this.engine.execute({
        commandId: `cmd:scheduled_task.webhook:${triggerId}`,
        operation: "scheduled_task.webhook",
        request: { scheduledTaskId: task.id, triggerId },
        handle: (ctx) => this.decideWebhookTrigger(ctx, delivery),
      });
      // Two copies of one signed request raced: the second found the first's receipt.
      if (outcome.replayed) return replayed();
      const trigger = outcome.result;
      await this.retention.pruneTask(task.id);
      return {
        kind: "recorded",
        trigger,
        runStatus:
          trigger.runId === null ? null : ((await this.engine.reader.get("run", trigger.runId))?.status ?? null),
      };
    } catch (error) {
      if (error instanceof ReplayedDelivery) return replayed();
      if (error instanceof RateLimited) {
        this.logger.warn("webhook request refused", { scheduledTaskId: task.id, refusal: "rate_limited" });
        return {
          kind: "refused",
          refusal: "rate_limited",
          message: error.message,
          retryAfterSeconds: error.retryAfterSeconds,
        };
      }
      if (error instanceof StaleTrigger)
        return {
          kind: "refused",
          refusal: "task_changed",
          message: "The task changed (or was deleted) while the request was checked; send it again.",
        };
      throw error;
    }
  }

  /**
   * A signed task's signature (its replay key is the digest), or an unsigned task's URL key;
   * refused without a record, so an unauthenticated sender cannot grow the database.
   */
  private authenticate(
    task: ScheduledTaskRecord,
    schedule: WebhookSchedule,
    request: WebhookRequest,
    receivedAtMs: number,
  ): { digest: string | null } | { refused: WebhookOutcome } {
    if (schedule.signature === null) {
      if (request.urlKey === null || !this.secrets.matchesWebhookUrlKey(task.id, request.urlKey)) {
        this.logger.warn("webhook request refused", { scheduledTaskId: task.id, refusal: "url_key_invalid" });
        return {
          refused: {
            kind: "refused",
            refusal: "url_key_invalid",
            message: `An unsigned webhook's URL ends with its key (/hooks/${task.id}/<key>), and this request ${request.urlKey === null ? "has none" : "has another"}. Someone who may change the task finds its URL in list_scheduled_tasks (webhookUrl).`,
          },
        };
      }
    } else {
      if (request.urlKey !== null)
        return {
          refused: {
            kind: "refused",
            refusal: "not_found",
            message: "No webhook task has this URL (a signed task's URL is /hooks/<id>, with no key).",
          },
        };
      const opened = this.secrets.open(task.id, schedule.signature);
      if ("problem" in opened) {
        this.logger.error("webhook signature secret cannot be read", {
          scheduledTaskId: task.id,
          problem: opened.problem,
        });
        return {
          refused: {
            kind: "refused",
            refusal: "signature_unreadable",
            message: `The task's signature secret cannot be read (${opened.problem}); give it a new one with schedule_task.`,
          },
        };
      }
      const signature = request.headers[SIGNATURE_HEADER];
      const timestamp = request.headers[TIMESTAMP_HEADER];
      const verdict = verifyWebhookSignature({
        secret: opened.secret,
        signature,
        timestamp,
        body: request.body,
        nowMs: receivedAtMs,
        windowMs: this.config.scheduling.webhookReplayWindowMs,
      });
      if (!verdict.ok) {
        this.logger.warn("webhook request refused", { scheduledTaskId: task.id, refusal: verdict.refusal });
        return { refused: { kind: "refused", refusal: verdict.refusal, message: verdict.message } };
      }
      return { digest: verdict.replayKey };
    }
    return { digest: null };
  }

  /**
   * Decides a webhook trigger inside its command: the task's rate limit (refused without a
   * record), then, recorded as a trigger, a lapsed credential (which pauses the task), paused,
   * filters, dedupe, or a run whose prompt carries the body as data.
   */
  private async decideWebhookTrigger(ctx: CommandContext, delivery: WebhookDelivery): Promise<ScheduledTriggerRecord> {
    const {
      task,
      schedule,
      request,
      digest,
      dedupeKey,
      deliveryId,
      triggerId,
      contentType,
      bodyText,
      receivedAtMs,
      launch,
    } = delivery;
    const current = await ctx.get("scheduledTask", task.id);
    if (current === null || current.updatedAt !== task.updatedAt) throw new StaleTrigger();
    if (
      digest !== null &&
      (await ctx.count("scheduledTrigger", "task_id = ? AND signature_digest = ?", [task.id, digest])) > 0
    )
      throw new ReplayedDelivery();
    const rate = await webhookRateCheck(ctx, task.id, this.config.scheduling.webhookRateLimit);
    if (rate !== null) throw new RateLimited(rate.retryAfterSeconds, rate.message);
    const draft: TriggerDraft = {
      id: triggerId,
      scheduledTaskId: task.id,
      kind: "webhook",
      scheduledFor: null,
      catchUp: false,
      coalesced: 0,
      dedupeKey,
      signatureDigest: digest,
      request: { contentType, bytes: request.body.length, deliveryId },
    };
    const lapse = current.enabled ? await this.standing.lapse(current.authority, current.id) : null;
    if (lapse !== null) {
      ScheduleStanding.pause(ctx, current, lapse);
      return recordTrigger(ctx, draft, { outcome: "skipped", reason: lapse.reason, detail: lapse.detail });
    }
    if (!current.enabled)
      return recordTrigger(ctx, draft, {
        outcome: "skipped",
        reason: "paused",
        detail: current.pause ? current.pause.detail : "The task is paused (enabled: false).",
      });
    const filtered = matchFilters(schedule.filters, { headers: request.headers, bodyText });
    if (!filtered.ok)
      return recordTrigger(ctx, draft, { outcome: "skipped", reason: "filtered", detail: filtered.detail });
    if (dedupeKey !== null && schedule.dedupe !== null) {
      const since = new Date(ctx.nowMs - schedule.dedupe.windowMs).toISOString();
      const earlier = (
        await ctx.select(
          "scheduledTrigger",
          "task_id = ? AND dedupe_key = ? AND created_at >= ? AND outcome != 'failed'",
          [task.id, dedupeKey, since],
          "ORDER BY created_at LIMIT 1",
        )
      )[0];
      if (earlier !== undefined) {
        return recordTrigger(ctx, draft, {
          outcome: "skipped",
          reason: "duplicate",
          detail: `The same ${dedupeKey.startsWith("id:") ? `delivery id (${schedule.dedupe.deliveryIdHeader})` : "body"} arrived at ${earlier.createdAt} (trigger ${earlier.id}), within the ${Math.round(schedule.dedupe.windowMs / 1000)} s dedupe window.`,
        });
      }
    }
    const text = promptWithWebhookBody(current.prompt, {
      bodyText,
      contentType,
      bytes: request.body.length,
      deliveryId,
      receivedAt: new Date(receivedAtMs).toISOString(),
    });
    return await launchScheduledRun(ctx, current, draft, text, launch);
  }
}

/** A webhook request as its command decides it: authenticated, decoded, with its trigger's id. */
interface WebhookDelivery {
  readonly task: ScheduledTaskRecord;
  readonly schedule: WebhookSchedule;
  readonly request: WebhookRequest;
  /** The signature's replay key (signed tasks), else null. */
  readonly digest: string | null;
  readonly dedupeKey: string | null;
  readonly deliveryId: string | null;
  readonly triggerId: string;
  readonly contentType: string | null;
  readonly bodyText: string;
  readonly receivedAtMs: number;
  readonly launch: LaunchContext;
}

/** What makes two deliveries the same, when the task dedupes: the delivery id header, else the body's hash. */
function dedupeKeyOf(schedule: WebhookSchedule, request: WebhookRequest, deliveryId: string | null): string | null {
  if (schedule.dedupe === null) return null;
  if (deliveryId !== null) return `id:${deliveryId}`;
  if (schedule.dedupe.bodyHash) return `sha256:${createHash("sha256").update(request.body).digest("base64url")}`;
  return null;
}

/** A signed request that was delivered before. */
class ReplayedDelivery extends Error {}

/** The task took as many requests as its window allows. */
class RateLimited extends Error {
  constructor(
    readonly retryAfterSeconds: number,
    message: string,
  ) {
    super(message);
  }
}

function replayed(): WebhookOutcome {
  return {
    kind: "refused",
    refusal: "replayed",
    message:
      "This signed request was delivered before (the same timestamp and body); a replay is refused. Sign each delivery anew.",
  };
}
