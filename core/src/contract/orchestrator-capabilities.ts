import { z } from "zod";
import { InteractionModeOutput, RuntimeModeOutput } from "./fields.js";
import { BudgetViewSchema } from "./usage.js";

const BudgetLimits = z.object({
  tokens: z.number().nullable(),
  costUsd: z.number().nullable(),
  wallClockMs: z.number().nullable(),
});

/** orchestrator_capabilities (listProviders and listProjects show parts of it): what the caller inherits and may use. */
export const OrchestratorCapabilitiesInput = z
  .object({
    search: z.string().min(1).max(100).optional().describe("Find models outside the short list, legacy ones included."),
  })
  .strict();

export const OrchestratorCapabilitiesOutput = z.object({
  callerKind: z.enum(["agent", "client", "environment"]),
  inheritedProvider: z
    .object({ providerInstanceId: z.string(), model: z.string().nullable(), effort: z.string().nullable() })
    .nullable(),
  parentModes: z.object({ runtimeMode: RuntimeModeOutput, interactionMode: InteractionModeOutput }).nullable(),
  parentRunActive: z.boolean(),
  projectId: z.string().nullable(),
  projects: z.array(
    z.object({
      projectId: z.string(),
      name: z.string(),
      workspaces: z
        .array(z.enum(["shared", "worktree", "scratch", "existing"]))
        .optional()
        .describe(
          "Switchyard: the workspace strategies delegate_task and create_threads accept here (a folder that is not a git repository has no worktrees).",
        ),
      defaultWorkspace: z
        .enum(["shared", "worktree", "scratch", "existing"])
        .optional()
        .describe("Switchyard: the strategy work gets when a call names none."),
    }),
  ),
  environments: z
    .array(
      z.object({
        environmentId: z.string().describe("Pass it as environmentId to run a thread or task tool there."),
        url: z.string(),
        ownEnvironmentId: z
          .string()
          .nullable()
          .describe("The id in the links that environment builds (switchyard-thread://v2/<id>/…)."),
        reachable: z.boolean(),
        problem: z.object({ code: z.string(), reason: z.string(), message: z.string() }).nullable(),
        verbs: z.array(z.string()).nullable().describe("What its grant allows: read, create, send, delegate, cancel."),
        maxRuntimeMode: z.string().nullable(),
        projects: z.array(z.object({ projectId: z.string(), name: z.string() })),
        profiles: z
          .array(
            z.object({
              name: z.string().describe("Pass it as profile with this environmentId: it runs as defined there."),
              description: z.string(),
              target: z
                .object({
                  providerInstanceId: z.string().optional(),
                  driverKind: z.string().optional(),
                  model: z.string().optional(),
                  effort: z.string().optional(),
                })
                .optional(),
              maxRuntimeMode: z.string().optional(),
              maxInteractionMode: z.string().optional(),
            }),
          )
          .nullable()
          .optional()
          .describe(
            "Switchyard: the profiles its grant lets you name there (defined there, not here); null when it did not say (an older server, which refuses a profile).",
          ),
        providers: z.array(
          z.object({
            providerInstanceId: z.string(),
            driverKind: z.string(),
            canRunChildTasks: z.boolean(),
            models: z.array(z.string()),
            runtimeModes: z.array(z.string()),
            interactionModes: z.array(z.string()),
          }),
        ),
      }),
    )
    .optional()
    .describe(
      "Linked environments (other Switchyard servers the user linked) and what their grants let you do there; absent when none is linked.",
    ),
  environmentId: z.string().optional().describe("This environment's id (the one in the thread links it builds)."),
  grant: z
    .object({
      grantId: z.string(),
      verbs: z.array(z.string()),
      maxRuntimeMode: z.string(),
      projects: z.union([z.literal("*"), z.array(z.string())]),
      profiles: z
        .array(z.string())
        .optional()
        .describe("The profiles (this machine's own) work under the grant may name; empty: none."),
    })
    .optional()
    .describe("For a linked environment's call: what its grant here allows."),
  providers: z.array(
    z.object({
      providerInstanceId: z.string(),
      driverKind: z.string(),
      displayName: z.string(),
      canRunChildTasks: z.boolean(),
      constraints: z.array(z.string()),
      models: z.array(
        z.object({
          id: z.string(),
          custom: z.boolean().optional(),
          favorite: z.boolean().optional(),
          legacy: z.boolean().optional(),
          callerModel: z.boolean().optional(),
          efforts: z
            .array(z.string())
            .optional()
            .describe(
              "The reasoning efforts the model takes (target.effort), weakest first; absent when it takes none.",
            ),
          defaultEffort: z.string().optional().describe("The effort the provider uses when none is given."),
        }),
      ),
      omittedModels: z.number(),
      runtimeModes: z.array(RuntimeModeOutput).optional(),
      interactionModes: z.array(InteractionModeOutput),
      steering: z
        .enum(["native", "interrupt_restart", "queue", "none"])
        .describe(
          "What a default t3_thread_send does to a running turn: steers it natively, interrupts and restarts it with the message, queues behind it, or is refused (the provider does not report when a turn ends).",
        ),
      fork: z
        .enum(["native", "portable"])
        .describe(
          "How a fork of a thread is carried out: the provider copies the conversation, or it travels as portable context.",
        ),
      interrupt: z
        .enum(["running_turns", "unstarted_only"])
        .describe(
          "What t3_thread_interrupt and task_cancel can stop: running turns, or only runs whose turn has not reached the provider yet (a running turn is refused: thread_not_interruptible, task_not_cancellable).",
        ),
      nativeSubagentStop: z
        .enum(["parent_turn", "none"])
        .optional()
        .describe(
          "What stopping one of the provider's own (native) sub-agents costs: parent_turn, its parent's turn is stopped (t3_thread_interrupt or task_cancel on the parent), ending every native sub-agent of that turn; none, nothing stops them (no native sub-agents, or running turns cannot be stopped).",
        ),
    }),
  ),
  profiles: z
    .array(
      z.object({
        name: z
          .string()
          .describe("Pass it as profile to delegate_task, create_threads (each thread), t3_thread_launch."),
        description: z.string(),
        source: z.enum(["config", "switchyard", "claude", "opencode"]),
        target: z
          .object({
            providerInstanceId: z.string().optional(),
            driverKind: z.string().optional(),
            model: z.string().optional(),
            effort: z.string().optional(),
          })
          .optional(),
        maxRuntimeMode: RuntimeModeOutput.optional(),
        maxInteractionMode: InteractionModeOutput.optional(),
        providers: z
          .array(
            z.object({
              providerInstanceId: z.string(),
              available: z.boolean().describe("The provider can run work now."),
              canCarry: z
                .boolean()
                .describe(
                  "It enforces the profile's tool rules and applies its harness settings; false: work sent there with this profile is refused.",
                ),
              capability: z.string().optional().describe("With canCarry false: the capability it lacks."),
              reason: z.string().optional().describe("Why not, or what it leaves out."),
            }),
          )
          .optional()
          .describe(
            "Switchyard: the provider instances the profile could run on (its target's, else every enabled one) and whether each can carry it.",
          ),
        refusal: z
          .string()
          .optional()
          .describe(
            "Switchyard: why every use of the profile is refused (a project file sets what only config.json may).",
          ),
      }),
    )
    .optional()
    .describe(
      "Switchyard: agent profiles you may start work with (profile on delegate_task, create_threads, t3_thread_launch), from the user's config and your project's .switchyard/agents, .claude/agents and OpenCode agents.",
    ),
  features: z.object({
    polling: z.boolean(),
    cancellation: z.boolean(),
    batchThreadCreation: z.boolean(),
    threadManagement: z.boolean(),
    pendingRequests: z.boolean(),
    worktreeLaunch: z.boolean(),
    scheduling: z.boolean(),
    workspaces: z
      .boolean()
      .optional()
      .describe(
        "Switchyard: delegate_task and create_threads take workspace; read_changes, apply_changes and discard_changes take a child's changes back.",
      ),
  }),
  limits: z.object({
    maxWaitMs: z.number(),
    maxDelegationDepth: z.number(),
    maxConcurrentChildrenPerRun: z.number(),
    maxTasksPerRootThread: z.number(),
    maxThreadsPerCreate: z.number(),
    minScheduleIntervalMs: z.number().describe("The shortest interval (and cron gap) schedule_task accepts."),
  }),
  budgets: z
    .object({
      rootThread: BudgetLimits.describe(
        "Limits on each root thread's whole tree (config budgets.rootThread); null: no limit.",
      ),
      delegatedTask: BudgetLimits.describe(
        "Default limits of each delegated task's tree (config budgets.delegatedTask), unless delegate_task sets budget.",
      ),
      perTaskBudget: z
        .literal(true)
        .describe(
          "delegate_task takes a budget {tokens, costUsd, wallClockMs}, which must fit in what is left of the budgets covering you.",
        ),
      covering: z
        .array(BudgetViewSchema)
        .describe("The budgets covering your work now, innermost first, with what is left of each."),
      pricing: z.object({
        defaultsAsOf: z.string().nullable().describe("The day the shipped price table was taken (null: not used)."),
        configAsOf: z.string().nullable(),
        configuredModels: z.number(),
      }),
    })
    .describe(
      "Token, cost and wall-clock budgets on delegation trees. Usage arrives as each turn ends, so a tree can pass a limit by the turns running when it is reached; those are interrupted.",
    ),
});
