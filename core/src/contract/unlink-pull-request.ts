import { z } from "zod";
import { ClientRequestId, threadReference } from "./fields.js";
import { MetadataResult } from "./thread-metadata.js";

/** unlink_pull_request: a thread's linked pull request removed. */
export const UnlinkPullRequestInput = z
  .object({ threadId: threadReference("The thread").optional(), clientRequestId: ClientRequestId.optional() })
  .strict();

export const UnlinkPullRequestOutput = MetadataResult;
