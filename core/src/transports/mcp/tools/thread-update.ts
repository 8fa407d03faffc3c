import { z } from "zod";
import { OrchestratorFailure } from "../../../engine/orchestrator-failure.js";
import { callerFromScope } from "../caller-from-scope.js";
import { ClientRequestId, MetadataResult } from "../contract.js";
import { CHANGES_STATE, defineTool } from "../tool-definition.js";

export const threadUpdateTool = defineTool({
  name: "t3_thread_update",
  title: "Update thread metadata",
  description:
    'Updates a thread\'s metadata (yours when threadId is omitted). action "rename" requires title; "regenerate_title" rejects one. Reusing a clientRequestId for the same action and thread replays the same receipt. Pull requests use link_pull_request / unlink_pull_request.',
  input: z
    .object({
      threadId: z.string().min(1).optional(),
      action: z.enum(["rename", "regenerate_title"]),
      title: z.string().min(1).max(200).optional(),
      clientRequestId: ClientRequestId.optional(),
    })
    .strict(),
  output: MetadataResult,
  annotations: CHANGES_STATE,
  requires: "orchestration:operate",
  handle: async (input, { scope, services }) => {
    const caller = callerFromScope(scope);
    const common = { ...(input.threadId !== undefined ? { threadId: input.threadId } : {}), ...(input.clientRequestId !== undefined ? { clientRequestId: input.clientRequestId } : {}) };
    if (input.action === "rename") {
      if (input.title === undefined) throw new OrchestratorFailure("invalid_request", 'action "rename" requires title.');
      return services.metadata.rename(caller, { ...common, title: input.title });
    }
    if (input.title !== undefined) throw new OrchestratorFailure("invalid_request", 'action "regenerate_title" does not take a title; use "rename" to set one.');
    return services.metadata.regenerateTitle(caller, common);
  },
});
