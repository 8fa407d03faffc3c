import { z } from "zod";
import { LinkedPullRequest } from "./thread-shell.js";

/** The receipt of a metadata change: t3_thread_update, link_pull_request, unlink_pull_request. */
export const MetadataResult = z.object({
  commandId: z.string(),
  sequence: z.number().nullable(),
  replayed: z.boolean(),
  threadId: z.string(),
  title: z.string(),
  titleRegenerationPending: z.boolean(),
  linkedPullRequest: LinkedPullRequest,
});
