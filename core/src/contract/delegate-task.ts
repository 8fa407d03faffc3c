import { z } from "zod";
import { ClientRequestId, InteractionModeInput, RuntimeModeInput, Target } from "./fields.js";
import { DelegateTaskResultSchema } from "./delegated-task.js";
import { WorkspaceInput } from "./workspace.js";

/** delegate_task: a sub-agent thread on any provider, sent a self-contained task. */
export const DelegateTaskInput = z
  .object({
    task: z.string().min(1).max(200_000),
    target: Target.optional(),
    projectId: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Run the child in this project's root (orchestrator_capabilities lists the projects you may use); default your own project and workspace.",
      ),
    title: z.string().min(1).max(200).optional(),
    role: z.enum(["implementation", "research", "review", "design", "test", "general"]).optional(),
    mode: z.enum(["async", "wait"]).optional(),
    timeoutMs: z
      .number()
      .int()
      .min(0)
      .max(3_600_000)
      .optional()
      .describe("How long a wait may block; capped by the server's maximum wait."),
    clientRequestId: ClientRequestId.optional(),
    runtimeMode: RuntimeModeInput.optional(),
    interactionMode: InteractionModeInput.optional(),
    workspace: WorkspaceInput.optional(),
    profile: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe(
        "A profile from orchestrator_capabilities profiles: it supplies the target, the child's instructions, mode ceilings, workspace and budget. Your explicit fields may narrow it (a narrower mode, a tighter budget), never widen it.",
      ),
    budget: z
      .object({
        tokens: z
          .number()
          .int()
          .positive()
          .optional()
          .describe("Tokens (input, cache, output) the task's whole tree may use."),
        costUsd: z
          .number()
          .positive()
          .optional()
          .describe("US dollars (reported or estimated) the task's whole tree may cost."),
        wallClockMs: z
          .number()
          .int()
          .min(1_000)
          .max(604_800_000)
          .optional()
          .describe("How long the task may run until its result is published."),
      })
      .strict()
      .optional()
      .describe(
        "Limits on the task's whole tree (it and everything it delegates). Each must fit in what is left of the budgets above you (orchestrator_capabilities lists them). When one is reached the tree gets no new children, its running turns are interrupted, and the task finishes with its partial result and budgetStop set.",
      ),
  })
  .strict();

export const DelegateTaskOutput = DelegateTaskResultSchema;
