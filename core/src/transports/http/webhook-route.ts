import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../logging/logger.js";
import type { ScheduledTriggerService, WebhookRefusal } from "../../services/scheduling/scheduled-trigger-service.js";
import { BodyError, readRequestBytes } from "../request-body.js";

/** Webhook URLs: `/hooks/<scheduledTaskId>` (signed tasks), `/hooks/<scheduledTaskId>/<key>` (unsigned ones). */
export const HOOKS_PATH_PREFIX = "/hooks/";

/** The HTTP status each refusal is answered with. */
const REFUSAL_STATUS: Record<WebhookRefusal, number> = {
  not_found: 404,
  url_key_invalid: 403,
  signature_missing: 401,
  signature_invalid: 401,
  timestamp_invalid: 400,
  timestamp_outside_window: 401,
  replayed: 409,
  rate_limited: 429,
  task_changed: 409,
  body_not_text: 415,
  signature_unreadable: 500,
};

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/** Node's headers as single strings (a repeated header joined with ", "). */
function flatHeaders(req: IncomingMessage): Record<string, string | undefined> {
  const flat: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(req.headers)) flat[name] = Array.isArray(value) ? value.join(", ") : value;
  return flat;
}

/**
 * `POST /hooks/<id>[/<key>]`: hands a webhook request to the scheduled-task triggers and shapes
 * the answer. 202 when a run started or queued, 200 when the request was skipped (paused,
 * filtered, duplicate, overlap, a lapsed credential: recorded with the reason), 404 for an
 * unknown or deleted task, 403 for an unsigned task's URL without its key, 405 for another
 * method, 413 for a body over `scheduling.maxWebhookBodyBytes`, 401 for a missing or bad
 * signature or a timestamp outside the replay window, 400 for a timestamp not written plainly,
 * 409 for a replay, 429 (with Retry-After) past the task's rate limit, 503 when the task's
 * provider cannot run work now (recorded).
 */
export class WebhookRoute {
  constructor(
    private readonly triggers: ScheduledTriggerService,
    private readonly maxBodyBytes: number,
    private readonly logger: Logger,
  ) {}

  /** Whether a path is a webhook URL. */
  owns(path: string): boolean {
    return path.startsWith(HOOKS_PATH_PREFIX);
  }

  async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    let scheduledTaskId = "";
    let urlKey: string | null = null;
    const segments = path.slice(HOOKS_PATH_PREFIX.length).split("/");
    try {
      if (segments.length <= 2) {
        scheduledTaskId = decodeURIComponent(segments[0]!);
        urlKey = segments.length === 2 ? decodeURIComponent(segments[1]!) : null;
      }
    } catch {
      scheduledTaskId = "";
    }
    if (
      scheduledTaskId === "" ||
      scheduledTaskId.includes("/") ||
      urlKey === "" ||
      !(await this.triggers.webhookExists(scheduledTaskId))
    ) {
      json(res, 404, {
        error: "not_found",
        error_description: "No webhook task has this URL (it may have been deleted).",
      });
      return;
    }
    if (req.method !== "POST") {
      json(res, 405, { error: "method_not_allowed", error_description: "Webhooks take POST." }, { allow: "POST" });
      return;
    }
    let body: Buffer;
    try {
      body = await readRequestBytes(req, this.maxBodyBytes, "scheduling.maxWebhookBodyBytes");
    } catch (error) {
      if (!(error instanceof BodyError)) throw error;
      if (error.problem === "cut_off" || res.destroyed) return;
      json(res, error.status, {
        error: error.problem === "too_large" ? "body_too_large" : "bad_request",
        error_description: error.message,
      });
      return;
    }
    const outcome = await this.triggers.deliver({ scheduledTaskId, urlKey, headers: flatHeaders(req), body });
    if (outcome.kind === "refused") {
      const headers: Record<string, string> =
        outcome.retryAfterSeconds !== undefined ? { "retry-after": String(outcome.retryAfterSeconds) } : {};
      json(
        res,
        REFUSAL_STATUS[outcome.refusal],
        {
          error: outcome.refusal,
          error_description: outcome.message,
          ...(outcome.retryAfterSeconds !== undefined ? { retryAfterSeconds: outcome.retryAfterSeconds } : {}),
        },
        headers,
      );
      return;
    }
    const trigger = outcome.trigger;
    const common = { scheduledTaskId, triggerId: trigger.id };
    if (trigger.outcome === "started") {
      json(res, 202, {
        ...common,
        status: outcome.runStatus === "queued" ? "queued" : "started",
        runId: trigger.runId,
        threadId: trigger.threadId,
      });
      return;
    }
    if (trigger.outcome === "skipped") {
      json(res, 200, { ...common, status: "skipped", reason: trigger.reason, detail: trigger.detail });
      return;
    }
    this.logger.warn("webhook request could not start a run", { scheduledTaskId, reason: trigger.reason });
    json(res, trigger.reason === "provider_unavailable" ? 503 : 409, {
      ...common,
      status: "failed",
      error: trigger.reason,
      error_description: trigger.detail,
    });
  }
}
