import { z } from "zod";
import type { ThreadLaunchService } from "../services/thread-launch-service.js";
import { InteractionModeInput, ProfileName, RuntimeModeInput, Target } from "./fields.js";
import { ThreadShell } from "./thread-shell.js";
import type { ThreadShells } from "./thread-shells.js";

/** t3_thread_launch: one top-level thread, bound to its workspace before the agent starts. */
export const ThreadLaunchInput = z
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
    profile: ProfileName.optional(),
  })
  .strict();

export const ThreadLaunchOutput = z.object({ thread: ThreadShell, runId: z.string(), notes: z.array(z.string()) });

export async function threadLaunchAnswer(
  launched: Awaited<ReturnType<ThreadLaunchService["launch"]>>,
  shells: ThreadShells,
): Promise<z.input<typeof ThreadLaunchOutput>> {
  return { thread: await shells.shell(launched.thread), runId: launched.runId, notes: [...launched.notes] };
}
