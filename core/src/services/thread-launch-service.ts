import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { execa } from "execa";
import { inject, injectable } from "tsyringe";
import type { InteractionMode, RuntimeMode } from "../spec/index.js";
import { type SwitchyardPaths, PathsToken } from "../config/paths.js";
import { type Engine, EngineToken } from "../engine/ports.js";
import { deliverMessage } from "../engine/message-delivery.js";
import { OrchestratorFailure } from "../engine/orchestrator-failure.js";
import { createProject, createThread } from "../engine/thread-records.js";
import type { ThreadRecord } from "../store/records.js";
import { derive } from "../util/ids.js";
import type { Caller } from "./caller.js";
import { CallerContext } from "./caller-context.js";
import { ProviderSelectionService, type TargetRequest } from "./provider-selection-service.js";
import { rootThreadBudget } from "./profiles/profile-application.js";
import { checkProfileSupport } from "./profiles/profile-harness.js";
import { ProfileLibrary } from "./profiles/profile-library.js";
import { ReachOrigins } from "./reach/reach-origin.js";
import { recordProfileRootBudget } from "./usage/budget-scopes.js";
import { makePrivateDir } from "../util/private-files.js";

/** t3_thread_launch input. */
export interface LaunchInput {
  readonly message: string;
  readonly title?: string | undefined;
  readonly target?: TargetRequest | undefined;
  readonly runtimeMode?: RuntimeMode | "inherit" | undefined;
  readonly interactionMode?: InteractionMode | "inherit" | undefined;
  readonly workspaceStrategy?: "root" | "existing_worktree" | "worktree" | undefined;
  readonly worktreePath?: string | undefined;
  readonly baseRef?: string | undefined;
  readonly branch?: string | undefined;
  readonly startFromOrigin?: boolean | undefined;
  readonly scratch?: boolean | undefined;
  readonly projectId?: string | undefined;
  /** The profile the thread runs with (Switchyard's addition, docs/profiles.md); explicit fields narrow it. */
  readonly profile?: string | undefined;
}

/** The project threads launched with `scratch: true` belong to. */
export const SCRATCH_PROJECT_ID = "project_scratch";

async function git(cwd: string, args: string[]): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  const result = await execa("git", args, { cwd, reject: false, stdin: "ignore" });
  return { ok: result.exitCode === 0, stdout: String(result.stdout).trim(), stderr: String(result.stderr).trim() };
}

function slug(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 40) || "task"
  );
}

/**
 * A launch that names no workspace takes its profile's default: `shared` is the project root,
 * `worktree` a new worktree, `scratch` a scratch folder.
 */
function withProfileWorkspace(
  input: LaunchInput,
  workspace: "shared" | "worktree" | "scratch" | undefined,
): LaunchInput {
  if (workspace === undefined || input.workspaceStrategy !== undefined || input.scratch !== undefined) return input;
  if (workspace === "scratch") return { ...input, scratch: true };
  return { ...input, workspaceStrategy: workspace === "worktree" ? "worktree" : "root" };
}

/**
 * t3_thread_launch: one ordinary top-level thread bound to a workspace before its agent
 * starts: the project root, an existing worktree, a new git worktree, or a scratch folder.
 */
