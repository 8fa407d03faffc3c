import { z } from "zod";
import { BudgetViewSchema, TreeUsageSchema, UsageTotalsSchema } from "../../../mcp/contract.js";
import { defineRoute } from "../api-route.js";

const UsageQuery = z
  .object({
    projectId: z.string().min(1).optional().describe("A project's totals and each of its root threads' trees."),
    threadId: z.string().min(1).optional().describe("A thread's own usage, its whole tree's and the budgets covering it."),
  })
  .strict();

/** A thread's tree, a project's root threads, or every project the token may use. */
export const UsageResult = z.discriminatedUnion("scope", [
  TreeUsageSchema.extend({
    scope: z.literal("thread"),
    threadId: z.string(),
    budgets: z.array(BudgetViewSchema).describe("The budgets covering the thread's work, innermost first, with what is left of each."),
  }),
  z.object({
    scope: z.literal("project"),
    projectId: z.string(),
    total: UsageTotalsSchema,
    rootThreads: z.array(TreeUsageSchema.extend({ threadId: z.string(), title: z.string() })).describe("Each root thread of the project (newest first) with its own usage and its whole tree's."),
  }),
  z.object({
    scope: z.literal("all"),
    total: UsageTotalsSchema.describe("Every project this token may use."),
    projects: z.array(z.object({ projectId: z.string(), name: z.string(), total: UsageTotalsSchema })),
  }),
]);

export const usageRoute = defineRoute({
  method: "GET",
  path: "/usage",
  operationId: "getUsage",
  summary: "Token and cost usage: a thread's tree, a project's, or every project's",
  description:
    "Usage as providers reported it when each turn ended (live at turn granularity: running turns count in turns.inFlight). Tokens a turn did not report are unknown, never 0 (status partial or unknown, turns.unknown); cost is the provider's own, else estimated from the price table, else unpriced (cost.basis). With threadId: the thread's own usage, its whole tree's and the budgets covering it; with projectId: the project's totals and each root thread's tree; with neither: every project the token may use.",
  tag: "usage",
  requires: "orchestration:read",
  query: UsageQuery,
  input: UsageQuery,
  output: UsageResult,
  outputName: "Usage",
  // The router has checked the projectId and threadId against the token's projects already.
  handle: (input, { caller, services }) => services.usage.summary(input, caller.projects ?? "*"),
});
