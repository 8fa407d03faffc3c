import { z } from "zod";
import { callerFromScope } from "../caller-from-scope.js";
import { ClientRequestId } from "../contract.js";
import { CREATES_WORK, defineTool } from "../tool-definition.js";
import { threadLink } from "../../../services/thread-views.js";

export const threadSendTool = defineTool({
  name: "t3_thread_send",
  title: "Send to a thread",
  description:
    'Sends a message to any thread. mode "auto" (default) starts an idle thread, steers a fully active turn (natively, else by interrupting and restarting it with the message; a provider that can do neither queues it), or queues behind a turn that is not steerable yet; "queue" runs it after active work; "steer" needs a running turn (providers without native steering interrupt and restart it with the message); "restart" interrupts the running turn and restarts it with the message (or, where a turn cannot be restarted, stops it and runs the message first). /compact and /logout, and a turn running one, are never steered or restarted. The result says what was asked, what was done, and degraded when that is less than the mode promises. A message from a thread starts with a header naming the sender (its link, title and id) and, unless replyToSource is false, asking for a reply; sending to a settled thread revives it. The target may not run with broader modes than yours. Idempotent by clientRequestId.',
  input: z
    .object({
      threadId: z.string().min(1),
      message: z.string().min(1).max(200_000),
      mode: z.enum(["auto", "queue", "steer", "restart"]).optional(),
      replyToSource: z
        .boolean()
        .optional()
        .describe("From a thread, the message names your thread (link and title) so the receiver knows who wrote; by default it also asks for a reply to it. false leaves the reply instruction out (a coordinator that waits on the thread itself)."),
      clientRequestId: ClientRequestId.optional(),
    })
    .strict(),
  output: z.object({
    threadId: z.string(),
    threadLink: z.string(),
    messageId: z.string(),
    runId: z.string(),
    delivery: z.enum(["started", "queued", "steered", "restarted", "interrupted_and_queued"]),
    asked: z.enum(["auto", "queue", "steer", "restart"]),
    action: z.enum(["start", "queue", "steer", "restart", "interrupt_then_queue_first"]),
    degraded: z.boolean(),
    reason: z.string(),
    replayed: z.boolean(),
  }),
  annotations: CREATES_WORK,
  requires: "orchestration:operate",
  handle: async (input, { scope, services }) => {
    const result = services.threads.sendFromCaller(callerFromScope(scope), input);
    return {
      threadId: result.threadId,
      threadLink: threadLink(services.environmentId, result.threadId),
      messageId: result.messageId,
      runId: result.runId,
      delivery: result.delivery,
      asked: result.decision.asked,
      action: result.decision.action,
      degraded: result.decision.degraded,
      reason: result.decision.reason,
      replayed: result.replayed,
    };
  },
});
