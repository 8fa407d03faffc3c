import { z } from "zod";
import type { ThreadManagementService } from "../services/thread-management-service.js";
import {
  ClientRequestId,
  InteractionModeInput,
  ProfileName,
  RuntimeModeInput,
  Target,
  threadReference,
} from "./fields.js";
import { ThreadShell } from "./thread-shell.js";
import type { ThreadShells } from "./thread-shells.js";
import { WorkspaceInput } from "./workspace.js";

/** create_threads / createThreads: 1 to 20 threads, each started when it has a prompt. */
export const CreateThreadsInput = z
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
            parentThreadId: threadReference(
              "Create it as a child of this thread (a router child): in the parent's project and workspace, listed as its sub-agent, each finished turn delivered to the parent as a message. The parent",
            ).optional(),
            reportBack: z
              .boolean()
              .optional()
              .describe("With parentThreadId: deliver each finished turn to the parent (default true)."),
            workspace: WorkspaceInput.optional(),
            profile: ProfileName.optional(),
          })
          .strict(),
      )
      .min(1)
      .max(20),
    clientRequestId: ClientRequestId.optional(),
    projectId: z
      .string()
      .min(1)
      .optional()
      .describe("Defaults to your thread's project; required for callers outside a thread."),
  })
  .strict();

export const CreateThreadsOutput = z.object({
  replayed: z.boolean(),
  threads: z.array(
    z.object({ index: z.number(), runId: z.string().nullable(), notes: z.array(z.string()), thread: ThreadShell }),
  ),
});

/** The created threads, each as its shell. */
export async function createThreadsAnswer(
  created: Awaited<ReturnType<ThreadManagementService["createThreads"]>>,
  shells: ThreadShells,
): Promise<z.input<typeof CreateThreadsOutput>> {
  const threads = [];
  for (const entry of created.threads) {
    threads.push({
      index: entry.index,
      runId: entry.runId,
      notes: [...entry.notes],
      thread: await shells.shell(entry.thread),
    });
  }
  return { replayed: created.replayed, threads };
}
