import {
  threadInterruptAnswer,
  ThreadInterruptInput,
  ThreadInterruptOutput,
} from "../../../contract/thread-interrupt.js";
import { callerFromScope } from "../../caller-from-scope.js";
import { defineTool, STOPS_WORK } from "../tool-definition.js";

export const threadInterruptTool = defineTool({
  name: "t3_thread_interrupt",
  title: "Interrupt a thread run",
  description:
    "Interrupts a run (without runId: the newest interruptible one). A terminal run is returned unchanged (already_terminal); a thread with no active provider turn answers no_active_run.",
  input: ThreadInterruptInput,
  output: ThreadInterruptOutput,
  annotations: STOPS_WORK,
  requires: "orchestration:operate",
  handle: async (input, { scope, services }) =>
    threadInterruptAnswer(input.threadId, await services.threads.interruptFromCaller(callerFromScope(scope), input)),
});