@injectable()
export class ThreadLaunchService {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(PathsToken) private readonly paths: SwitchyardPaths,
    private readonly callers: CallerContext,
    private readonly selection: ProviderSelectionService,
    private readonly origins: ReachOrigins,
    private readonly profiles: ProfileLibrary,
  ) {}

  async launch(
    caller: Caller,
    input: LaunchInput,
  ): Promise<{ thread: ThreadRecord; runId: string; notes: readonly string[] }> {
    if (input.message.trim() === "")
      throw new OrchestratorFailure("invalid_request", "message is required: it is the new thread's task.");
    await this.callers.requireLiveRunForChanges(caller, "t3_thread_launch");
    // A profile supplies defaults and lowers the ceiling before anything is resolved from the input.
    const profiled = await this.profiles.apply(
      caller,
      input.profile,
      input,
      await this.callers.ceiling(caller),
      input.scratch === true ? undefined : input.projectId,
    );
    const selection = await this.selection.resolve({
      target: profiled.input.target,
      inherited: await this.callers.inherited(caller),
      ceiling: profiled.ceiling,
      runtimeMode: profiled.input.runtimeMode,
      interactionMode: profiled.input.interactionMode,
    });
    // The shared policy: can the selected provider enforce the profile's rules and apply its home?
    const supported = checkProfileSupport(profiled.harness, profiled.stamp?.name ?? null, selection);
    const threadId = this.engine.ids.random("thread");
    const authority = await this.callers.authority(caller);
    const workspace = await this.workspace(caller, withProfileWorkspace(input, profiled.profileWorkspace), threadId);
    const commandId = `cmd:t3_thread_launch:${threadId}`;
    // A thread a linked environment (or an agent it reached) launches carries where that began.
    const reachedFrom = await this.origins.of(caller);
    const outcome = await this.engine.execute({
      commandId,
      operation: "thread.launch",
      request: { threadId },
      handle: async (ctx) => {
        if (workspace.projectId === SCRATCH_PROJECT_ID)
          await createProject(ctx, {
            id: SCRATCH_PROJECT_ID,
            name: "Scratch",
            rootPath: this.paths.scratchDir,
            scratch: true,
          });
        const thread = await createThread(
          ctx,
          {
            id: threadId,
            projectId: workspace.projectId,
            title: input.title ?? null,
            providerInstanceId: selection.providerInstanceId,
            model: selection.model,
            effort: selection.effort,
            runtimeMode: selection.runtimeMode,
            interactionMode: selection.interactionMode,
            cwd: workspace.cwd,
            branch: workspace.branch,
            worktreePath: workspace.worktreePath,
            workspaceStrategy: workspace.strategy,
            lineage: {
              relationship: "root",
              parentThreadId: null,
              parentRunId: null,
              parentNodeId: null,
              delegatedTaskId: null,
              ...(reachedFrom !== null ? { reachedFrom } : {}),
            },
            createdBy: "agent",
            creationSource: "mcp",
            authority,
            profile: profiled.stamp,
            harness: supported.harness,
            profileBudget: rootThreadBudget(profiled),
          },
          input.message,
        );
        await recordProfileRootBudget(ctx, thread);
        return (
          await deliverMessage(ctx, {
            threadId,
            messageId: derive.messageFromCommand(commandId),
            text: input.message,
            mode: "auto",
            createdBy: "agent",
            creationSource: "mcp",
            instructions: profiled.instructions,
            capabilities: selection.capabilities,
          })
        ).runId;
      },
    });
    return {
      thread: (await this.engine.reader.get("thread", threadId))!,
      runId: outcome.result,
      notes: [...selection.notes, ...supported.notes],
    };
  }

  private async workspace(
    caller: Caller,
    input: LaunchInput,
    threadId: string,
  ): Promise<{
    projectId: string;
    cwd: string;
    branch: string | null;
    worktreePath: string | null;
    strategy: ThreadRecord["workspaceStrategy"];
  }> {
    if (input.scratch) {
      if (input.workspaceStrategy !== undefined && input.workspaceStrategy !== "root") {
        throw new OrchestratorFailure(
          "invalid_request",
          "scratch launches get a folder of their own; do not combine scratch with a workspaceStrategy.",
        );
      }
      const cwd = join(this.paths.scratchDir, threadId);
      makePrivateDir(cwd);
      return { projectId: SCRATCH_PROJECT_ID, cwd, branch: null, worktreePath: null, strategy: "scratch" };
    }
    const projectId = (await this.callers.workProject(caller, input.projectId)).projectId;
    const project = (await this.engine.reader.get("project", projectId))!;
    const strategy = input.workspaceStrategy ?? "root";
    if (strategy === "root") {
      const branch = await git(project.rootPath, ["symbolic-ref", "--short", "HEAD"]);
      return {
        projectId,
        cwd: project.rootPath,
        branch: branch.ok ? branch.stdout : null,
        worktreePath: null,
        strategy: "root",
      };
    }
    if (strategy === "existing_worktree") {
      if (input.worktreePath === undefined)
        throw new OrchestratorFailure("invalid_request", 'workspaceStrategy "existing_worktree" needs worktreePath.');
      const path = resolve(project.rootPath, input.worktreePath);
      if (!existsSync(path) || !statSync(path).isDirectory())
        throw new OrchestratorFailure("invalid_request", `worktreePath ${path} is not an existing folder.`);
      const [common, projectCommon] = await Promise.all([
        git(path, ["rev-parse", "--path-format=absolute", "--git-common-dir"]),
        git(project.rootPath, ["rev-parse", "--path-format=absolute", "--git-common-dir"]),
      ]);
      if (!common.ok || !projectCommon.ok || common.stdout !== projectCommon.stdout) {
        throw new OrchestratorFailure(
          "invalid_request",
          `${path} is not a git worktree of project ${project.name} (${project.rootPath}).`,
        );
      }
      const branch = await git(path, ["symbolic-ref", "--short", "HEAD"]);
      return {
        projectId,
        cwd: path,
        branch: branch.ok ? branch.stdout : null,
        worktreePath: path,
        strategy: "existing_worktree",
      };
    }
    // A new worktree on a new branch.
    const isRepo = await git(project.rootPath, ["rev-parse", "--is-inside-work-tree"]);
    if (!isRepo.ok)
      throw new OrchestratorFailure(
        "invalid_request",
        `Project ${project.name} (${project.rootPath}) is not a git repository, so it cannot get a worktree.`,
      );
    const current = await git(project.rootPath, ["symbolic-ref", "--short", "HEAD"]);
    const baseRef = input.baseRef ?? (current.ok ? current.stdout : "HEAD");
    const startFromOrigin = input.startFromOrigin ?? true;
    let base = baseRef;
    if (startFromOrigin) {
      const remote = await git(project.rootPath, [
        "rev-parse",
        "--verify",
        "--quiet",
        `refs/remotes/origin/${baseRef}`,
      ]);
      if (!remote.ok) {
        throw new OrchestratorFailure(
          "invalid_request",
          `origin/${baseRef} does not exist in ${project.rootPath}. Fetch it first, or pass startFromOrigin: false to start from the local ${baseRef}.`,
        );
      }
      base = `origin/${baseRef}`;
    } else if (!(await git(project.rootPath, ["rev-parse", "--verify", "--quiet", `${baseRef}^{commit}`])).ok) {
      throw new OrchestratorFailure(
        "invalid_request",
        `baseRef "${baseRef}" does not name a commit in ${project.rootPath}.`,
      );
    }
    const branch = input.branch ?? `switchyard/${slug(input.title ?? input.message)}-${threadId.slice(-6)}`;
    const worktreePath = join(this.paths.home, "worktrees", projectId, branch.replace(/[^A-Za-z0-9._-]+/g, "-"));
    makePrivateDir(join(this.paths.home, "worktrees", projectId));
    const added = await git(project.rootPath, ["worktree", "add", "-b", branch, worktreePath, base]);
    if (!added.ok)
      throw new OrchestratorFailure("invalid_request", `git worktree add failed: ${added.stderr || added.stdout}`);
    return { projectId, cwd: worktreePath, branch, worktreePath, strategy: "worktree" };
  }
}
