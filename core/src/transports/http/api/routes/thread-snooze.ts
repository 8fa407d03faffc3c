import { snoozeThreadAnswer, SnoozeThreadInput, SnoozeThreadOutput } from "../../../../contract/snooze-thread.js";
import {
  unsnoozeThreadAnswer,
  UnsnoozeThreadInput,
  UnsnoozeThreadOutput,
} from "../../../../contract/unsnooze-thread.js";
import { defineRoute } from "../api-route.js";
import { ThreadPath } from "./threads.js";

export const snoozeThreadRoute = defineRoute({
  method: "POST",
  path: "/threads/{threadId}/snooze",
  operationId: "snoozeThread",
  summary: "Snooze a thread until a time",
  description:
    "Seed 000's snooze: until (ISO-8601, in the future, else invalid_request naming until) hides the thread from listThreads snoozed=false; list and read report snoozed and snoozedUntil. It wakes when the time passes, or early when it gets a pending request (approval or question) or a run fails after the snooze; completed runs, background wakes and delegated completions keep it snoozed. The thread may not run with broader modes than the token's ceiling. Idempotency-Key (or clientRequestId) makes a retry return the same answer.",
  tag: "threads",
  requires: "orchestration:operate",
  params: ThreadPath,
  body: SnoozeThreadInput.omit({ threadId: true }),
  idempotencyKey: "clientRequestId",
  input: SnoozeThreadInput,
  output: SnoozeThreadOutput,
  outputName: "SnoozeResult",
  handle: async (input, { caller, services }) =>
    snoozeThreadAnswer(await services.threads.snoozeFromCaller(caller, input), services.queries),
});

export const unsnoozeThreadRoute = defineRoute({
  method: "POST",
  path: "/threads/{threadId}/unsnooze",
  operationId: "unsnoozeThread",
  summary: "Wake a snoozed thread now",
  description:
    "Clears the thread's snooze; a thread that is not snoozed is unchanged (changed: false). Idempotency-Key (or clientRequestId) makes a retry return the same answer.",
  tag: "threads",
  requires: "orchestration:operate",
  params: ThreadPath,
  body: UnsnoozeThreadInput.omit({ threadId: true }),
  idempotencyKey: "clientRequestId",
  input: UnsnoozeThreadInput,
  output: UnsnoozeThreadOutput,
  outputName: "SnoozeResult",
  handle: async (input, { caller, services }) =>
    unsnoozeThreadAnswer(await services.threads.unsnoozeFromCaller(caller, input), services.queries),
});
