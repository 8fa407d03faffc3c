import { threadReference } from "../../../../contract/fields.js";
import { applyThreadUpdate, ThreadUpdateInput, ThreadUpdateOutput } from "../../../../contract/thread-update.js";
import { defineRoute } from "../api-route.js";
import { ThreadPath } from "./threads.js";

export const updateThreadRoute = defineRoute({
  method: "POST",
  path: "/threads/{threadId}/update",
  operationId: "updateThread",
  summary: "Rename a thread or regenerate its title",
  description:
    't3_thread_update: action "rename" sets title (1 to 200 characters, trimmed); "regenerate_title" derives one from the conversation and rejects a title. The thread may not run with broader modes than the token\'s ceiling. Idempotency-Key (or clientRequestId) makes a retry return the same receipt.',
  tag: "threads",
  requires: "orchestration:operate",
  params: ThreadPath,
  body: ThreadUpdateInput.omit({ threadId: true }),
  idempotencyKey: "clientRequestId",
  input: ThreadUpdateInput.extend({ threadId: threadReference("The thread") }),
  output: ThreadUpdateOutput,
  outputName: "UpdateResult",
  handle: (input, { caller, services }) => applyThreadUpdate(services.metadata, caller, input),
});
