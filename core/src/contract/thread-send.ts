import { z } from "zod";
import type { ThreadManagementService } from "../services/thread-management-service.js";
import type { ThreadLinks } from "../services/thread-links.js";
import { ClientRequestId, threadReference } from "./fields.js";

/** t3_thread_send / sendMessage: a message to a thread, and what was done with it. */
export const ThreadSendInput = z
  .object({
    threadId: threadReference("The thread"),
    message: z.string().min(1).max(200_000),
    mode: z.enum(["auto", "queue", "steer", "restart"]).optional(),
    replyToSource: z
      .boolean()
      .optional()
      .describe(
        "From a thread, the message names your thread (link and title) so the receiver knows who wrote; by default it also asks for a reply to it. false leaves the reply instruction out (a coordinator that waits on the thread itself).",
      ),
    clientRequestId: ClientRequestId.optional(),
  })
  .strict();

export const ThreadSendOutput = z.object({
  threadId: z.string(),
  threadLink: z.string(),
  threadWebUrl: z
    .string()
    .optional()
    .describe(
      "The thread's page in this server's web UI (server.webUrl, else the address it listens on), for clients that cannot open switchyard-thread:// links; absent when no web UI address is known.",
    ),
  messageId: z.string(),
  runId: z.string(),
  delivery: z.enum(["started", "queued", "steered", "restarted", "interrupted_and_queued"]),
  asked: z.enum(["auto", "queue", "steer", "restart"]),
  action: z.enum(["start", "queue", "steer", "restart", "interrupt_then_queue_first"]),
  degraded: z.boolean(),
  reason: z.string(),
  replayed: z.boolean(),
});

/** The answer to a send: the delivery and the steering decision behind it. */
export function threadSendAnswer(
  links: Pick<ThreadLinks, "link" | "webUrl">,
  result: Awaited<ReturnType<ThreadManagementService["sendFromCaller"]>>,
): z.input<typeof ThreadSendOutput> {
  const webUrl = links.webUrl(result.threadId);
  return {
    threadId: result.threadId,
    threadLink: links.link(result.threadId),
    ...(webUrl !== undefined ? { threadWebUrl: webUrl } : {}),
    messageId: result.messageId,
    runId: result.runId,
    delivery: result.delivery,
    asked: result.decision.asked,
    action: result.decision.action,
    degraded: result.decision.degraded,
    reason: result.decision.reason,
    replayed: result.replayed,
  };
}
