import { z } from "zod";
import { threadReference } from "./fields.js";
import type { Caller } from "../services/caller.js";
import type { PendingRequestService } from "../services/pending-request-service.js";

/** A pending runtime request as list, read and respond show it. */
export const PendingRequestView = z
  .object({
    requestId: z.string(),
    threadId: z.string(),
    runId: z.string(),
    kind: z
      .enum(["user_input", "approval"])
      .describe("A question (answer with answers) or an approval (decide with decision; needs orchestration:approve)."),
    status: z.enum(["pending", "answered", "cancelled", "expired"]),
    blocking: z.boolean(),
    questions: z.array(z.object({ id: z.string(), question: z.string() }).loose()),
    approval: z
      .object({
        approvalKind: z.enum(["command", "file-read", "file-change", "mcp-elicitation", "permission"]),
        title: z.string(),
        detail: z.string().nullable(),
        options: z.array(
          z.object({
            id: z.string(),
            label: z.string(),
            decision: z.enum(["accept", "accept_for_session", "decline", "cancel"]),
          }),
        ),
      })
      .nullable()
      .describe("What an approval asks for; null for a question."),
    nativeSubagent: z
      .object({ nativeId: z.string(), itemId: z.string(), title: z.string().nullable() })
      .optional()
      .describe(
        "The provider's own (native) sub-agent that asked through this thread's session: its provider id, its subagent timeline item and title. Absent when the thread's agent itself asked.",
      ),
    createdAt: z.string(),
    resolvedAt: z.string().nullable(),
  })
  .loose();

/** t3_pending_request: list, read or answer a thread's pending requests (the API has one route for each action). */
export const PendingRequestInput = z
  .object({
    threadId: threadReference("The thread"),
    action: z.enum(["list", "read", "respond"]),
    requestId: z.string().min(1).optional(),
    answers: z.record(z.string(), z.union([z.string(), z.array(z.string())])).optional(),
    decision: z
      .enum(["accept", "accept_for_session", "decline", "cancel"])
      .optional()
      .describe("An approval's decision; needs orchestration:approve."),
    dismiss: z.boolean().optional(),
  })
  .strict();

export const PendingRequestOutput = z.object({
  action: z.enum(["list", "read", "respond"]),
  requests: z.array(PendingRequestView),
});

/** A response to one request: answers, a decision, or a dismissal. */
export type PendingRequestResponse = Pick<
  z.output<typeof PendingRequestInput>,
  "threadId" | "answers" | "decision" | "dismiss"
> & { readonly requestId: string };

/** The service's respond call; the service checks the capability the answer needs (operate for a question, approve for an approval). */
export function respondToPendingRequest(
  pendingRequests: PendingRequestService,
  caller: Caller,
  input: PendingRequestResponse,
): ReturnType<PendingRequestService["respond"]> {
  return pendingRequests.respond(caller, {
    threadId: input.threadId,
    requestId: input.requestId,
    ...(input.answers !== undefined ? { answers: input.answers } : {}),
    ...(input.decision !== undefined ? { decision: input.decision } : {}),
    ...(input.dismiss !== undefined ? { dismiss: input.dismiss } : {}),
  });
}
