import type { CommandContext } from "../engine/command-context.js";
import { OrchestratorFailure } from "../engine/orchestrator-failure.js";
import { createThread } from "../engine/thread-records.js";
import type { ThreadRecord } from "../store/records.js";
import { stableHash } from "../util/ids.js";
import type { Caller } from "./caller.js";
import { CLIENT_CEILING } from "./provider-selection-service.js";

/**
 * The thread of an outside agent session: one per client token and MCP session (per token for a
 * client that keeps no session), so the same session always lands on the same thread, also after
 * a Switchyard restart (the session id is the client's, and the id derives from it), and another
 * token can never reach it.
 */
export function attachedThreadId(credentialId: string, mcpSessionId: string | null): string {
  return `thread:attached:${stableHash(credentialId, mcpSessionId ?? "(token)")}`;
}

/**
 * What stands for the parent run of an attached thread's tasks: the session has no run here (its
 * turns run outside), and its tasks count as one run's for `budgets.maxConcurrentChildrenPerRun`.
 */
export function attachedSessionRunKey(threadId: string): string {
  return `attached-session:${threadId}`;
}

/** The provider an attached thread shows: the client's own name (never a provider instance here). */
function attachedProvider(caller: Caller): string {
  const name = caller.attachment?.client?.name ?? caller.connection?.harness ?? "client";
  return `attached:${name}`;
}

/**
 * The attached thread of a client's session, created in `projectId` on the session's first
 * delegation (inside that command's transaction) and read as it is afterwards. Its modes are the
 * token's ceiling, the broadest its children may have.
 */
export async function ensureAttachedThread(
  ctx: CommandContext,
  caller: Caller,
  place: { projectId: string; cwd: string | null },
): Promise<ThreadRecord> {
  const attachment = caller.attachment;
  if (caller.kind !== "client" || attachment === undefined) {
    throw new OrchestratorFailure("parent_not_active", "Only an outside client's MCP session gets an attached thread.");
  }
  const credentialId = attachment.credentialId;
  const id = attachedThreadId(credentialId, attachment.mcpSessionId);
  const existing = await ctx.get("thread", id);
  if (existing !== null) {
    if (existing.deletedAt !== null)
      throw new OrchestratorFailure(
        "thread_not_found",
        `This session's attached thread ${id} was deleted; start a new session of your agent.`,
        { threadId: id },
      );
    return existing;
  }
  const project = await ctx.require("project", place.projectId);
  const ceiling = caller.ceiling ?? CLIENT_CEILING;
  const client = attachment.client;
  return await createThread(ctx, {
    id,
    projectId: project.id,
    title: `${client !== null ? `${client.name} ${client.version}` : (caller.connection?.harness ?? "outside client")} session`,
    providerInstanceId: attachedProvider(caller),
    model: null,
    runtimeMode: ceiling.runtimeMode,
    interactionMode: ceiling.interactionMode,
    cwd: place.cwd ?? project.rootPath,
    branch: null,
    worktreePath: null,
    workspaceStrategy: "root",
    lineage: {
      relationship: "attached",
      parentThreadId: null,
      parentRunId: null,
      parentNodeId: null,
      delegatedTaskId: null,
      attached: { credentialId, mcpSessionId: attachment.mcpSessionId, client },
    },
    createdBy: "agent",
    creationSource: "attached",
    // The outside session acts as its token: what its children schedule runs under that token.
    authority: caller.authority ?? null,
  });
}
