import { z } from "zod";
import { OrchestratorFailure } from "../../../engine/orchestrator-failure.js";
import { callerFromScope } from "../caller-from-scope.js";
import { CHANGES_STATE, defineTool } from "../tool-definition.js";

/** A pending runtime request as list, read and respond show it. */
export const PendingRequestView = z
  .object({
    requestId: z.string(),
    threadId: z.string(),
    runId: z.string(),
    kind: z.enum(["user_input", "approval"]).describe("A question (answer with answers) or an approval (decide with decision; needs orchestration:approve)."),
    status: z.enum(["pending", "answered", "cancelled", "expired"]),
    blocking: z.boolean(),
    questions: z.array(z.object({ id: z.string(), question: z.string() }).loose()),
    approval: z
      .object({
        approvalKind: z.enum(["command", "file-read", "file-change", "mcp-elicitation", "permission"]),
        title: z.string(),
        detail: z.string().nullable(),
        options: z.array(z.object({ id: z.string(), label: z.string(), decision: z.enum(["accept", "accept_for_session", "decline", "cancel"]) })),
      })
      .nullable()
      .describe("What an approval asks for; null for a question."),
    createdAt: z.string(),
    resolvedAt: z.string().nullable(),
  })
  .loose();

export const pendingRequestTool = defineTool({
  name: "t3_pending_request",
  title: "Answer a sub-agent's question",
  description:
    'Lists, reads or answers the pending questions (user-input requests) of a sub-agent you delegated, by its childThreadId. action "respond" needs requestId and answers keyed by question id, or dismiss: true. Approvals are never routed to agents: only an outside client whose token has orchestration:approve sees and decides them (decision). Read the fresh request before responding.',
  input: z
    .object({
      threadId: z.string().min(1),
      action: z.enum(["list", "read", "respond"]),
      requestId: z.string().min(1).optional(),
      answers: z.record(z.string(), z.union([z.string(), z.array(z.string())])).optional(),
      decision: z.enum(["accept", "accept_for_session", "decline", "cancel"]).optional().describe("An approval's decision; needs orchestration:approve."),
      dismiss: z.boolean().optional(),
    })
    .strict(),
  output: z.object({ action: z.enum(["list", "read", "respond"]), requests: z.array(PendingRequestView) }),
  annotations: { ...CHANGES_STATE, idempotentHint: false },
  requires: "orchestration:read",
  handle: async (input, { scope, services }) => {
    const caller = callerFromScope(scope);
    if (input.action === "list") return { action: input.action, requests: services.pendingRequests.list(caller, input.threadId) };
    if (input.requestId === undefined) throw new OrchestratorFailure("invalid_request", `action "${input.action}" needs requestId; use action "list" to find it.`);
    if (input.action === "read") return { action: input.action, requests: [services.pendingRequests.read(caller, input.threadId, input.requestId)] };
    // The service checks the capability the answer needs (operate for a question, approve for an approval).
    const answered = services.pendingRequests.respond(caller, {
      threadId: input.threadId,
      requestId: input.requestId,
      ...(input.answers !== undefined ? { answers: input.answers } : {}),
      ...(input.decision !== undefined ? { decision: input.decision } : {}),
      ...(input.dismiss !== undefined ? { dismiss: input.dismiss } : {}),
    });
    return { action: input.action, requests: [answered] };
  },
});
