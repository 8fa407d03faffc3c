import { z } from "zod";
import { OrchestratorFailure } from "../../../engine/orchestrator-failure.js";
import type { Caller } from "../../../services/caller.js";
import type { ThreadMetadataResult, ThreadMetadataService } from "../../../services/thread-metadata-service.js";
import { callerFromScope } from "../caller-from-scope.js";
import { ClientRequestId, MetadataResult } from "../contract.js";
import { CHANGES_STATE, defineTool } from "../tool-definition.js";

const ThreadUpdateInput = z
  .object({
    threadId: z.string().min(1).optional(),
    action: z.enum(["rename", "regenerate_title"]),
    title: z.string().min(1).max(200).optional(),
    clientRequestId: ClientRequestId.optional(),
  })
  .strict();

export const threadUpdateTool = defineTool({
  name: "t3_thread_update",
  title: "Update thread metadata",
  description:
    'Updates a thread\'s metadata (yours when threadId is omitted). action "rename" requires title; "regenerate_title" rejects one. Reusing a clientRequestId for the same action and thread replays the same receipt. Pull requests use link_pull_request / unlink_pull_request.',
  input: ThreadUpdateInput,
  output: MetadataResult,
  annotations: CHANGES_STATE,
  requires: "orchestration:operate",
  handle: async (input, { scope, services }) => applyThreadUpdate(services.metadata, callerFromScope(scope), input),
});

/** t3_thread_update's actions over the metadata service; the HTTP API's updateThread shares it. */
export function applyThreadUpdate(metadata: ThreadMetadataService, caller: Caller, input: z.output<typeof ThreadUpdateInput>): ThreadMetadataResult {
  const common = { ...(input.threadId !== undefined ? { threadId: input.threadId } : {}), ...(input.clientRequestId !== undefined ? { clientRequestId: input.clientRequestId } : {}) };
  if (input.action === "rename") {
    if (input.title === undefined) throw new OrchestratorFailure("invalid_request", 'action "rename" requires title.');
    return metadata.rename(caller, { ...common, title: input.title });
  }
  if (input.title !== undefined) throw new OrchestratorFailure("invalid_request", 'action "regenerate_title" does not take a title; use "rename" to set one.');
  return metadata.regenerateTitle(caller, common);
}
