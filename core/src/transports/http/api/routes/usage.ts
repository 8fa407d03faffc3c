import { z } from "zod";
import { OrchestratorFailure } from "../../../../engine/orchestrator-failure.js";
import { defineRoute } from "../api-route.js";

const UsageQuery = z
  .object({
    projectId: z.string().min(1).optional(),
    threadId: z.string().min(1).optional(),
  })
  .strict();

/** Usage as far as Switchyard records it: not yet, so it says so instead of answering zeros. */
export const UsageResult = z.object({
  status: z.enum(["unknown"]).describe('"unknown": Switchyard does not record usage yet.'),
  reason: z.string(),
  projectId: z.string().nullable(),
  threadId: z.string().nullable(),
});

export const usageRoute = defineRoute({
  method: "GET",
  path: "/usage",
  operationId: "getUsage",
  summary: "Token and cost usage (not recorded yet: answers unknown)",
  description:
    "Providers report a turn's usage when it ends, but Switchyard does not store it yet (usage records and budgets come later), so this answers status unknown rather than numbers it does not have. The projectId and threadId filters are checked against the token's projects already.",
  tag: "usage",
  requires: "orchestration:read",
  query: UsageQuery,
  input: UsageQuery,
  output: UsageResult,
  outputName: "Usage",
  handle: (input, { services }) => {
    if (input.projectId !== undefined && services.projects.get(input.projectId) === null) throw new OrchestratorFailure("invalid_request", `Project ${input.projectId} does not exist.`, { projectId: input.projectId });
    if (input.threadId !== undefined) services.threads.getThread(input.threadId);
    return {
      status: "unknown" as const,
      reason: "Switchyard does not record token or cost usage yet: providers' per-turn usage reports are not stored. Usage records and budgets are planned.",
      projectId: input.projectId ?? null,
      threadId: input.threadId ?? null,
    };
  },
});
