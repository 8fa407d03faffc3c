import { UsageQuery, UsageResult } from "../../../../contract/get-usage.js";
import { defineRoute } from "../api-route.js";

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
