import { z } from "zod";

/**
 * Switchyard's addition: a provider-native sub-agent, as t3_thread_read, task_status and the
 * HTTP API show it under the run that spawned it. Observed, never owned: it has no thread of
 * its own, Switchyard did not create it and cannot (yet) stop or answer it on its own.
 */
export const NativeSubagentSchema = z.object({
  origin: z
    .literal("provider_native")
    .describe("Always provider_native: the provider's own sub-agent, observed, never an orchestrator-owned child."),
  itemId: z.string().describe("Its timeline item in the parent thread."),
  nativeId: z.string().describe("The provider's id for it (never a Switchyard id)."),
  runId: z.string().nullable().describe("The parent's run whose turn spawned it."),
  title: z.string(),
  status: z.enum(["running", "completed", "failed"]),
  providerInstanceId: z.string().nullable().describe("The provider it ran on: the parent's."),
  model: z.string().nullable().describe("Its model, when the provider said."),
  agentType: z.string().nullable().describe("Its agent type or role as the provider names it."),
  task: z.string().nullable().describe("The instructions the parent gave it (the first 500 characters)."),
  taskChars: z.number().int().nullable().describe("The length of the task as kept."),
  summary: z.string().nullable().describe("Its result summary (the first 1,000 characters), when finished."),
  parentItemId: z.string().nullable().describe("The parent's tool call item that spawned it, when one did."),
  nativeThreadId: z.string().nullable(),
  usage: z
    .object({
      tokens: z.object({
        input: z.number(),
        output: z.number(),
        cacheRead: z.number(),
        cacheWrite: z.number(),
        reasoning: z.number(),
        total: z.number(),
      }),
      costUsd: z.number().nullable(),
      countedIn: z
        .literal("parent_turn")
        .describe("A breakdown of the parent turn's usage, already in every total: never add it again."),
    })
    .nullable()
    .describe("What it used, when the provider reports usage per sub-agent; null when it does not."),
  transcript: z
    .object({
      messages: z.number().int().describe("Messages kept (the newest 40, each up to 2,000 characters)."),
      dropped: z.number().int().describe("Older messages dropped to keep the bound."),
      latest: z.object({ role: z.enum(["user", "assistant"]), text: z.string() }).nullable(),
    })
    .describe("Its transcript where the harness gives it; the whole kept transcript is the item's transcript part."),
  createdAt: z.string(),
  updatedAt: z.string(),
});
