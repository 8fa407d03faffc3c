import { dirname, join } from "node:path";
import { inject, injectable } from "tsyringe";
import type { EffectHandler } from "../../engine/effect-handler.js";
import { type Engine, EngineToken } from "../../engine/ports.js";
import { activeRun, finishAttempt } from "../../engine/run-lifecycle.js";
import { type Logger, LoggerToken } from "../../logging/logger.js";
import type { OutboxEffect } from "../../store/ports.js";
import type { ChangeSummary, WorkspaceRecord } from "../../store/records.js";
import { makePrivateDir } from "../../util/private-files.js";
import { RepositoryLocks } from "./repository-locks.js";
import { WorkspacePlanner } from "./workspace-planner.js";
import {
  putWorkspace,
  threadTag,
  withOutcome,
  WORKSPACE_EFFECT,
  type WorkspaceEffectPayload,
} from "./workspace-records.js";

/** How long a recorded apply that could not be finished (a lock another git process holds) waits before it tries again. */
const APPLY_RETRY_MS = 1_000;
/** How many times one run of the effect tries to finish it; then a later run of it goes on (and one after a restart). */
const APPLY_ATTEMPTS = 30;

/** How many changed files a summary lists by name. */
const LISTED_FILES = 200;

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Carries out workspaces' outbox effects: making a folder before a thread's first turn,
 * committing what a run left, applying a change set onto its target and removing a workspace.
 * Each finds what an earlier, interrupted run of itself did and goes on from there; every
 * outcome, failures included, is written to the workspace record (an event), never thrown.
 */
