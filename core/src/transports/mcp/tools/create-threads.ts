import { z } from "zod";
import { callerFromScope } from "../caller-from-scope.js";
import { ClientRequestId, InteractionModeInput, RuntimeModeInput, Target, ThreadShell, WorkspaceInput } from "../contract.js";
import { CREATES_WORK, defineTool } from "../tool-definition.js";

export const createThreadsTool = defineTool({
  name: "create_threads",
  title: "Create threads",
  description:
    "Creates 1 to 20 threads: ordinary top-level threads, or with parentThreadId children of an existing thread whose finished turns are delivered to that parent as messages. Each entry resolves provider, model and modes on its own; threads inherit your project, branch and worktree (or projectId's root; a child its parent's). Entries with a prompt start working at once; entries without one stay idle.",
  input: z
    .object({
      threads: z
        .array(
          z
            .object({
              prompt: z.string().min(1).max(200_000).optional(),
              title: z.string().min(1).max(200).optional(),
              target: Target.optional(),
              runtimeMode: RuntimeModeInput.optional(),
              interactionMode: InteractionModeInput.optional(),
              parentThreadId: z
                .string()
                .min(1)
                .optional()
                .describe("Create it as a child of this thread (a router child): in the parent's project and workspace, listed as its sub-agent, each finished turn delivered to the parent as a message."),
              reportBack: z.boolean().optional().describe("With parentThreadId: deliver each finished turn to the parent (default true)."),
              workspace: WorkspaceInput.optional(),
            })
            .strict(),
        )
        .min(1)
        .max(20),
      clientRequestId: ClientRequestId.optional(),
      projectId: z.string().min(1).optional().describe("Defaults to your thread's project; required for callers outside a thread."),
    })
    .strict(),
  output: z.object({
    replayed: z.boolean(),
    threads: z.array(z.object({ index: z.number(), runId: z.string().nullable(), notes: z.array(z.string()), thread: ThreadShell })),
  }),
  annotations: CREATES_WORK,
  requires: "orchestration:operate",
  handle: async (input, { scope, services }) => {
    const created = await services.threads.createThreads(callerFromScope(scope), input);
    return {
      replayed: created.replayed,
      threads: created.threads.map((entry) => ({
        index: entry.index,
        runId: entry.runId,
        notes: [...entry.notes],
        thread: services.queries.shell(entry.thread),
      })),
    };
  },
});
