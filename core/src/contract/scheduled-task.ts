import { z } from "zod";
import { InteractionModeOutput, RunStatus, RuntimeModeOutput } from "./fields.js";

/** A schedule and a scheduled task, as schedule_task, list_scheduled_tasks and their routes take and show them (seed 000 "Scheduled tasks"). */

const HeaderFilter = z
  .object({
    header: z.string().min(1).max(100).describe("A request header name (any case)."),
    equals: z.string().max(1_000).describe("The value it must have, exactly."),
  })
  .strict();
const JsonPathFilter = z
  .object({
    jsonPath: z
      .string()
      .min(1)
      .max(300)
      .describe("A value in the JSON body: $ then .key, ['key'] or [index] steps, e.g. $.pull_request.base.ref."),
    equals: z
      .union([z.string().max(1_000), z.number(), z.boolean(), z.null()])
      .describe("The value it must have, exactly (same JSON type)."),
  })
  .strict();

const Signature = z
  .union([
    z.literal("none"),
    z.literal("generate"),
    z
      .object({
        secret: z.string().min(1).max(512).describe("The secret the sender signs with (16 to 512 characters)."),
      })
      .strict(),
  ])
  .describe(
    'HMAC-SHA256 signing. "none": anyone with the URL can trigger a run. "generate": Switchyard makes a secret and shows it once in signatureSecret. {secret}: the secret the sender is configured with. Requests then need X-Switchyard-Timestamp (unix seconds) and X-Switchyard-Signature: sha256=<hex HMAC of "<timestamp>.<raw body>">. Omitted on update: the signature stays.',
  );

const IntervalSchedule = z
  .object({
    type: z.literal("interval"),
    everyMs: z
      .number()
      .int()
      .positive()
      .describe(
        "Milliseconds between runs; at least the server's floor (limits.minScheduleIntervalMs in orchestrator_capabilities).",
      ),
  })
  .strict();
const FixedTimeSchedule = z
  .object({
    type: z.literal("fixed_time"),
    cron: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(
        'A cron expression in the server\'s local time zone: five fields (minute hour day month weekday, e.g. "0 9 * * 1-5") or six with seconds first.',
      ),
    at: z
      .string()
      .min(1)
      .max(40)
      .optional()
      .describe(
        'One run at this ISO 8601 date and time, e.g. "2030-01-31T09:00" (server\'s local time) or with an offset ("2030-01-31T08:00:00Z").',
      ),
  })
  .strict()
  .describe("Exactly one of cron (recurring) or at (once).");
const WebhookSchedule = z
  .object({
    type: z.literal("webhook"),
    signature: Signature.optional(),
    filters: z
      .array(z.union([HeaderFilter, JsonPathFilter]))
      .max(20)
      .optional()
      .describe("All must match, else the request is skipped (and recorded)."),
    dedupe: z
      .object({
        deliveryIdHeader: z
          .string()
          .min(1)
          .max(100)
          .optional()
          .describe("A header with the sender's delivery id (e.g. X-GitHub-Delivery)."),
        bodyHash: z
          .boolean()
          .optional()
          .describe("Use the body's SHA-256 when there is no delivery id (default true without deliveryIdHeader)."),
        windowMs: z
          .number()
          .int()
          .optional()
          .describe("A key seen within this window is a duplicate: skipped and recorded (default 1 day)."),
      })
      .strict()
      .optional(),
  })
  .strict();

const ScheduleObject = z.discriminatedUnion("type", [IntervalSchedule, FixedTimeSchedule, WebhookSchedule]);

/**
 * The schedule, as an object; some harnesses (OpenCode 1.15) send nested union objects as JSON
 * strings, so a string holding that object is accepted too.
 */
export const ScheduleInputSchema = z
  .union(
    [
      ScheduleObject,
      z
        .string()
        .transform((text, ctx) => {
          try {
            return JSON.parse(text) as unknown;
          } catch {
            ctx.addIssue({ code: "custom", message: "is a string that is not the JSON of a schedule object" });
            return z.NEVER;
          }
        })
        .pipe(ScheduleObject),
    ],
    {
      // A failed union names no branch's problem; say the one of the branch the value was meant for.
      error: (issue) => {
        if (issue.code !== "invalid_union") return undefined;
        const first = (typeof issue.input === "string" ? issue.errors[1] : issue.errors[0])?.[0];
        return first === undefined
          ? undefined
          : `${first.path.length > 0 ? `${first.path.join(".")}: ` : ""}${first.message}`;
      },
    },
  )
  .describe(
    '{type:"interval", everyMs}, {type:"fixed_time", cron} or {type:"fixed_time", at} (server\'s local time zone), or {type:"webhook"} to run on each qualifying request to the task\'s URL.',
  );