@injectable()
export class WorkspaceEffects implements EffectHandler {
  readonly name = "workspaces";
  readonly types = Object.values(WORKSPACE_EFFECT);

  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(LoggerToken) private readonly logger: Logger,
    private readonly planner: WorkspacePlanner,
    private readonly locks: RepositoryLocks,
  ) {}

  private get git() {
    return this.planner.git;
  }

  async execute(effect: OutboxEffect): Promise<void> {
    const { workspaceId } = effect.payload as WorkspaceEffectPayload;
    const workspace = await this.engine.reader.get("workspace", workspaceId);
    if (workspace === null) return;
    const key = workspace.repository ?? workspace.id;
    const current = async () => (await this.engine.reader.get("workspace", workspaceId))!;
    switch (effect.type) {
      case WORKSPACE_EFFECT.create:
        return this.locks.with(key, async () => this.create(await current()));
      case WORKSPACE_EFFECT.snapshot:
        return this.locks.with(key, async () => void (await this.snapshot(await current())));
      case WORKSPACE_EFFECT.remove:
        return this.locks.with(key, async () => this.remove(await current()));
      case WORKSPACE_EFFECT.apply:
        // A recorded move that could not be finished is tried again, with the repository free
        // for others in between; past the attempts a later run of the effect goes on.
        for (let attempt = 1; ; attempt += 1) {
          if ((await this.locks.with(key, async () => this.apply(await current()))) === "finished") return;
          if (attempt >= APPLY_ATTEMPTS) return this.applyLater(workspaceId);
          await new Promise((resolve) => setTimeout(resolve, APPLY_RETRY_MS));
        }
    }
  }

  /** Queues another run of an apply whose move is recorded but not finished. */
  private async applyLater(workspaceId: string): Promise<void> {
    await this.engine.apply(async (ctx) => {
      const workspace = await ctx.require("workspace", workspaceId);
      if (workspace.applying === null) return;
      ctx.effect(
        {
          id: `effect:workspace.apply:${workspace.applying.requestId}:${ctx.nowMs}`,
          lane: workspace.id,
          type: WORKSPACE_EFFECT.apply,
          payload: { workspaceId },
        },
        APPLY_RETRY_MS * APPLY_ATTEMPTS,
      );
    });
  }

  /** Makes the folder; a failure fails the thread's first turn with the reason, so nothing starts in a folder that is not there. */
  private async create(workspace: WorkspaceRecord): Promise<void> {
    if (workspace.status !== "creating") return;
    try {
      makePrivateDir(dirname(workspace.path));
      if (workspace.strategy === "scratch") makePrivateDir(workspace.path);
      else await this.git.addWorktree(workspace.repository!, workspace.path, workspace.branch!, workspace.baseCommit!);
      await this.engine.apply(async (ctx) =>
        putWorkspace(ctx, await ctx.require("workspace", workspace.id), { status: "ready" }),
      );
    } catch (error) {
      const message = `Could not make the ${workspace.strategy} workspace ${workspace.path}: ${messageOf(error)}`;
      this.logger.warn("a workspace could not be made", { workspaceId: workspace.id, error: messageOf(error) });
      await this.engine.apply(async (ctx) => {
        putWorkspace(ctx, await ctx.require("workspace", workspace.id), { status: "failed", error: message });
        for (const run of await ctx.select("run", "thread_id = ? AND status IN ('starting', 'running', 'waiting')", [
          workspace.threadId,
        ])) {
          if (run.currentAttemptId !== null)
            await finishAttempt(
              ctx,
              run.currentAttemptId,
              "failed",
              { code: "workspace_failed", message },
              "workspace_failed",
            );
        }
      });
    }
  }

  /**
   * Commits what the thread left in its worktree (named after its task) when no run of it is
   * active any more, and records the change summary. Returns the workspace's head.
   */
  async snapshot(workspace: WorkspaceRecord): Promise<string | null> {
    if (workspace.status !== "ready" || workspace.repository === null || workspace.baseCommit === null) return null;
    try {
      const thread = await this.engine.reader.get("thread", workspace.threadId);
      if ((await activeRun(this.engine.reader, workspace.threadId)) === null && thread !== null) {
        const runs = await this.engine.reader.count("run", "thread_id = ?", [workspace.threadId]);
        await this.git.commitAll(
          workspace.path,
          `${thread.title}\n\nSwitchyard: the work of ${thread.id} in its worktree, as its run ${runs} left it.\n`,
        );
      }
      const changes = await this.summary(workspace);
      if (changes !== null && changes.head !== workspace.changes?.head) {
        await this.engine.apply(async (ctx) =>
          putWorkspace(ctx, await ctx.require("workspace", workspace.id), { changes }),
        );
      }
      return changes?.head ?? null;
    } catch (error) {
      this.logger.warn("a workspace's work could not be committed", {
        workspaceId: workspace.id,
        error: messageOf(error),
      });
      return null;
    }
  }

  /** The change set's summary against the base, now. */
  async summary(workspace: WorkspaceRecord): Promise<ChangeSummary | null> {
    if (workspace.baseCommit === null) return null;
    const detail = await this.git.changeSet(workspace.path, workspace.baseCommit, null);
    return {
      head: detail.head,
      commits: detail.commits.length,
      files: detail.files.slice(0, LISTED_FILES).map((file) => file.path),
      fileCount: detail.files.length,
      insertions: detail.files.reduce((sum, file) => sum + (file.insertions ?? 0), 0),
      deletions: detail.files.reduce((sum, file) => sum + (file.deletions ?? 0), 0),
      recordedAt: new Date(this.engine.clock.nowMs()).toISOString(),
    };
  }

  /**
   * Applies the change set onto its target. The result is worked out without touching the
   * target (a conflict changes nothing); then the move is recorded (`applying`) before the
   * target's tree and branch change, so a crash is finished from the record on the next run
   * of this effect, whole, never twice.
   */
  private async apply(workspace: WorkspaceRecord): Promise<"finished" | "again"> {
    const request = workspace.applying ?? workspace.pendingApply;
    if (request === null) return "finished";
    const method = workspace.pendingApply?.method ?? "merge";
    const reason = `switchyard: apply ${workspace.branch ?? workspace.path}`;
    try {
      if (workspace.applying !== null) {
        const { from, to, paths, at, head } = workspace.applying;
        const moved = await this.git.finishMove(workspace.target.path, from, to, paths, at, reason);
        return this.applied(workspace.id, request.requestId, method, moved, to, head);
      }
      if ((await activeRun(this.engine.reader, workspace.threadId)) !== null) {
        return this.settleApply(
          workspace.id,
          request.requestId,
          method,
          "failed",
          [],
          null,
          `Thread ${workspace.threadId} is working again; apply once its run has ended.`,
        );
      }
      const head = await this.snapshot(workspace);
      if (head === null)
        return this.settleApply(
          workspace.id,
          request.requestId,
          method,
          "failed",
          [],
          null,
          `The workspace ${workspace.path} has no commit to apply.`,
        );
      const thread = await this.engine.reader.get("thread", workspace.threadId);
      const plan = await this.git.planApply({
        target: workspace.target.path,
        head,
        from: workspace.appliedHead ?? workspace.baseCommit!,
        method,
        message: `Merge ${workspace.branch ?? head}: ${thread?.title ?? workspace.threadId}\n\nSwitchyard applied the work of ${workspace.threadId}.\n`,
        scratch: join(this.planner.root, ".apply", threadTag(workspace.id)),
        repository: workspace.repository!,
      });
      if (plan.kind === "nothing_to_apply")
        return this.settleApply(workspace.id, request.requestId, method, "nothing_to_apply", [], null, null, head);
      if (plan.kind === "conflict")
        return this.settleApply(workspace.id, request.requestId, method, "conflict", plan.files, null, plan.message);
      const at = new Date(this.engine.clock.nowMs()).toISOString();
      await this.engine.apply(async (ctx) =>
        putWorkspace(ctx, await ctx.require("workspace", workspace.id), {
          applying: { requestId: request.requestId, head, from: plan.from, to: plan.to, paths: plan.paths, at },
        }),
      );
      const moved = await this.git.moveTarget(workspace.target.path, plan.from, plan.to, reason);
      return this.applied(workspace.id, request.requestId, method, moved, plan.to, head);
    } catch (error) {
      this.logger.warn("a change set could not be applied", { workspaceId: workspace.id, error: messageOf(error) });
      // An apply whose move is recorded must be finished, not dropped: it is tried again (a lock
      // held by another git process, say), and after a restart.
      if ((await this.engine.reader.get("workspace", workspace.id))?.applying != null) return "again";
      return this.settleApply(workspace.id, request.requestId, method, "failed", [], null, messageOf(error));
    }
  }

  private async applied(
    workspaceId: string,
    requestId: string,
    method: "merge" | "cherry-pick",
    moved: "done" | "moved",
    to: string,
    head: string,
  ): Promise<"finished"> {
    if (moved === "done") return this.settleApply(workspaceId, requestId, method, "applied", [], to, null, head);
    return this.settleApply(
      workspaceId,
      requestId,
      method,
      "failed",
      [],
      null,
      "The target's branch moved while the apply was cut short; nothing more was changed. Apply again.",
    );
  }

  private async settleApply(
    workspaceId: string,
    requestId: string,
    method: "merge" | "cherry-pick",
    result: "applied" | "conflict" | "nothing_to_apply" | "failed",
    files: readonly string[],
    commit: string | null,
    message: string | null,
    appliedHead?: string,
  ): Promise<"finished"> {
    await this.engine.apply(async (ctx) => {
      const current = await ctx.require("workspace", workspaceId);
      putWorkspace(ctx, current, {
        pendingApply: null,
        applying: null,
        ...(result === "applied" || result === "nothing_to_apply" ? { disposition: "applied" as const } : {}),
        ...(appliedHead !== undefined ? { appliedHead } : {}),
        outcomes: withOutcome(ctx, current, {
          action: "apply",
          outcome: result,
          method,
          commit,
          files,
          message,
          requestId,
        }),
      });
    });
    return "finished";
  }

  /** Removes the folder (and the branch, unless kept); a workspace Switchyard did not make is only forgotten. */
  private async remove(workspace: WorkspaceRecord): Promise<void> {
    const removal = workspace.pendingRemoval;
    if (removal === null || workspace.status === "removed") return;
    try {
      if (workspace.owned) {
        await this.git.removeWorktree(workspace.repository, workspace.path);
        if (!removal.keepBranch && workspace.repository !== null && workspace.branch !== null)
          await this.git.deleteBranch(workspace.repository, workspace.branch);
      }
      await this.engine.apply(async (ctx) =>
        putWorkspace(ctx, await ctx.require("workspace", workspace.id), {
          status: "removed",
          pendingRemoval: null,
          removedAt: ctx.now,
        }),
      );
    } catch (error) {
      this.logger.warn("a workspace could not be removed", { workspaceId: workspace.id, error: messageOf(error) });
      await this.engine.apply(async (ctx) =>
        putWorkspace(ctx, await ctx.require("workspace", workspace.id), {
          pendingRemoval: null,
          error: `Could not remove ${workspace.path}: ${messageOf(error)}`,
        }),
      );
    }
  }
}
