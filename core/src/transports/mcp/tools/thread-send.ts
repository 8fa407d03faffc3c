import { threadSendAnswer, ThreadSendInput, ThreadSendOutput } from "../../../contract/thread-send.js";
import { callerFromScope } from "../../caller-from-scope.js";
import { CREATES_WORK, defineTool } from "../tool-definition.js";

export const threadSendTool = defineTool({
  name: "t3_thread_send",
  title: "Send to a thread",
  description:
    'Sends a message to any thread. mode "auto" (default) starts an idle thread, steers a fully active turn (natively, else by interrupting and restarting it with the message; a provider that can do neither queues it), or queues behind a turn that is not steerable yet; "queue" runs it after active work; "steer" needs a running turn (providers without native steering interrupt and restart it with the message); "restart" interrupts the running turn and restarts it with the message (or, where a turn cannot be restarted, stops it and runs the message first). /compact and /logout, and a turn running one, are never steered or restarted. The result says what was asked, what was done, and degraded when that is less than the mode promises. A message from a thread starts with a header naming the sender (its link, title and id) and, unless replyToSource is false, asking for a reply; sending to a settled thread revives it. The target may not run with broader modes than yours. Idempotent by clientRequestId.',
  input: ThreadSendInput,
  output: ThreadSendOutput,
  annotations: CREATES_WORK,
  requires: "orchestration:operate",
  handle: async (input, { scope, services }) =>
    threadSendAnswer(services.threadLinks, await services.threads.sendFromCaller(callerFromScope(scope), input)),
});
