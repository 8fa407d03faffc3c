import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { inject, injectable } from "tsyringe";
import { type SwitchyardConfig, ConfigToken } from "../../config/config-schema.js";
import { type Engine, EngineToken } from "../../engine/ports.js";
import { type Logger, LoggerToken } from "../../logging/logger.js";
import type { ThreadRecord, WorkspaceRecord } from "../../store/records.js";
import { RepositoryLocks } from "./repository-locks.js";
import { WorkspacePlanner } from "./workspace-planner.js";
import { putWorkspace, workspaceView, WORKSPACE_EFFECT, type WorkspaceView } from "./workspace-records.js";

/** How often the janitor looks, besides when a thread settles. */
const SWEEP_INTERVAL_MS = 10 * 60 * 1000;

/** One workspace as `switchyard worktrees list` shows it. */
export interface WorkspaceListing extends WorkspaceView {
  readonly threadId: string;
  readonly projectId: string;
  readonly threadTitle: string | null;
  readonly settledAt: string | null;
  /** When retention lets it be removed (its thread settled and its changes decided), or null. */
  readonly removableAt: string | null;
}

/** What a prune did (or, dry, would do). */
export interface PruneReport {
  /** Workspaces removed because their retention passed. */
  readonly removed: readonly { readonly threadId: string; readonly path: string; readonly branchKept: boolean }[];
  /** Folders under the workspaces folder no workspace record names (left by a removal that failed half-way, or a lost database). */
  readonly orphans: readonly string[];
  readonly dryRun: boolean;
}

/**
 * Keeps the workspaces folder tidy: a workspace whose changes were applied, discarded or kept
 * is removed once its thread is settled and `workspaces.retentionMs` has passed (its branch too,
 * unless kept for a pull request); folders nobody records are orphans, removed by a prune.
 * Nothing with undecided changes is ever removed.
 */
