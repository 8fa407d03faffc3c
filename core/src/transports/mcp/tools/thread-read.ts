import { z } from "zod";
import { callerFromScope } from "../caller-from-scope.js";
import { RunViewSchema, ThreadShell, TreeUsageSchema, WorkspaceViewSchema } from "../contract.js";
import { defineTool, READ_ONLY } from "../tool-definition.js";

export const threadReadTool = defineTool({
  name: "t3_thread_read",
  title: "Read a thread",
  description:
    'Reads a thread\'s state, recent runs and timeline. view "messages" (default) returns user and assistant messages and proposed plans; "activity" adds summarized tool calls, reasoning, sub-agents and requests. Without a cursor an agent gets the newest items (older: beforePosition=earlierPosition); afterPosition=-1 starts at the oldest, afterPosition=nextPosition reads newer ones. Results stop near maxChars (default 30000); item text is bounded and flagged truncated.',
  input: z
    .object({
      threadId: z.string().min(1),
      view: z.enum(["messages", "activity"]).optional(),
      beforePosition: z.number().int().min(0).optional(),
      afterPosition: z.number().int().min(-1).optional(),
      limit: z.number().int().min(1).max(200).optional(),
      maxChars: z.number().int().min(2_000).max(100_000).optional(),
    })
    .strict(),
  output: z.object({
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
    usage: TreeUsageSchema.optional().describe("Switchyard: the thread's own usage and its whole tree's (children, grandchildren, across providers); each run in runs carries its own."),
    changes: WorkspaceViewSchema.optional().describe("Switchyard: the thread's own workspace and whether it holds changes (absent: it shares its parent's or the project's); read_changes shows the diff."),
  }),
  annotations: READ_ONLY,
  requires: "orchestration:read",
  handle: async (input, { scope, services }) => services.queries.read(callerFromScope(scope), input),
});
