import { z } from "zod";

/** Switchyard's addition: usage of a set of turns (see `UsageTotals`). */
export const UsageTotalsSchema = z.object({
  status: z
    .enum(["reported", "partial", "unknown", "none"])
    .describe(
      "reported: every ended turn reported usage; partial: some did not (turns.unknown); unknown: none did (tokens null); none: no turn ended yet.",
    ),
  turns: z.object({ ended: z.number(), reported: z.number(), unknown: z.number(), inFlight: z.number() }),
  tokens: z
    .object({
      input: z.number(),
      output: z.number(),
      cacheRead: z.number(),
      cacheWrite: z.number(),
      reasoning: z.number(),
      total: z.number(),
    })
    .nullable()
    .describe(
      "Sums over the turns that reported usage; total = input + cacheRead + cacheWrite + output (reasoning is part of output).",
    ),
  cost: z.object({
    usd: z.number().nullable().describe("Reported plus estimated US dollars; null when nothing could be priced."),
    basis: z
      .enum(["reported", "estimated", "partial", "unpriced", "none"])
      .describe("estimated: some of it comes from the price table; partial: some turns could not be priced."),
    reportedUsd: z.number(),
    estimatedUsd: z.number(),
    unpricedTurns: z.number(),
  }),
});

/** A thread's own usage and its whole tree's. */
export const TreeUsageSchema = z.object({
  own: UsageTotalsSchema,
  subtree: UsageTotalsSchema.describe(
    "This thread and every thread below it (children, grandchildren, across providers).",
  ),
});

const BudgetLimitsSchema = z.object({
  tokens: z.number().nullable(),
  costUsd: z.number().nullable(),
  wallClockMs: z.number().nullable(),
});

/** A budget on a delegation tree: limits, use and what is left. */
export const BudgetViewSchema = z.object({
  scope: z.enum(["delegated_task", "root_thread"]),
  budgetId: z.string(),
  threadId: z.string(),
  taskId: z.string().nullable(),
  limits: BudgetLimitsSchema,
  used: z.object({ tokens: z.number(), costUsd: z.number(), wallClockMs: z.number().nullable() }),
  remaining: BudgetLimitsSchema,
  origin: z.enum(["delegate_task", "config", "delegate_task_and_config", "profile", "profile_and_config"]),
  exceeded: z
    .object({
      limit: z.enum(["tokens", "costUsd", "wallClockMs"]),
      used: z.number(),
      allowed: z.number(),
      at: z.string(),
    })
    .nullable(),
});

/** Why a budget stopped a task. */
export const BudgetStopSchema = z.object({
  budgetId: z.string(),
  scope: z.enum(["delegated_task", "root_thread"]),
  limit: z.enum(["tokens", "costUsd", "wallClockMs"]),
  used: z.number(),
  allowed: z.number(),
  at: z.string(),
  taskId: z.string().nullable(),
});
