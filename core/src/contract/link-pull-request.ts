import { z } from "zod";
import { ClientRequestId, threadReference } from "./fields.js";
import { MetadataResult } from "./thread-metadata.js";

/** link_pull_request: a pull request URL linked to a thread. */
export const LinkPullRequestInput = z
  .object({
    threadId: threadReference("The thread").optional(),
    url: z.string().url(),
    clientRequestId: ClientRequestId.optional(),
  })
  .strict();

export const LinkPullRequestOutput = MetadataResult;
