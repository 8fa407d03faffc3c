import {
  setThreadSettledAnswer,
  SetThreadSettledInput,
  SetThreadSettledOutput,
} from "../../../contract/set-thread-settled.js";
import { callerFromScope } from "../../caller-from-scope.js";
import { CHANGES_STATE, defineTool } from "../tool-definition.js";

export const setThreadSettledTool = defineTool({
  name: "set_thread_settled",
  title: "Settle or revive a thread",
  description:
    "settled: true settles a thread whose work is done, so it leaves the active list (t3_thread_list settled: false) like the sidebar's Settled section; settled: false revives it. Sending a message to a settled thread revives it too. Settling is refused (invalid_request, details.reason) while the thread has unfinished or queued runs, pending requests or unfinished delegated tasks: interrupt, stop or wait for it first. Settling a settled thread changes nothing (changed: false). Another thread needs your live run and may not run with broader modes than yours. Idempotent by clientRequestId.",
  input: SetThreadSettledInput,
  output: SetThreadSettledOutput,
  annotations: CHANGES_STATE,
  requires: "orchestration:operate",
  handle: async (input, { scope, services }) =>
    setThreadSettledAnswer(
      await services.threads.setSettledFromCaller(callerFromScope(scope), input),
      services.queries,
    ),
});
