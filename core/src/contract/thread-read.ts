import { z } from "zod";
import { threadReference } from "./fields.js";
import { NativeSubagentSchema } from "./native-subagent.js";
import { RunViewSchema, ThreadShell } from "./thread-shell.js";
import { TreeUsageSchema } from "./usage.js";
import { WorkspaceViewSchema } from "./workspace.js";

/** t3_thread_read / readThread: a thread's state, recent runs and a page of its timeline. */
export const ThreadReadInput = z
  .object({
    threadId: threadReference("The thread"),
    view: z.enum(["messages", "activity"]).optional(),
    beforePosition: z.number().int().min(0).optional(),
    afterPosition: z.number().int().min(-1).optional(),
    limit: z.number().int().min(1).max(200).optional(),
    maxChars: z.number().int().min(2_000).max(100_000).optional(),
  })
  .strict();

export const ThreadReadOutput = z.object({
  thread: ThreadShell,
  runs: z.array(RunViewSchema),
  view: z.enum(["messages", "activity"]),
  items: z.array(
    z
      .object({
        position: z.number(),
        itemId: z.string(),
        kind: z.string(),
        role: z.enum(["user", "assistant"]).nullable(),
        status: z.string(),
        text: z.string(),
        truncated: z.boolean(),
        runId: z.string().nullable(),
        createdBy: z.string(),
        creationSource: z.string(),
        createdAt: z.string(),
        details: z.record(z.string(), z.unknown()),
      })
      .loose(),
  ),
  earlierPosition: z.number().nullable(),
  nextPosition: z.number().nullable(),
  hasMore: z.boolean(),
  truncatedItems: z.number(),
  characterBudget: z.number(),
  usage: TreeUsageSchema.optional().describe(
    "Switchyard: the thread's own usage and its whole tree's (children, grandchildren, across providers); each run in runs carries its own.",
  ),
  nativeSubagents: z
    .array(NativeSubagentSchema)
    .optional()
    .describe(
      "Switchyard: the provider's own sub-agents this thread's turns spawned (the newest 20, oldest first), each under its runId; observed, never orchestrator-owned. Absent when there are none (or the read's character budget left no room).",
    ),
  changes: WorkspaceViewSchema.optional().describe(
    "Switchyard: the thread's own workspace and whether it holds changes (absent: it shares its parent's or the project's); read_changes shows the diff.",
  ),
});
