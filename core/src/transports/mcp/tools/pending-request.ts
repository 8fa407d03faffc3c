import {
  PendingRequestInput,
  PendingRequestOutput,
  respondToPendingRequest,
} from "../../../contract/pending-request.js";
import { OrchestratorFailure } from "../../../engine/orchestrator-failure.js";
import { callerFromScope } from "../../caller-from-scope.js";
import { CHANGES_STATE, defineTool } from "../tool-definition.js";

export const pendingRequestTool = defineTool({
  name: "t3_pending_request",
  title: "Answer a sub-agent's question",
  description:
    'Lists, reads or answers the pending questions (user-input requests) of a sub-agent you delegated, by its childThreadId. action "respond" needs requestId and answers keyed by question id, or dismiss: true. Approvals are never routed to agents: only an outside client whose token has orchestration:approve sees and decides them (decision). Read the fresh request before responding.',
  input: PendingRequestInput,
  output: PendingRequestOutput,
  annotations: { ...CHANGES_STATE, idempotentHint: false },
  requires: "orchestration:read",
  handle: async (input, { scope, services }) => {
    const caller = callerFromScope(scope);
    if (input.action === "list")
      return { action: input.action, requests: await services.pendingRequests.list(caller, input.threadId) };
    if (input.requestId === undefined)
      throw new OrchestratorFailure(
        "invalid_request",
        `action "${input.action}" needs requestId; use action "list" to find it.`,
      );
    if (input.action === "read")
      return {
        action: input.action,
        requests: [await services.pendingRequests.read(caller, input.threadId, input.requestId)],
      };
    return {
      action: input.action,
      requests: [
        await respondToPendingRequest(services.pendingRequests, caller, { ...input, requestId: input.requestId }),
      ],
    };
  },
});
