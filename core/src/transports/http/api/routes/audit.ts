import { z } from "zod";
import { MAX_AUDIT_LIMIT } from "../../../../services/reach/reach-audit.js";
import { ApiFailure } from "../api-errors.js";
import { defineRoute } from "../api-route.js";

const AuditQuery = z
  .object({
    since: z.iso.datetime({ offset: true }).optional().describe("Only calls at or after this instant (ISO 8601)."),
    limit: z.coerce.number().int().min(1).max(MAX_AUDIT_LIMIT).optional().describe(`At most this many rows, newest first (default 100, at most ${MAX_AUDIT_LIMIT}).`),
    direction: z.enum(["in", "out"]).optional().describe("in: calls linked environments made here; out: calls this environment made through its links."),
  })
  .strict();

const AuditEntrySchema = z.object({
  id: z.number(),
  at: z.string(),
  direction: z.enum(["in", "out"]),
  grantId: z.string().nullable().describe("in: the grant the caller's link secret stands for."),
  environment: z.string().nullable().describe("in: the grant's --for name; out: the link's name."),
  remoteEnvironmentId: z.string().nullable().describe("in: the caller's environment id, as it says."),
  callerThreadId: z.string().nullable().describe("The calling thread (in: on the other side, as it says; out: here)."),
  verb: z.enum(["read", "create", "send", "delegate", "cancel"]).nullable(),
  tool: z.string().nullable().describe("The MCP tool; null when the call was refused before it was read (a revoked or expired grant)."),
  target: z.object({ projectIds: z.array(z.string()).readonly().optional(), threadIds: z.array(z.string()).readonly().optional(), taskIds: z.array(z.string()).readonly().optional() }),
  outcome: z.string().describe("ok, or the failure code the caller got."),
  reason: z.string().nullable(),
});

export const listAuditRoute = defineRoute({
  method: "GET",
  path: "/audit",
  operationId: "listAudit",
  summary: "Calls across environments, both directions, newest first",
  description:
    "One row per call a linked environment made here (its grant, its caller, the verb, tool, target and outcome) and per call this environment made through a link. Rows hold ids and codes only, never secrets or message text. The audit spans every project, so it needs a token that may use every project.",
  tag: "audit",
  requires: "orchestration:read",
  query: AuditQuery,
  input: AuditQuery,
  output: z.object({ entries: z.array(AuditEntrySchema) }),
  outputName: "AuditEntries",
  handle: (input, { caller, services }) => {
    if ((caller.projects ?? "*") !== "*") {
      throw new ApiFailure("capability_denied", "The audit spans every project; this token may use only some. Read it with a token issued with --projects '*' (or switchyard audit on this machine).", { allowedProjects: caller.projects });
    }
    return {
      entries: services.audit.list({
        ...(input.since !== undefined ? { sinceMs: Date.parse(input.since) } : {}),
        ...(input.limit !== undefined ? { limit: input.limit } : {}),
        ...(input.direction !== undefined ? { direction: input.direction } : {}),
      }),
    };
  },
});
