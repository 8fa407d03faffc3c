import { z } from "zod";
import { InteractionModeOutput, RunStatus, RuntimeModeOutput } from "./fields.js";

/** A thread and a run as every operation that returns one shows them. */

export const LinkedPullRequest = z
  .object({ url: z.string(), number: z.number().nullable(), linkedAt: z.string() })
  .nullable();

export const ThreadShell = z
  .object({
    threadId: z.string(),
    link: z.string(),
    webUrl: z
      .string()
      .optional()
      .describe(
        "The thread's page in this server's web UI (server.webUrl, else the address it listens on), for clients that cannot open switchyard-thread:// links; absent when no web UI address is known.",
      ),
    title: z.string(),
    projectId: z.string(),
    providerInstanceId: z.string(),
    model: z.string().nullable(),
    effort: z.string().nullable(),
    runtimeMode: RuntimeModeOutput,
    interactionMode: InteractionModeOutput,
    status: z.union([RunStatus, z.literal("idle")]),
    latestRunId: z.string().nullable(),
    queuedRuns: z.number(),
    relationship: z
      .enum(["root", "subagent", "fork", "attached"])
      .describe(
        "attached: the thread of an agent session outside Switchyard (a harness wired with switchyard connect); no turn runs in it here.",
      ),
    parentThreadId: z.string().nullable(),
    delegatedTaskId: z.string().nullable(),
    reportBack: z.boolean(),
    branch: z.string().nullable(),
    worktreePath: z.string().nullable(),
    cwd: z.string(),
    linkedPullRequest: LinkedPullRequest,
    titleRegenerationPending: z.boolean(),
    snoozed: z.boolean(),
    snoozedUntil: z.string().nullable(),
    settled: z
      .boolean()
      .describe("Settled with set_thread_settled: its work is done; a message sent to it revives it."),
    settledAt: z.string().nullable(),
    stopped: z
      .boolean()
      .optional()
      .describe(
        "Switchyard's addition: Stop was pressed, so queued runs are held until resume (POST /threads/{id}/resume) or the next message.",
      ),
    attached: z
      .object({
        client: z
          .object({ name: z.string(), version: z.string() })
          .nullable()
          .describe("The outside client as it named itself, when it did."),
      })
      .optional()
      .describe("Switchyard's addition, on an attached thread only: its outside agent session."),
    profile: z
      .object({
        name: z.string(),
        source: z.enum(["config", "switchyard", "claude", "opencode"]),
        file: z.string(),
        version: z.string().describe("sha256: and 16 hex digits of the profile definition's content."),
      })
      .optional()
      .describe(
        "Switchyard's addition, on a thread delegated with a profile only: which profile, and which version of its definition (docs/profiles.md).",
      ),
    blockedOnThreadWait: z.boolean(),
    pendingBackgroundTasks: z.number(),
    createdBy: z.enum(["user", "agent", "system", "provider"]),
    creationSource: z.enum(["cli", "mcp", "api", "scheduler", "system", "provider", "attached"]),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .loose();

export const RunViewSchema = z
  .object({
    runId: z.string(),
    ordinal: z.number(),
    status: RunStatus,
    summary: z.string().nullable(),
    error: z.object({ code: z.string().optional(), message: z.string() }).nullable(),
    createdAt: z.string().optional().describe("Switchyard's addition: when the run was asked for."),
    startedAt: z
      .string()
      .nullable()
      .optional()
      .describe("Switchyard's addition: when it left the queue (null while queued)."),
    endedAt: z.string().nullable().optional().describe("Switchyard's addition: when it ended (null while it runs)."),
  })
  .loose();