const TriggerView = z.object({
  triggerId: z.string(),
  kind: z.enum(["interval", "fixed_time", "webhook"]),
  outcome: z.enum(["started", "skipped", "failed"]),
  reason: z
    .enum([
      "overlap",
      "missed",
      "paused",
      "filtered",
      "duplicate",
      "thread_stopped",
      "thread_not_found",
      "project_not_found",
      "provider_unavailable",
      "profile_not_found",
      "profile_refused",
      "profile_not_granted",
      "credential_revoked",
      "credential_expired",
      "authority_unknown",
    ])
    .nullable()
    .describe(
      "Why it started no run; credential_revoked, credential_expired and authority_unknown also paused the task (see pausedReason). profile_not_found and profile_refused: the task's profile, resolved again at this fire, was removed or would now be refused (detail says why); profile_not_granted: the task runs under a grant that does not list its profile; the next fire tries again.",
    ),
  detail: z.string().nullable(),
  scheduledFor: z.string().nullable(),
  catchUp: z.boolean(),
  coalesced: z.number(),
  runId: z.string().nullable(),
  threadId: z.string().nullable(),
  runStatus: RunStatus.nullable(),
  createdAt: z.string(),
});

/** A scheduled task as the tools show it. */
export const ScheduledTaskSchema = z.object({
  scheduledTaskId: z.string(),
  title: z.string(),
  prompt: z.string(),
  promptTruncated: z.boolean(),
  projectId: z.string(),
  enabled: z.boolean(),
  pausedReason: z
    .enum(["requested", "credential_revoked", "credential_expired", "authority_unknown"])
    .nullable()
    .describe(
      "Why the task is paused (null while enabled): requested (enabled: false), or Switchyard paused it because the credential it runs under was revoked or expired, or because it was made before tasks recorded one. Resuming (enabled: true) binds it to the resumer's credential.",
    ),
  pausedDetail: z.string().nullable(),
  authority: z
    .object({
      kind: z.enum(["token", "grant", "owner"]),
      id: z
        .string()
        .nullable()
        .describe("The token's or grant's id (switchyard token list, grant list); null for the home's owner."),
      state: z.enum(["active", "revoked", "expired", "unknown"]),
    })
    .nullable()
    .describe(
      "The credential the task's runs start under: whoever made it or last resumed it (an agent's: the credential its thread's tree was started with). null: made before tasks recorded it.",
    ),
  bindToCurrentThread: z.boolean(),
  boundThreadId: z.string().nullable(),
  schedule: z.union([
    z.object({ type: z.literal("interval"), everyMs: z.number() }),
    z.object({ type: z.literal("fixed_time"), cron: z.string() }),
    z.object({ type: z.literal("fixed_time"), at: z.string(), atInstant: z.string() }),
    z.object({
      type: z.literal("webhook"),
      signature: z.enum(["none", "set"]),
      filters: z.array(
        z.union([
          z.object({ header: z.string(), equals: z.string() }),
          z.object({ jsonPath: z.string(), equals: z.union([z.string(), z.number(), z.boolean(), z.null()]) }),
        ]),
      ),
      dedupe: z
        .object({ deliveryIdHeader: z.string().nullable(), bodyHash: z.boolean(), windowMs: z.number() })
        .nullable(),
    }),
  ]),
  timeZone: z.string().describe("The server's local time zone, in which cron and at times are read."),
  providerInstanceId: z.string(),
  model: z.string().nullable(),
  profile: z
    .string()
    .nullable()
    .describe(
      "The profile each run starts with (resolved again at every fire: its provider and model may differ from the ones above, which the task resolved when it last changed), or null.",
    ),
  runtimeMode: RuntimeModeOutput,
  interactionMode: InteractionModeOutput,
  nextRunAt: z.string().nullable(),
  webhookPath: z.string().nullable(),
  webhookUrl: z
    .string()
    .nullable()
    .describe(
      "POST here to trigger a run (the server listens on 127.0.0.1; an outside sender reaches it through a tunnel or proxy to this path). An unsigned task's URL ends with a key and is its credential: it is shown only to callers that may change the task (webhookUrlHidden).",
    ),
  webhookUrlHidden: z
    .boolean()
    .describe("True when this caller may not see the URL of an unsigned webhook (it may not change the task)."),
  webhookSignature: z.enum(["none", "set"]).nullable(),
  warning: z.string().nullable(),
  runCount: z.number(),
  lastRun: TriggerView.nullable(),
  recentTriggers: z.array(TriggerView),
  createdBy: z.enum(["user", "agent", "system", "provider"]),
  creationSource: z.enum(["cli", "mcp", "api", "scheduler", "system", "provider", "attached"]),
  createdAt: z.string(),
  updatedAt: z.string(),
});
