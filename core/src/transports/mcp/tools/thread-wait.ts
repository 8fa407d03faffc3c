import { ThreadWaitInput, threadWaitRequest, WaitResult, waitResultView } from "../../../contract/thread-wait.js";
import { callerFromScope } from "../../caller-from-scope.js";
import { defineTool, READ_ONLY } from "../tool-definition.js";

export const threadWaitTool = defineTool({
  name: "t3_thread_wait",
  title: "Wait for a thread run",
  description:
    "Waits until a run becomes completed, failed, cancelled or interrupted, or the thread needs attention: a blocking question or an approval opens. endedBy says which (run_finished, question, approval; idle when the thread has no run, timeout), and attention names the request. Pass the returned cursor to the next wait so a request already reported does not end it again: successive waits report each new question or approval once, then the finished run. Without runId it pins the latest run at call time, queued or not (so a wait right after a queued send waits for that message, not an older answer). The wait is capped by the server's maximum; a timeout (waitTimedOut) reports the latest status and cancels nothing: call it again to keep waiting.",
  input: ThreadWaitInput,
  output: WaitResult,
  annotations: READ_ONLY,
  requires: "orchestration:read",
  handle: async (input, { scope, services, signal, reportProgress }) => {
    const result = await services.threads.waitFromCaller(
      callerFromScope(scope),
      threadWaitRequest(input, { signal, onProgress: () => void reportProgress(`waiting for ${input.threadId}`) }),
    );
    return waitResultView(services.threadLinks, result);
  },
});
