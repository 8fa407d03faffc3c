import { z } from "zod";
import { ClientRequestId, threadReference } from "./fields.js";
import { SnoozeThreadOutput } from "./snooze-thread.js";

/** unsnoozeThread (HTTP API): a snoozed thread woken now. */
export const UnsnoozeThreadInput = z
  .object({
    threadId: threadReference("The thread"),
    clientRequestId: ClientRequestId.optional(),
  })
  .strict();

export const UnsnoozeThreadOutput = SnoozeThreadOutput;

export { snoozeThreadAnswer as unsnoozeThreadAnswer } from "./snooze-thread.js";
