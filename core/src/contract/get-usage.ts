import { z } from "zod";
import { threadReference } from "./fields.js";
import { BudgetViewSchema, TreeUsageSchema, UsageTotalsSchema } from "./usage.js";

/** getUsage (HTTP API): token and cost usage of a thread's tree, a project, or every project. */
export const UsageQuery = z
  .object({
    projectId: z.string().min(1).optional().describe("A project's totals and each of its root threads' trees."),
    threadId: threadReference(
      "A thread's own usage, its whole tree's and the budgets covering it. The thread",
    ).optional(),
  })
  .strict();

/** A thread's tree, a project's root threads, or every project the token may use. */
export const UsageResult = z.discriminatedUnion("scope", [
  TreeUsageSchema.extend({
    scope: z.literal("thread"),
    threadId: z.string(),
    budgets: z
      .array(BudgetViewSchema)
      .describe("The budgets covering the thread's work, innermost first, with what is left of each."),
  }),
  z.object({
    scope: z.literal("project"),
    projectId: z.string(),
    total: UsageTotalsSchema,
    rootThreads: z
      .array(TreeUsageSchema.extend({ threadId: z.string(), title: z.string() }))
      .describe("Each root thread of the project (newest first) with its own usage and its whole tree's."),
  }),
  z.object({
    scope: z.literal("all"),
    total: UsageTotalsSchema.describe("Every project this token may use."),
    projects: z.array(z.object({ projectId: z.string(), name: z.string(), total: UsageTotalsSchema })),
  }),
]);
