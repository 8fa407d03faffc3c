import { z } from "zod";
import { OrchestratorFailure } from "../engine/orchestrator-failure.js";
import type { Caller } from "../services/caller.js";
import type { ThreadMetadataResult, ThreadMetadataService } from "../services/thread-metadata-service.js";
import { ClientRequestId, threadReference } from "./fields.js";
import { MetadataResult } from "./thread-metadata.js";

/** t3_thread_update / updateThread: rename a thread or regenerate its title. */
export const ThreadUpdateInput = z
  .object({
    threadId: threadReference("The thread").optional(),
    action: z.enum(["rename", "regenerate_title"]),
    title: z.string().min(1).max(200).optional(),
    clientRequestId: ClientRequestId.optional(),
  })
  .strict();

export const ThreadUpdateOutput = MetadataResult;

/** The action's call on the metadata service; an action given the wrong fields is refused (invalid_request). */
export function applyThreadUpdate(
  metadata: ThreadMetadataService,
  caller: Caller,
  input: z.output<typeof ThreadUpdateInput>,
): Promise<ThreadMetadataResult> {
  const common = {
    ...(input.threadId !== undefined ? { threadId: input.threadId } : {}),
    ...(input.clientRequestId !== undefined ? { clientRequestId: input.clientRequestId } : {}),
  };
  if (input.action === "rename") {
    if (input.title === undefined) throw new OrchestratorFailure("invalid_request", 'action "rename" requires title.');
    return metadata.rename(caller, { ...common, title: input.title });
  }
  if (input.title !== undefined)
    throw new OrchestratorFailure(
      "invalid_request",
      'action "regenerate_title" does not take a title; use "rename" to set one.',
    );
  return metadata.regenerateTitle(caller, common);
}
