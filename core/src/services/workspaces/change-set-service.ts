import { inject, injectable } from "tsyringe";
import { type SwitchyardConfig, ConfigToken } from "../../config/config-schema.js";
import { type Engine, EngineToken } from "../../engine/ports.js";
import { conflictsAsInvalid, OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import { activeRun } from "../../engine/run-lifecycle.js";
import { runtimeModeRank } from "../../spec/index.js";
import type { WorkspaceOutcome, WorkspaceRecord } from "../../store/records.js";
import { derive } from "../../util/ids.js";
import type { Caller } from "../caller.js";
import { CallerContext } from "../caller-context.js";
import { EventWaiter } from "../event-waiter.js";
import { RepositoryLocks } from "./repository-locks.js";
import { WorkspaceEffects } from "./workspace-effects.js";
import { WorkspacePlanner } from "./workspace-planner.js";
import {
  outcomeOf,
  putWorkspace,
  withOutcome,
  workspaceOf,
  workspaceView,
  WORKSPACE_EFFECT,
  type WorkspaceView,
} from "./workspace-records.js";

/** The longest a diff page may be, in characters (a read must fit whatever an agent can take). */
export const MAX_DIFF_PAGE_CHARS = 100_000;
/** A diff page's default size, like t3_thread_read's. */
export const DEFAULT_DIFF_PAGE_CHARS = 30_000;
/** How many files and commits a read lists. */
const LISTED = 500;

/** read_changes: a page of a child's change set. */
export interface ChangeSetRead {
  readonly threadId: string;
  readonly workspace: WorkspaceView;
  readonly baseCommit: string | null;
  readonly head: string | null;
  readonly files: readonly {
    readonly path: string;
    readonly status: string;
    readonly insertions: number | null;
    readonly deletions: number | null;
  }[];
  readonly fileCount: number;
  readonly commits: readonly { readonly commit: string; readonly subject: string }[];
  readonly commitCount: number;
  /** Changes in the folder no commit has yet (its run is still going). */
  readonly uncommitted: boolean;
  readonly diff: string;
  /** Where this page starts in the whole diff, and where the next one does (null: this is the end). */
  readonly offset: number;
  readonly nextOffset: number | null;
  readonly totalChars: number;
  readonly truncated: boolean;
}

/** apply_changes / discard_changes: the request, what came of it (null while under way), and the workspace now. */
export interface ChangeSetDecision {
  readonly threadId: string;
  readonly requestId: string;
  readonly replayed: boolean;
  readonly outcome: WorkspaceOutcome | null;
  /** True when the wait ended before the outcome: read_changes shows it once it is there. */
  readonly pending: boolean;
  readonly workspace: WorkspaceView;
}

/**
 * A child's change set and what its parent does with it: read it (paged, bounded), apply it to
 * the parent's workspace, or discard it (optionally keeping the branch for a pull request).
 *
 * Who may: reading is like t3_thread_read (any thread the caller may read). Applying or
 * discarding changes the target's workspace or removes the child's, so an agent may do it only
 * for a thread whose changes go back to its own thread, during its live run; a client (the web
 * UI, the CLI, a script) with the operate verb on the thread's project. Applying writes files
 * into the target's workspace without an approval, so the caller's modes must already allow
 * that: `auto-accept-edits` or `full-access` (an approval-required agent or token is refused).
 */
@injectable()
export class ChangeSetService {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(ConfigToken) private readonly config: SwitchyardConfig,
    private readonly callers: CallerContext,
    private readonly waiter: EventWaiter,
    private readonly planner: WorkspacePlanner,
    private readonly effects: WorkspaceEffects,
    private readonly locks: RepositoryLocks,
  ) {}

  /** A thread's workspace view, or null when it shares its parent's (or the project's). */
  async view(threadId: string): Promise<WorkspaceView | null> {
    const workspace = await workspaceOf(this.engine.reader, threadId);
    return workspace === null ? null : workspaceView(workspace);
  }

  private async workspaceFor(caller: Caller, threadId: string): Promise<WorkspaceRecord> {
    await this.callers.requireInScope(caller, { threadIds: [threadId] });
    const thread = await this.engine.reader.get("thread", threadId);
    if (thread === null || thread.deletedAt !== null)
      throw new OrchestratorFailure("thread_not_found", `Thread ${threadId} does not exist.`, { threadId });
    const workspace = await workspaceOf(this.engine.reader, threadId);
    if (workspace === null) {
      throw new OrchestratorFailure(
        "invalid_request",
        `Thread ${threadId} works in a shared workspace (${thread.cwd}), so it has no change set of its own; give new work workspace "worktree" to get one.`,
        { threadId, reason: "shared_workspace" },
      );
    }
    return workspace;
  }

  /** read_changes: the change set against its base, a page of its diff at a time. */
  async read(
    caller: Caller,
    input: { threadId: string; path?: string | undefined; offset?: number | undefined; maxChars?: number | undefined },
  ): Promise<ChangeSetRead> {
    let workspace = await this.workspaceFor(caller, input.threadId);
    const empty = {
      baseCommit: workspace.baseCommit,
      head: null,
      files: [],
      fileCount: 0,
      commits: [],
      commitCount: 0,
      uncommitted: false,
      diff: "",
      offset: 0,
      nextOffset: null,
      totalChars: 0,
      truncated: false,
    };
    if (workspace.status !== "ready" || workspace.repository === null || workspace.baseCommit === null) {
      return { threadId: input.threadId, workspace: workspaceView(workspace), ...empty };
    }
    const detail = await this.locks.with(workspace.repository, async () => {
      // What a run that has ended left is committed first (the same commit its end makes), so
      // the parent reads the child's whole work however soon after the result it asks.
      await this.effects.snapshot((await this.engine.reader.get("workspace", workspace.id))!);
      return this.planner.git.changeSet(workspace.path, workspace.baseCommit!, input.path ?? null);
    });
    workspace = (await this.engine.reader.get("workspace", workspace.id))!;
    const maxChars = Math.min(input.maxChars ?? DEFAULT_DIFF_PAGE_CHARS, MAX_DIFF_PAGE_CHARS);
    const offset = Math.min(input.offset ?? 0, detail.diff.length);
    const page = detail.diff.slice(offset, offset + maxChars);
    const next = offset + page.length < detail.diff.length ? offset + page.length : null;
    return {
      threadId: input.threadId,
      workspace: workspaceView(workspace),
      baseCommit: workspace.baseCommit,
      head: detail.head,
      files: detail.files.slice(0, LISTED),
      fileCount: detail.files.length,
      commits: detail.commits.slice(0, LISTED),
      commitCount: detail.commits.length,
      uncommitted: detail.uncommitted,
      diff: page,
      offset,
      nextOffset: next,
      totalChars: detail.diff.length,
      truncated: next !== null || offset > 0,
    };
  }

  /** Refuses a caller that may not decide about this workspace's changes. */
  private async requireMayDecide(
    caller: Caller,
    workspace: WorkspaceRecord,
    action: "apply_changes" | "discard_changes",
  ): Promise<void> {
    if (caller.kind === "environment") {
      throw new OrchestratorFailure(
        "capability_denied",
        `${action} changes files on this machine; a linked environment may not call it.`,
        { action },
      );
    }
    if (caller.kind === "agent") {
      if (workspace.target.threadId !== caller.threadId) {
        throw new OrchestratorFailure(
          "invalid_request",
          `The changes of thread ${workspace.threadId} go back to ${workspace.target.threadId === null ? `the project folder ${workspace.target.path}` : `thread ${workspace.target.threadId}`}, not to yours; only that thread (or the user) may ${action === "apply_changes" ? "apply" : "discard"} them.`,
          { threadId: workspace.threadId, targetThreadId: workspace.target.threadId },
        );
      }
      await this.callers.requireLiveRunForChanges(caller, action);
    }
    if (action === "apply_changes") {
      const ceiling = await this.callers.ceiling(caller);
      if (runtimeModeRank(ceiling.runtimeMode) < runtimeModeRank("auto-accept-edits")) {
        throw new OrchestratorFailure(
          "runtime_mode_escalation_denied",
          `apply_changes writes files into ${workspace.target.path} without asking, and ${caller.kind === "agent" ? "your run's" : "this token's"} runtime mode "${ceiling.runtimeMode}" needs an approval for every edit. Ask the user to apply them (web UI, or the API with a token allowed auto-accept-edits).`,
          { threadId: workspace.threadId, runtimeMode: ceiling.runtimeMode },
        );
      }
    }
    if ((await activeRun(this.engine.reader, workspace.threadId)) !== null) {
      throw new OrchestratorFailure(
        "invalid_request",
        `Thread ${workspace.threadId} is still working in its workspace; wait for its run to end (t3_thread_wait, task_status) and then ${action === "apply_changes" ? "apply" : "discard"} its changes.`,
        { threadId: workspace.threadId, reason: "child_working" },
      );
    }
  }

  /**
   * apply_changes: merges (default) or cherry-picks the child's commits into the target's
   * branch and tree. A conflict changes nothing and names the files. The same clientRequestId
   * answers with the same outcome; a later apply with nothing new answers `nothing_to_apply`.
   */
  async apply(
    caller: Caller,
    input: {
      threadId: string;
      method?: "merge" | "cherry-pick" | undefined;
      clientRequestId?: string | undefined;
      timeoutMs?: number | undefined;
    },
    signal?: AbortSignal,
  ): Promise<ChangeSetDecision> {
    const workspace = await this.workspaceFor(caller, input.threadId);
    const method = input.method ?? "merge";
    const commandId = derive.command(
      caller.requestScope,
      "apply_changes",
      input.clientRequestId ?? this.engine.ids.random("req"),
    );
    const request = { threadId: input.threadId, method };
    const replay = await conflictsAsInvalid(() => this.engine.replay(commandId, "workspace.apply", request));
    if (replay === null) {
      await this.requireMayDecide(caller, workspace, "apply_changes");
      if (workspace.strategy === "scratch" || workspace.repository === null) {
        throw new OrchestratorFailure(
          "invalid_request",
          `Thread ${input.threadId} works in a scratch folder, which is not a git worktree: there is nothing to apply. Read its files at ${workspace.path}.`,
          { threadId: input.threadId },
        );
      }
      this.requireUsable(workspace, "apply");
      await this.engine.execute({
        commandId,
        operation: "workspace.apply",
        request,
        handle: async (ctx) => {
          const current = await ctx.require("workspace", workspace.id);
          if (current.pendingApply !== null || current.applying !== null) {
            throw new OrchestratorFailure(
              "invalid_request",
              `An apply of thread ${input.threadId}'s changes is already under way; read_changes shows its outcome.`,
              { threadId: input.threadId, reason: "apply_under_way" },
            );
          }
          putWorkspace(ctx, current, { pendingApply: { requestId: commandId, method, requestedAt: ctx.now } });
          ctx.effect({
            id: `effect:workspace.apply:${commandId}`,
            lane: workspace.id,
            type: WORKSPACE_EFFECT.apply,
            payload: { workspaceId: workspace.id },
          });
          return null;
        },
      });
    }
    return this.decision(workspace.id, input.threadId, commandId, replay !== null, input.timeoutMs, signal);
  }

  /**
   * discard_changes: removes the child's worktree and its branch, or with keepBranch only the
   * worktree (the branch stays for a pull request: link_pull_request). A workspace Switchyard
   * did not make (`existing`) is never removed.
   */
  async discard(
    caller: Caller,
    input: {
      threadId: string;
      keepBranch?: boolean | undefined;
      clientRequestId?: string | undefined;
      timeoutMs?: number | undefined;
    },
    signal?: AbortSignal,
  ): Promise<ChangeSetDecision> {
    const workspace = await this.workspaceFor(caller, input.threadId);
    const keepBranch = input.keepBranch ?? false;
    const commandId = derive.command(
      caller.requestScope,
      "discard_changes",
      input.clientRequestId ?? this.engine.ids.random("req"),
    );
    const request = { threadId: input.threadId, keepBranch };
    const replay = await conflictsAsInvalid(() => this.engine.replay(commandId, "workspace.discard", request));
    if (replay === null) {
      await this.requireMayDecide(caller, workspace, "discard_changes");
      if (!workspace.owned) {
        throw new OrchestratorFailure(
          "invalid_request",
          `Thread ${input.threadId} works in ${workspace.path}, a worktree Switchyard did not make, so Switchyard does not remove it.`,
          { threadId: input.threadId, reason: "not_owned" },
        );
      }
      this.requireUsable(workspace, "discard");
      await this.engine.execute({
        commandId,
        operation: "workspace.discard",
        request,
        handle: async (ctx) => {
          const current = await ctx.require("workspace", workspace.id);
          if (current.pendingApply !== null || current.applying !== null) {
            throw new OrchestratorFailure(
              "invalid_request",
              `An apply of thread ${input.threadId}'s changes is under way; discard after it ends.`,
              { threadId: input.threadId, reason: "apply_under_way" },
            );
          }
          putWorkspace(ctx, current, {
            disposition: keepBranch ? "kept" : "discarded",
            pendingRemoval: { keepBranch, reason: keepBranch ? "kept" : "discarded", requestedAt: ctx.now },
            outcomes: withOutcome(ctx, current, {
              action: keepBranch ? "keep" : "discard",
              outcome: keepBranch ? "kept" : "discarded",
              method: null,
              commit: current.changes?.head ?? null,
              files: [],
              message: null,
              requestId: commandId,
            }),
          });
          ctx.effect({
            id: `effect:workspace.remove:${commandId}`,
            lane: workspace.id,
            type: WORKSPACE_EFFECT.remove,
            payload: { workspaceId: workspace.id },
          });
          return null;
        },
      });
    }
    // Its outcome is recorded with the request; the wait is for the folder to be gone.
    return this.decision(
      workspace.id,
      input.threadId,
      commandId,
      replay !== null,
      input.timeoutMs,
      signal,
      (current) => current.pendingRemoval === null,
    );
  }

  private requireUsable(workspace: WorkspaceRecord, action: "apply" | "discard"): void {
    if (workspace.status === "removed")
      throw new OrchestratorFailure(
        "invalid_request",
        `Thread ${workspace.threadId}'s workspace was removed${workspace.disposition !== null ? ` (${workspace.disposition})` : ""}; there is nothing to ${action}.`,
        { threadId: workspace.threadId, reason: "removed" },
      );
    if (workspace.status !== "ready")
      throw new OrchestratorFailure(
        "invalid_request",
        `Thread ${workspace.threadId}'s workspace is ${workspace.status}${workspace.error !== null ? `: ${workspace.error}` : ""}; there is nothing to ${action}.`,
        { threadId: workspace.threadId, reason: workspace.status },
      );
    if (action === "apply" && workspace.disposition === "discarded")
      throw new OrchestratorFailure("invalid_request", `Thread ${workspace.threadId}'s changes were discarded.`, {
        threadId: workspace.threadId,
        reason: "discarded",
      });
  }

  /** Waits (up to the server's wait cap) for the request's outcome. */
  private async decision(
    workspaceId: string,
    threadId: string,
    requestId: string,
    replayed: boolean,
    timeoutMs: number | undefined,
    signal: AbortSignal | undefined,
    finished: (workspace: WorkspaceRecord) => boolean = () => true,
  ): Promise<ChangeSetDecision> {
    const limit = Math.min(timeoutMs ?? this.config.server.maxWaitMs, this.config.server.maxWaitMs);
    const settled = await this.waiter.waitFor(
      async () => {
        const current = (await this.engine.reader.get("workspace", workspaceId))!;
        return outcomeOf(current, requestId) !== null && finished(current) ? current : null;
      },
      {
        timeoutMs: limit,
        threadIds: [threadId],
        relevant: (change) => change.entity === "workspace" && change.id === workspaceId,
        ...(signal !== undefined ? { signal } : {}),
      },
    );
    const current = settled ?? (await this.engine.reader.get("workspace", workspaceId))!;
    return {
      threadId,
      requestId,
      replayed,
      outcome: outcomeOf(current, requestId),
      pending: settled === null,
      workspace: workspaceView(current),
    };
  }
}
