import { z } from "zod";
import { callerFromScope } from "../caller-from-scope.js";
import { InteractionModeInput, RuntimeModeInput, Target, ThreadShell } from "../contract.js";
import { CREATES_WORK, defineTool } from "../tool-definition.js";

export const threadLaunchTool = defineTool({
  name: "t3_thread_launch",
  title: "Launch a thread",
  description:
    'Launches one ordinary top-level thread, bound to its workspace before the agent starts: workspaceStrategy "root" (default, the project root), "existing_worktree" (with worktreePath), or "worktree" (a new git worktree on a new branch from baseRef; startFromOrigin defaults to true; for stacked PRs pass the parent branch as baseRef with startFromOrigin false). scratch: true launches in a folder of its own under the Scratch project. Pass the task in message. Project, model and modes inherit; workspace does not. Launch has no retry key: after a failed or lost response, list threads before launching again.',
  input: z
    .object({
      message: z.string().min(1).max(200_000),
      title: z.string().min(1).max(200).optional(),
      target: Target.optional(),
      runtimeMode: RuntimeModeInput.optional(),
      interactionMode: InteractionModeInput.optional(),
      workspaceStrategy: z.enum(["root", "existing_worktree", "worktree"]).optional(),
      worktreePath: z.string().min(1).optional(),
      baseRef: z.string().min(1).optional(),
      branch: z.string().min(1).max(200).optional(),
      startFromOrigin: z.boolean().optional(),
      scratch: z.boolean().optional(),
      projectId: z.string().min(1).optional(),
    })
    .strict(),
  output: z.object({ thread: ThreadShell, runId: z.string(), notes: z.array(z.string()) }),
  annotations: { ...CREATES_WORK, idempotentHint: false },
  requires: "orchestration:operate",
  handle: async (input, { scope, services }) => {
    const launched = await services.launches.launch(callerFromScope(scope), input);
    return { thread: services.queries.shell(launched.thread), runId: launched.runId, notes: [...launched.notes] };
  },
});
