import { z } from "zod";
import { MAX_AUDIT_LIMIT } from "../services/reach/reach-audit.js";
import type { ReachAudit } from "../services/reach/reach-audit.js";

/** listAudit (HTTP API): calls across environments, both directions, newest first. */
export const AuditQuery = z
  .object({
    since: z.iso.datetime({ offset: true }).optional().describe("Only calls at or after this instant (ISO 8601)."),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_AUDIT_LIMIT)
      .optional()
      .describe(`At most this many rows, newest first (default 100, at most ${MAX_AUDIT_LIMIT}).`),
    direction: z
      .enum(["in", "out"])
      .optional()
      .describe("in: calls linked environments made here; out: calls this environment made through its links."),
  })
  .strict();

export const AuditEntrySchema = z.object({
  id: z.number(),
  at: z.string(),
  direction: z.enum(["in", "out"]),
  grantId: z.string().nullable().describe("in: the grant the caller's link secret stands for."),
  environment: z.string().nullable().describe("in: the grant's --for name; out: the link's name."),
  remoteEnvironmentId: z.string().nullable().describe("in: the caller's environment id, as it says."),
  callerThreadId: z.string().nullable().describe("The calling thread (in: on the other side, as it says; out: here)."),
  verb: z.enum(["read", "create", "send", "delegate", "cancel"]).nullable(),
  tool: z
    .string()
    .nullable()
    .describe("The MCP tool; null when the call was refused before it was read (a revoked or expired grant)."),
  target: z.object({
    projectIds: z.array(z.string()).readonly().optional(),
    threadIds: z.array(z.string()).readonly().optional(),
    taskIds: z.array(z.string()).readonly().optional(),
  }),
  outcome: z.string().describe("ok, or the failure code the caller got."),
  reason: z.string().nullable(),
});

export const ListAuditOutput = z.object({ entries: z.array(AuditEntrySchema) });

/** The audit's list options for a query: since as epoch milliseconds. */
export function auditListOptions(input: z.output<typeof AuditQuery>): Parameters<ReachAudit["list"]>[0] {
  return {
    ...(input.since !== undefined ? { sinceMs: Date.parse(input.since) } : {}),
    ...(input.limit !== undefined ? { limit: input.limit } : {}),
    ...(input.direction !== undefined ? { direction: input.direction } : {}),
  };
}
