import { existsSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { inject, injectable } from "tsyringe";
import { type SwitchyardConfig, ConfigToken } from "../../config/config-schema.js";
import { type SwitchyardPaths, PathsToken } from "../../config/paths.js";
import type { CommandContext } from "../../engine/command-context.js";
import { type Engine, EngineToken } from "../../engine/ports.js";
import { OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import type { ThreadRecord, WorkspaceRecord, WorkspaceStrategy } from "../../store/records.js";
import { runGit } from "./git-runner.js";
import { WorkspaceGit } from "./workspace-git.js";
import { slug, threadPlacement, threadTag, workspaceIdOf, WORKSPACE_EFFECT } from "./workspace-records.js";

/** How long whether a project's folder is a git repository is remembered. */
const REPOSITORY_CHECK_TTL_MS = 10_000;

/** Every strategy, in the order capabilities list them. */
export const WORKSPACE_STRATEGIES: readonly WorkspaceStrategy[] = ["shared", "worktree", "scratch", "existing"];

/** What a caller asks for (`workspace` on delegate_task and create_threads): a strategy, or one with its details. */
export type WorkspaceChoice =
  | WorkspaceStrategy
  | {
      readonly strategy: WorkspaceStrategy;
      /** worktree: the commit or branch to start from (default the parent's current commit). */
      readonly baseRef?: string | undefined;
      /** worktree: the new branch's name (default `switchyard/<title>-<tag>`). */
      readonly branch?: string | undefined;
      /** existing: the worktree to work in. */
      readonly path?: string | undefined;
    };

/** A workspace decided before the command that creates its thread, with what was checked. */
export interface WorkspacePlan {
  readonly strategy: Exclude<WorkspaceStrategy, "shared">;
  readonly threadId: string;
  readonly projectId: string;
  readonly path: string;
  /** Where in the worktree the thread works (the parent folder's place in its repository). */
  readonly subfolder?: string;
  readonly repository: string | null;
  readonly branch: string | null;
  readonly baseRef: string | null;
  readonly baseCommit: string | null;
  readonly owned: boolean;
  readonly target: { readonly threadId: string | null; readonly path: string };
}

/** Where a new thread would otherwise work (its parent's folder, or the project's root) and whose work it is. */
export interface WorkspaceSource {
  readonly projectId: string;
  readonly cwd: string;
  /** The thread whose workspace changes go back to (the parent, the calling agent), or null for a client's. */
  readonly threadId: string | null;
}

function isInside(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/**
 * Decides and validates a new thread's workspace (delegate_task, create_threads) before the
 * command that creates the thread, then records it inside that command. The folder itself is
 * made by the `workspace.create` effect, queued on the thread's lane ahead of its first turn:
 * the record exists before the folder does, so no crash leaves a worktree nobody knows.
 */
@injectable()
export class WorkspacePlanner {
  readonly git: WorkspaceGit;
  private readonly repositories = new Map<string, { repository: boolean; until: number }>();

  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(ConfigToken) private readonly config: SwitchyardConfig,
    @inject(PathsToken) private readonly paths: SwitchyardPaths,
  ) {
    this.git = new WorkspaceGit({ lockWaitMs: config.workspaces.lockWaitMs });
  }

  /** The folder workspaces go in. */
  get root(): string {
    const configured = this.config.workspaces.root;
    return configured === undefined ? join(this.paths.home, "worktrees") : resolve(this.paths.home, configured);
  }

  /** A project's default strategy (the config's, by project id or folder; else seed 000's `shared`). */
  async defaultFor(projectId: string): Promise<WorkspaceStrategy> {
    const defaults = this.config.workspaces.projectDefaults;
    const root = (await this.engine.reader.get("project", projectId))?.rootPath;
    return defaults[projectId] ?? (root !== undefined ? defaults[root] : undefined) ?? "shared";
  }

  /**
   * The strategies a project supports: a folder that is not a git repository has no worktrees.
   * Remembered for a few seconds, so orchestrator_capabilities does not run git per project per call.
   */
  async strategies(projectId: string): Promise<WorkspaceStrategy[]> {
    const project = await this.engine.reader.get("project", projectId);
    if (project === null) return ["shared"];
    const known = this.repositories.get(project.rootPath);
    const now = Date.now();
    let repository = known !== undefined && known.until > now ? known.repository : null;
    if (repository === null) {
      repository = await this.git.isRepository(project.rootPath);
      this.repositories.set(project.rootPath, { repository, until: now + REPOSITORY_CHECK_TTL_MS });
    }
    return WORKSPACE_STRATEGIES.filter(
      (strategy) => repository || (strategy !== "worktree" && strategy !== "existing"),
    );
  }

  /**
   * The workspace a new thread gets, or null for `shared` (it works in `source.cwd`). An explicit
   * strategy the project cannot give is refused (`invalid_request`, naming what it can); a
   * project default of `worktree` on a folder without git falls back to `shared`, with a note.
   */
  async plan(input: {
    choice: WorkspaceChoice | undefined;
    threadId: string;
    title: string;
    source: WorkspaceSource;
    field?: string;
  }): Promise<{ plan: WorkspacePlan | null; notes: string[] }> {
    const field = input.field ?? "workspace";
    const explicit = input.choice !== undefined;
    const choice =
      typeof input.choice === "string"
        ? { strategy: input.choice }
        : (input.choice ?? { strategy: await this.defaultFor(input.source.projectId) });
    const details = choice as Exclude<WorkspaceChoice, WorkspaceStrategy>;
    if (choice.strategy !== "worktree" && (details.baseRef !== undefined || details.branch !== undefined)) {
      throw new OrchestratorFailure(
        "invalid_request",
        `${field}.baseRef and ${field}.branch belong to the "worktree" strategy, not "${choice.strategy}".`,
        { field },
      );
    }
    if (choice.strategy !== "existing" && details.path !== undefined) {
      throw new OrchestratorFailure(
        "invalid_request",
        `${field}.path names the worktree of the "existing" strategy, not "${choice.strategy}".`,
        { field },
      );
    }
    if (choice.strategy === "shared") return { plan: null, notes: [] };
    const project = await this.engine.reader.get("project", input.source.projectId);
    if (project === null)
      throw new OrchestratorFailure("invalid_request", `Project ${input.source.projectId} does not exist.`, {
        projectId: input.source.projectId,
      });
    const target = { threadId: input.source.threadId, path: input.source.cwd };
    const base = {
      threadId: input.threadId,
      projectId: project.id,
      target,
      baseRef: null,
      baseCommit: null,
      branch: null,
      repository: null,
    };
    if (choice.strategy === "scratch") {
      return {
        plan: {
          ...base,
          strategy: "scratch",
          path: this.folderFor(project.id, input.title, input.threadId, project.rootPath),
          owned: true,
        },
        notes: [],
      };
    }
    const repository = (await this.git.isRepository(input.source.cwd))
      ? await this.git.commonDir(input.source.cwd)
      : null;
    if (repository === null) {
      if (!explicit)
        return {
          plan: null,
          notes: [
            `Project ${project.name}'s default workspace is "${choice.strategy}", but ${input.source.cwd} is not a git repository: the thread shares it.`,
          ],
        };
      throw new OrchestratorFailure(
        "invalid_request",
        `${input.source.cwd} (project ${project.name}) is not a git repository, so it has no worktrees; use "shared" or "scratch" (orchestrator_capabilities lists each project's workspaces).`,
        { field, strategy: choice.strategy, supported: ["shared", "scratch"] },
      );
    }
    if (choice.strategy === "existing")
      return { plan: await this.existing(details.path, input, repository, field), notes: [] };
    const baseRef = details.baseRef ?? null;
    const baseCommit = await this.git.commitOf(input.source.cwd, baseRef ?? "HEAD");
    if (baseCommit === null) {
      throw new OrchestratorFailure(
        "invalid_request",
        baseRef === null
          ? `${input.source.cwd} has no commit yet, so a worktree has nothing to start from; commit first or use "scratch".`
          : `${field}.baseRef "${baseRef}" names no commit in ${input.source.cwd}.`,
        { field, ...(baseRef !== null ? { baseRef } : {}) },
      );
    }
    const branch = details.branch ?? `switchyard/${slug(input.title)}-${threadTag(input.threadId).slice(0, 6)}`;
    const valid = await runGit(input.source.cwd, ["check-ref-format", "--branch", branch], { lockWaitMs: 0 });
    if (!valid.ok)
      throw new OrchestratorFailure("invalid_request", `${field}.branch "${branch}" is not a valid branch name.`, {
        field,
        branch,
      });
    if (details.branch !== undefined && (await this.git.commitOf(input.source.cwd, `refs/heads/${branch}`)) !== null) {
      throw new OrchestratorFailure(
        "invalid_request",
        `Branch ${branch} already exists in ${input.source.cwd}; name a new branch, or work in its worktree with the "existing" strategy.`,
        { field, branch },
      );
    }
    // A project that is a folder of a larger repository: the child works in the same folder of its worktree.
    const prefix = (await runGit(input.source.cwd, ["rev-parse", "--show-prefix"], { lockWaitMs: 0 })).stdout
      .trim()
      .replace(/\/+$/, "");
    return {
      plan: {
        ...base,
        strategy: "worktree",
        repository,
        branch,
        baseRef,
        baseCommit,
        path: this.folderFor(project.id, input.title, input.threadId, project.rootPath, input.source.cwd),
        ...(prefix !== "" ? { subfolder: prefix } : {}),
        owned: true,
      },
      notes: [],
    };
  }

  private async existing(
    path: string | undefined,
    input: { threadId: string; source: WorkspaceSource },
    repository: string,
    field: string,
  ): Promise<Omit<WorkspacePlan, "target"> & { target: WorkspacePlan["target"] }> {
    if (path === undefined)
      throw new OrchestratorFailure(
        "invalid_request",
        `${field}.path is required for the "existing" strategy: the worktree to work in.`,
        { field },
      );
    const folder = resolve(input.source.cwd, path);
    if (!existsSync(folder) || !statSync(folder).isDirectory())
      throw new OrchestratorFailure("invalid_request", `${field}.path ${folder} is not an existing folder.`, {
        field,
        path: folder,
      });
    const top = await this.git.topLevel(folder);
    if (top === null || (await this.git.commonDir(folder)) !== repository) {
      throw new OrchestratorFailure(
        "invalid_request",
        `${folder} is not a worktree of the repository ${input.source.cwd} belongs to.`,
        { field, path: folder },
      );
    }
    const sourceTop = await this.git.topLevel(input.source.cwd);
    if (sourceTop !== null && canonical(top) === canonical(sourceTop)) {
      throw new OrchestratorFailure(
        "invalid_request",
        `${folder} is the parent's own workspace; use the "shared" strategy to work in it.`,
        { field, path: folder },
      );
    }
    const baseCommit = await this.git.commitOf(top, "HEAD");
    return {
      strategy: "existing",
      threadId: input.threadId,
      projectId: input.source.projectId,
      path: top,
      repository,
      branch: await this.git.currentBranch(top),
      baseRef: null,
      baseCommit,
      owned: false,
      target: { threadId: input.source.threadId, path: input.source.cwd },
    };
  }

  /** `<root>/<project>/<title>-<tag>`, refused when the root lies inside the project or the parent's folder. */
  private folderFor(projectId: string, title: string, threadId: string, ...outside: string[]): string {
    const root = this.root;
    for (const folder of outside) {
      if (isInside(canonical(root), canonical(folder))) {
        throw new OrchestratorFailure(
          "invalid_request",
          `The workspaces folder ${root} lies inside ${folder}, so a child's worktree would be inside its parent's tree; set workspaces.root in the config to a folder outside every project.`,
          { root, folder },
        );
      }
    }
    return join(root, projectId.replace(/[^A-Za-z0-9._-]+/g, "-"), `${slug(title)}-${threadTag(threadId)}`);
  }

  /**
   * Records the planned workspace inside the command that creates its thread, and queues the
   * effect that makes its folder on the thread's lane, ahead of the thread's first turn. Returns
   * where the thread works.
   */
  async record(
    ctx: CommandContext,
    plan: WorkspacePlan,
  ): Promise<Pick<ThreadRecord, "cwd" | "branch" | "worktreePath" | "workspaceStrategy">> {
    const id = workspaceIdOf(plan.threadId);
    const existing = await ctx.get("workspace", id);
    const workspace: WorkspaceRecord = existing ?? {
      id,
      threadId: plan.threadId,
      projectId: plan.projectId,
      strategy: plan.strategy,
      path: plan.path,
      ...(plan.subfolder !== undefined ? { subfolder: plan.subfolder } : {}),
      repository: plan.repository,
      branch: plan.branch,
      baseRef: plan.baseRef,
      baseCommit: plan.baseCommit,
      owned: plan.owned,
      target: plan.target,
      status: plan.strategy === "existing" ? "ready" : "creating",
      disposition: null,
      changes: null,
      pendingApply: null,
      applying: null,
      appliedHead: null,
      pendingRemoval: null,
      outcomes: [],
      error: null,
      createdAt: ctx.now,
      updatedAt: ctx.now,
      removedAt: null,
    };
    if (existing === null) {
      ctx.put("workspace", workspace);
      if (workspace.status === "creating")
        ctx.effect({
          id: `effect:workspace.create:${plan.threadId}`,
          lane: plan.threadId,
          type: WORKSPACE_EFFECT.create,
          payload: { workspaceId: id },
        });
    }
    return threadPlacement(workspace);
  }
}
