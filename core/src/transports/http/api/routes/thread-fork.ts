import { z } from "zod";
import { ClientRequestId, ThreadShell } from "../../../mcp/contract.js";
import { defineRoute } from "../api-route.js";
import { ThreadPath } from "./threads.js";

/** Fork's input: the source thread, and what the fork may differ in. */
export const ForkThreadInput = z
  .object({
    threadId: z.string().min(1),
    title: z.string().min(1).max(200).optional().describe('The fork\'s title (trimmed); default "<source title> (fork)".'),
    afterRunId: z.string().min(1).optional().describe("Fork the conversation as it was after this run of the source thread, not as it is now."),
    clientRequestId: ClientRequestId.optional(),
  })
  .strict();

export const ForkThreadResult = z.object({
  thread: ThreadShell,
  strategy: z.enum(["native", "portable"]).describe("native: the provider copied the conversation; portable: it travels as context with the fork's first turn."),
  reason: z.string().describe("Why that strategy (the shared fork policy's reason, or why a native fork fell back)."),
  transferId: z.string(),
  replayed: z.boolean(),
});

export const forkThreadRoute = defineRoute({
  method: "POST",
  path: "/threads/{threadId}/fork",
  operationId: "forkThread",
  summary: "Fork a thread into a new one on the same provider",
  description:
    "A new thread in the same project, with the source's provider, model, modes and workspace, that continues its conversation: natively when the provider forks conversations with stable ids, else as portable context delivered with its first turn (the shared fork policy; strategy and reason say which). The fork starts no turn: send it a message. The source may not run with broader modes than the token's ceiling. Idempotency-Key (or clientRequestId) makes a retry return the same fork.",
  tag: "threads",
  requires: "orchestration:operate",
  params: ThreadPath,
  body: ForkThreadInput.omit({ threadId: true }),
  idempotencyKey: "clientRequestId",
  input: ForkThreadInput,
  output: ForkThreadResult,
  outputName: "ForkResult",
  status: 201,
  handle: async (input, { caller, services }) => {
    const fork = await services.forks.forkFromCaller(caller, input);
    return { thread: services.queries.shell(fork.thread), strategy: fork.strategy, reason: fork.reason, transferId: fork.transferId, replayed: fork.replayed };
  },
});
