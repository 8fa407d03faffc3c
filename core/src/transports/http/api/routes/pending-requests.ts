import { z } from "zod";
import { threadReference } from "../../../../contract/fields.js";
import {
  PendingRequestInput,
  PendingRequestView,
  respondToPendingRequest,
} from "../../../../contract/pending-request.js";
import { defineRoute } from "../api-route.js";

const RequestPath = z.object({ threadId: threadReference("The thread"), requestId: z.string().min(1) }).strict();
const RequestInput = PendingRequestInput.omit({ action: true });
const RespondBody = RequestInput.pick({ answers: true, decision: true, dismiss: true });

export const listPendingRequestsRoute = defineRoute({
  method: "GET",
  path: "/threads/{threadId}/pending-requests",
  operationId: "listPendingRequests",
  summary: "List a thread's pending questions and approvals",
  tag: "pending-requests",
  requires: "orchestration:read",
  params: RequestPath.pick({ threadId: true }),
  input: RequestInput.pick({ threadId: true }),
  output: z.object({ requests: z.array(PendingRequestView) }),
  outputName: "PendingRequestList",
  handle: async (input, { caller, services }) => ({
    requests: await services.pendingRequests.list(caller, input.threadId),
  }),
});

export const readPendingRequestRoute = defineRoute({
  method: "GET",
  path: "/threads/{threadId}/pending-requests/{requestId}",
  operationId: "readPendingRequest",
  summary: "Read one pending request, fresh",
  tag: "pending-requests",
  requires: "orchestration:read",
  params: RequestPath,
  input: RequestPath,
  output: PendingRequestView,
  outputName: "PendingRequest",
  handle: (input, { caller, services }) => services.pendingRequests.read(caller, input.threadId, input.requestId),
});

export const respondToPendingRequestRoute = defineRoute({
  method: "POST",
  path: "/threads/{threadId}/pending-requests/{requestId}/respond",
  operationId: "respondToPendingRequest",
  summary: "Answer a question, decide an approval, or dismiss either",
  description:
    "A question takes answers keyed by question id and needs orchestration:operate. An approval takes decision (accept, accept_for_session, decline, cancel) and needs orchestration:approve, which only a token issued with --verbs approve has (never an agent's credential). dismiss: true declines either, with the same capability. Answering twice is refused.",
  tag: "pending-requests",
  requires: "orchestration:read",
  params: RequestPath,
  body: RespondBody,
  input: RequestInput.extend({ requestId: z.string().min(1) }),
  output: PendingRequestView,
  outputName: "PendingRequest",
  handle: (input, { caller, services }) => respondToPendingRequest(services.pendingRequests, caller, input),
});
