import { forkThreadAnswer, ForkThreadInput, ForkThreadResult } from "../../../../contract/fork-thread.js";
import { defineRoute } from "../api-route.js";
import { ThreadPath } from "./threads.js";

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
  handle: async (input, { caller, services }) =>
    forkThreadAnswer(await services.forks.forkFromCaller(caller, input), services.queries),
});