@injectable()
export class WorkspaceJanitor {
  private timer: NodeJS.Timeout | null = null;
  /** One sweep due soon (a retention shorter than the sweep interval), and when. */
  private soon: { timer: NodeJS.Timeout; at: number } | null = null;
  private unsubscribe: (() => void) | null = null;

  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(ConfigToken) private readonly config: SwitchyardConfig,
    @inject(LoggerToken) private readonly logger: Logger,
    private readonly planner: WorkspacePlanner,
    private readonly locks: RepositoryLocks,
  ) {}

  /**
   * Sweeps now, every ten minutes, and once a retention shorter than that has passed after a
   * thread settles or a workspace's changes are decided (a longer one waits for the interval).
   */
  start(): void {
    if (this.timer !== null) return;
    void this.sweep();
    this.timer = setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS);
    this.timer.unref();
    this.unsubscribe = this.engine.onEvents((events) => {
      const relevant = events.some(
        (event) =>
          (event.entity === "thread" && ((event.record as ThreadRecord).settledAt ?? null) !== null) ||
          (event.entity === "workspace" && (event.record as WorkspaceRecord).disposition !== null),
      );
      if (relevant && this.config.workspaces.retentionMs < SWEEP_INTERVAL_MS)
        this.sweepAfter(this.config.workspaces.retentionMs + 50);
    });
  }

  /** One timer, for the latest sweep asked for: an earlier one would find the newest workspace not due yet. */
  private sweepAfter(delayMs: number): void {
    const at = Date.now() + delayMs;
    if (this.soon !== null) {
      if (this.soon.at >= at) return;
      clearTimeout(this.soon.timer);
    }
    const timer = setTimeout(() => {
      this.soon = null;
      void this.sweep();
    }, delayMs);
    timer.unref();
    this.soon = { timer, at };
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    if (this.soon !== null) clearTimeout(this.soon.timer);
    this.soon = null;
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  /** Every workspace not yet removed (or all), newest first. */
  async list(options: { all?: boolean; projectId?: string } = {}): Promise<WorkspaceListing[]> {
    const where = [
      options.all ? "1 = 1" : "status != 'removed'",
      ...(options.projectId !== undefined ? ["project_id = ?"] : []),
    ].join(" AND ");
    const listings: WorkspaceListing[] = [];
    const params = options.projectId !== undefined ? [options.projectId] : [];
    for (const workspace of await this.engine.reader.select("workspace", where, params, "ORDER BY rowid DESC")) {
      const thread = await this.engine.reader.get("thread", workspace.threadId);
      listings.push({
        ...workspaceView(workspace),
        threadId: workspace.threadId,
        projectId: workspace.projectId,
        threadTitle: thread?.title ?? null,
        settledAt: thread?.settledAt ?? null,
        removableAt: this.removableAt(workspace, thread),
      });
    }
    return listings;
  }

  private removableAt(workspace: WorkspaceRecord, thread: ThreadRecord | null): string | null {
    if (
      workspace.status === "removed" ||
      workspace.disposition === null ||
      workspace.pendingApply !== null ||
      workspace.applying !== null
    )
      return null;
    const since = thread === null ? workspace.updatedAt : (thread.deletedAt ?? thread.settledAt ?? null);
    if (since === null) return null;
    return new Date(Date.parse(since) + this.config.workspaces.retentionMs).toISOString();
  }

  /** Asks for the removal of every workspace whose retention passed (the effects do the work). */
  async sweep(): Promise<number> {
    let asked = 0;
    try {
      const now = this.engine.clock.nowMs();
      for (const listing of await this.list()) {
        if (listing.removableAt === null || Date.parse(listing.removableAt) > now || listing.pending !== null) continue;
        await this.engine.apply(async (ctx) => {
          const current = await ctx.require("workspace", listing.workspaceId);
          if (current.pendingRemoval !== null || current.status === "removed") return;
          putWorkspace(ctx, current, {
            pendingRemoval: { keepBranch: current.disposition === "kept", reason: "retention", requestedAt: ctx.now },
          });
          ctx.effect({
            id: `effect:workspace.remove:retention:${current.id}`,
            lane: current.id,
            type: WORKSPACE_EFFECT.remove,
            payload: { workspaceId: current.id },
          });
        });
        asked += 1;
      }
    } catch (error) {
      this.logger.warn("the workspace sweep failed; it runs again later", { error: (error as Error).message });
    }
    return asked;
  }

  /**
   * `switchyard worktrees prune`: removes, in this process, what retention allows now and the
   * orphans under the workspaces folder; with `dryRun` only says what it would remove.
   */
  async prune(options: { dryRun: boolean }): Promise<PruneReport> {
    const now = this.engine.clock.nowMs();
    const removed: { threadId: string; path: string; branchKept: boolean }[] = [];
    for (const listing of await this.list()) {
      if (listing.removableAt === null || Date.parse(listing.removableAt) > now || listing.pending !== null) continue;
      const workspace = (await this.engine.reader.get("workspace", listing.workspaceId))!;
      const branchKept = workspace.disposition === "kept";
      removed.push({ threadId: workspace.threadId, path: workspace.path, branchKept });
      if (options.dryRun) continue;
      await this.locks.with(workspace.repository ?? workspace.id, async () => {
        if (workspace.owned) {
          await this.planner.git.removeWorktree(workspace.repository, workspace.path);
          if (!branchKept && workspace.repository !== null && workspace.branch !== null)
            await this.planner.git.deleteBranch(workspace.repository, workspace.branch);
        }
        await this.engine.apply(async (ctx) =>
          putWorkspace(ctx, await ctx.require("workspace", workspace.id), {
            status: "removed",
            pendingRemoval: null,
            removedAt: ctx.now,
          }),
        );
      });
    }
    const orphans = await this.orphans();
    if (!options.dryRun) {
      for (const folder of orphans) {
        const repository = (await this.planner.git.isRepository(folder))
          ? await this.planner.git.commonDir(folder)
          : null;
        await this.locks.with(repository ?? folder, () => this.planner.git.removeWorktree(repository, folder));
      }
    }
    return { removed, orphans, dryRun: options.dryRun };
  }

  /**
   * Folders under the workspaces folder that no workspace still in use names, and throwaway
   * apply worktrees (`.apply/`) a crash left (one younger than ten minutes may be in use).
   */
  async orphans(): Promise<string[]> {
    const root = this.planner.root;
    if (!existsSync(root)) return [];
    const known = new Set(
      (await this.engine.reader.select("workspace", "status != 'removed'")).map((workspace) => workspace.path),
    );
    const found: string[] = [];
    for (const group of readdirSync(root)) {
      const groupPath = join(root, group);
      if (!statSync(groupPath).isDirectory()) continue;
      for (const entry of readdirSync(groupPath)) {
        const path = join(groupPath, entry);
        const stat = statSync(path);
        if (!stat.isDirectory() || known.has(path)) continue;
        if (group === ".apply" && Date.now() - stat.mtimeMs < SWEEP_INTERVAL_MS) continue;
        found.push(path);
      }
    }
    return found;
  }
}
