import { AuditQuery, auditListOptions, ListAuditOutput } from "../../../../contract/list-audit.js";
import { ApiFailure } from "../api-errors.js";
import { defineRoute } from "../api-route.js";

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
  output: ListAuditOutput,
  outputName: "AuditEntries",
  handle: async (input, { caller, services }) => {
    if ((caller.projects ?? "*") !== "*") {
      throw new ApiFailure(
        "capability_denied",
        "The audit spans every project; this token may use only some. Read it with a token issued with --projects '*' (or switchyard audit on this machine).",
        { allowedProjects: caller.projects },
      );
    }
    return { entries: await services.audit.list(auditListOptions(input)) };
  },
});
