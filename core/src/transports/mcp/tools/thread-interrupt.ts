import { z } from "zod";
import { callerFromScope } from "../caller-from-scope.js";
import { RunStatus } from "../contract.js";
import { defineTool, STOPS_WORK } from "../tool-definition.js";

export const threadInterruptTool = defineTool({
  name: "t3_thread_interrupt",
  title: "Interrupt a thread run",
  description:
    "Interrupts a run (without runId: the newest interruptible one). A terminal run is returned unchanged (already_terminal); a thread with no active provider turn answers no_active_run.",
  input: z.object({ threadId: z.string().min(1), runId: z.string().min(1).optional() }).strict(),
  output: z.object({
    threadId: z.string(),
    status: z.enum(["interrupt_requested", "already_terminal", "no_active_run"]),
    runId: z.string().nullable(),
    runStatus: RunStatus.nullable(),
  }),
  annotations: STOPS_WORK,
  requires: "orchestration:operate",
  handle: async (input, { scope, services }) => {
    const result = services.threads.interruptFromCaller(callerFromScope(scope), input);
    return { threadId: input.threadId, status: result.status, runId: result.run?.id ?? null, runStatus: result.run?.status ?? null };
  },
});
