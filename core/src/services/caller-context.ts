import { inject, injectable } from "tsyringe";
import { type SwitchyardConfig, ConfigToken } from "../config/config-schema.js";
import { type Engine, EngineToken } from "../engine/ports.js";
import { OrchestratorFailure } from "../engine/orchestrator-failure.js";
import { activeRun } from "../engine/run-lifecycle.js";
import { interactionModeRank, runtimeModeRank, type InteractionMode, type RuntimeMode } from "../spec/index.js";
import type { Authority, ProjectRecord, RunRecord, ThreadRecord } from "../store/records.js";
import type { Caller } from "./caller.js";
import type { CredentialCapability, ProjectScope } from "./credentials/mcp-session-registry.js";
import { CLIENT_CEILING, type InheritedSelection } from "./provider-selection-service.js";

/**
 * What the services need to know about a caller: its thread, whether its run is live (the
 * credential's provider session owns the thread's active run), its privilege ceiling, and the
 * project it works in.
 */
@injectable()
export class CallerContext {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(ConfigToken) private readonly config: SwitchyardConfig,
  ) {}

  /** The caller's own thread (agents), or null. */
  async thread(caller: Caller): Promise<ThreadRecord | null> {
    if (caller.threadId === null) return null;
    const thread = await this.engine.reader.get("thread", caller.threadId);
    return thread === null || thread.deletedAt !== null ? null : thread;
  }

  /** The caller's live run: its thread's active run, started by this credential's provider session. */
  async liveRun(caller: Caller): Promise<RunRecord | null> {
    if (caller.kind !== "agent" || caller.threadId === null) return null;
    const run = await activeRun(this.engine.reader, caller.threadId);
    if (run === null || run.currentAttemptId === null) return null;
    const attempt = await this.engine.reader.get("attempt", run.currentAttemptId);
    if (attempt === null || attempt.providerSessionId !== caller.providerSessionId) return null;
    return run;
  }

  /**
   * Why the caller may not do what `capability` allows, or null when it may. Server-wide
   * installs (`orchestration:install`) are for a client token for every project that holds the
   * `install` verb, or `operate` with the broadest ceiling (`full-access`): an install changes
   * what every project's work runs, so a token held to some projects, or to narrower modes, is
   * not enough. Every other capability is the credential's own.
   */
  refusalOf(
    caller: Caller,
    capability: CredentialCapability,
  ): { reason: "verb" | "project_scope" | "ceiling"; message: string } | null {
    if (capability !== "orchestration:install") {
      return caller.capabilities.has(capability)
        ? null
        : { reason: "verb", message: `This token lacks the ${capability} capability.` };
    }
    const how =
      "Issue a token with the install verb (switchyard token issue --verbs read,install), or use one for every project with operate and --max-runtime-mode full-access.";
    if (
      caller.kind !== "client" ||
      (!caller.capabilities.has("orchestration:install") && !caller.capabilities.has("orchestration:operate"))
    ) {
      return {
        reason: "verb",
        message: `Installing for the whole server needs the install verb, or operate at full-access for every project; this credential has neither. ${how}`,
      };
    }
    const projects = caller.projects ?? "*";
    if (projects !== "*") {
      return {
        reason: "project_scope",
        message: `Installing changes the whole server, and this token is scoped to the projects ${projects.join(", ")}. ${how}`,
      };
    }
    if (caller.capabilities.has("orchestration:install")) return null;
    const ceiling = caller.ceiling ?? CLIENT_CEILING;
    if (ceiling.runtimeMode !== "full-access") {
      return {
        reason: "ceiling",
        message: `Installing runs new programs for the whole server, and this token's ceiling is ${ceiling.runtimeMode}, below full-access. ${how}`,
      };
    }
    return null;
  }

  /** Agents must have a live run to change anything; clients and linked environments need none. */
  async requireLiveRunForChanges(caller: Caller, action: string): Promise<RunRecord | null> {
    if (caller.kind !== "agent") return null;
    const run = await this.liveRun(caller);
    if (run === null) {
      throw new OrchestratorFailure(
        "parent_not_active",
        `${action} needs the calling thread's live run, and this credential's provider session has none running. Call it from an active turn.`,
      );
    }
    return run;
  }

  /** The modes new or changed work may not exceed: a client's token ceiling, an agent's live run (else its thread). */
  async ceiling(caller: Caller): Promise<{ runtimeMode: RuntimeMode; interactionMode: InteractionMode }> {
    if (caller.kind !== "agent") return caller.ceiling ?? CLIENT_CEILING;
    const run = await this.liveRun(caller);
    if (run !== null) return { runtimeMode: run.runtimeMode, interactionMode: run.interactionMode };
    const thread = await this.thread(caller);
    if (thread !== null) return { runtimeMode: thread.runtimeMode, interactionMode: thread.interactionMode };
    return { runtimeMode: "approval-required", interactionMode: "plan" };
  }

  /**
   * Whose authority the caller acts under: a client's token (a web UI session's too), an
   * environment's grant, the owner at the CLI; an agent acts under its thread's, which is that
   * of whoever started the thread's tree (a token, a grant, the owner), never its own
   * provider-session credential, which ends with its session. Null when unknown (a thread made
   * before threads recorded it).
   */
  async authority(caller: Caller): Promise<Authority | null> {
    if (caller.kind === "agent") return (await this.thread(caller))?.authority ?? null;
    return caller.authority ?? null;
  }

  /** What new work inherits: the caller's provider, model and modes (null for clients). */
  async inherited(caller: Caller): Promise<InheritedSelection | null> {
    const thread = await this.thread(caller);
    if (thread === null) return null;
    const run = await this.liveRun(caller);
    return {
      providerInstanceId: thread.providerInstanceId,
      model: run?.model ?? thread.model,
      effort: (run !== null ? run.effort : thread.effort) ?? null,
      runtimeMode: run?.runtimeMode ?? thread.runtimeMode,
      interactionMode: run?.interactionMode ?? thread.interactionMode,
    };
  }

  /**
   * The projects a caller may use: a client's token's projects (every one when unscoped); an
   * agent's, by `reach.agentProjects`: every project (`all`, the default) or only its own
   * thread's (`own`).
   */
  async projectScope(caller: Caller): Promise<ProjectScope> {
    if (caller.kind !== "agent") return caller.projects ?? "*";
    if (this.config.reach.agentProjects === "all") return "*";
    const thread = await this.thread(caller);
    return thread === null ? [] : [thread.projectId];
  }

  /** Whether the caller may use a project. */
  async mayUseProject(caller: Caller, projectId: string): Promise<boolean> {
    const scope = await this.projectScope(caller);
    return scope === "*" || scope.includes(projectId);
  }

  /** Refuses a project outside the caller's projects with `capability_denied`. */
  async requireProjectInScope(caller: Caller, projectId: string): Promise<void> {
    if (await this.mayUseProject(caller, projectId)) return;
    const scope = await this.projectScope(caller);
    const allowed = scope === "*" ? [] : [...scope];
    const why =
      caller.kind === "agent"
        ? `This server lets an agent use only its own thread's project (${allowed.join(", ") || "none"}), not ${projectId} (config reach.agentProjects is "own"). Work in your project, or ask the user to set reach.agentProjects to "all".`
        : caller.kind === "environment"
          ? `Grant ${caller.grant?.id} (for ${caller.grant?.for}) covers only the projects ${allowed.join(", ") || "(none)"}, not ${projectId}. Ask the user on this machine to issue a grant with --projects including it.`
          : `This token may use only the projects ${allowed.join(", ") || "(none)"}, not ${projectId}. Issue a token for that project (switchyard token issue --projects).`;
    throw new OrchestratorFailure("capability_denied", why, {
      projectId,
      allowedProjects: allowed,
      ...(caller.grant !== undefined ? { grantId: caller.grant.id } : {}),
    });
  }

  /**
   * Checks, before anything is read, that the threads, tasks and projects a call names are in
   * the caller's projects (projectScope). A thread or task in another project answers as if it did
   * not exist (`thread_not_found`, `task_not_found`), so a scoped token learns nothing about
   * the others; ones that do not exist are left to the operation, which says so itself.
   */
  async requireInScope(
    caller: Caller,
    refs: { threadIds?: readonly string[]; taskIds?: readonly string[]; projectIds?: readonly string[] },
  ): Promise<void> {
    if ((await this.projectScope(caller)) === "*") return;
    for (const projectId of refs.projectIds ?? []) await this.requireProjectInScope(caller, projectId);
    for (const threadId of refs.threadIds ?? []) {
      const thread = await this.engine.reader.get("thread", threadId);
      if (thread !== null && !(await this.mayUseProject(caller, thread.projectId))) {
        throw new OrchestratorFailure(
          "thread_not_found",
          `Thread ${threadId} does not exist in the projects this ${caller.kind === "agent" ? "agent" : caller.kind === "environment" ? "grant" : "token"} may use.`,
          { threadId },
        );
      }
    }
    for (const taskId of refs.taskIds ?? []) {
      const task = await this.engine.reader.get("delegatedTask", taskId);
      const thread = task === null ? null : await this.engine.reader.get("thread", task.parentThreadId);
      if (task !== null && (thread === null || !(await this.mayUseProject(caller, thread.projectId)))) {
        throw new OrchestratorFailure(
          "task_not_found",
          `Task ${taskId} does not exist in the projects this ${caller.kind === "agent" ? "agent" : caller.kind === "environment" ? "grant" : "token"} may use.`,
          { taskId },
        );
      }
    }
  }

  /** The project a caller works in: `projectId` when given, else its thread's; clients must name one. */
  async project(caller: Caller, projectId: string | undefined): Promise<string> {
    if (projectId !== undefined) {
      await this.requireProjectInScope(caller, projectId);
      // A query, not a get: answered from the store's committed reads while nothing changed.
      if (!(await this.engine.reader.exists("project", "id = ?", [projectId])))
        throw new OrchestratorFailure("invalid_request", `Project ${projectId} does not exist.`, { projectId });
      return projectId;
    }
    const thread = await this.thread(caller);
    if (thread !== null) return thread.projectId;
    throw new OrchestratorFailure(
      "invalid_request",
      "projectId is required for callers outside a thread (CLI, scripts, other machines).",
    );
  }

  /**
   * Refuses an agent stopping (interrupt, stop, task_cancel) a thread broader than its own modes,
   * the seed's rule for a tool that changes another thread. A client token, a web UI session or a
   * linked environment is not held to its ceiling here: stopping narrows work and never grants a
   * privilege, so the operate verb (checked by the transport) on the thread's project (checked by
   * {@link requireInScope}) is all it needs. A ceiling bounds what a caller may start or widen.
   */
  async requireMayStop(caller: Caller, target: ThreadRecord): Promise<void> {
    if (caller.kind === "agent") await this.requireTargetWithinCeiling(caller, target);
  }

  /**
   * The project new work goes to (create_threads, t3_thread_launch, delegate_task): `projectId`
   * when given; else the caller's thread's; for a client, the project of its MCP roots (the
   * folders its agent works in), else of its connection's `--project` folder, else the only
   * project it may use. Otherwise `invalid_request` listing the projects it may use.
   */
  async workProject(
    caller: Caller,
    projectId: string | undefined,
  ): Promise<{
    projectId: string;
    cwd: string | null;
    from: "argument" | "thread" | "roots" | "connection" | "only_project";
  }> {
    if (projectId !== undefined)
      return { projectId: await this.project(caller, projectId), cwd: null, from: "argument" };
    const thread = await this.thread(caller);
    if (thread !== null) return { projectId: thread.projectId, cwd: null, from: "thread" };
    const usable: ProjectRecord[] = [];
    for (const project of await this.engine.reader.select("project", "1 = 1", [], "ORDER BY rowid"))
      if (!project.scratch && (await this.mayUseProject(caller, project.id))) usable.push(project);
    for (const root of caller.attachment?.roots ?? []) {
      const match = projectContaining(usable, root);
      if (match !== null) return { projectId: match.id, cwd: root, from: "roots" };
    }
    const connected = caller.connection?.projectDir ?? null;
    if (connected !== null) {
      const match = projectContaining(usable, connected);
      if (match !== null) return { projectId: match.id, cwd: connected, from: "connection" };
    }
    if (usable.length === 1) return { projectId: usable[0]!.id, cwd: null, from: "only_project" };
    const looked = [...(caller.attachment?.roots ?? []), ...(connected !== null ? [connected] : [])];
    throw new OrchestratorFailure(
      "invalid_request",
      usable.length === 0
        ? `No project to work in: this token may use no project that exists. Add one with \`switchyard project add <folder>\`, or use a token for it.`
        : `Name the project with projectId: ${looked.length > 0 ? `none of ${looked.join(", ")} is in` : "nothing tells which of"} the projects this token may use: ${usable.map((project) => `${project.id} (${project.name}, ${project.rootPath})`).join("; ")}.`,
      {
        field: "projectId",
        allowedProjects: usable.map((project) => ({
          projectId: project.id,
          name: project.name,
          rootPath: project.rootPath,
        })),
        lookedIn: looked,
      },
    );
  }

  /** Refuses to act on a thread whose modes are broader than the caller's. */
  async requireTargetWithinCeiling(caller: Caller, target: ThreadRecord): Promise<void> {
    const ceiling = await this.ceiling(caller);
    if (runtimeModeRank(target.runtimeMode) > runtimeModeRank(ceiling.runtimeMode)) {
      throw new OrchestratorFailure(
        "runtime_mode_escalation_denied",
        `Thread ${target.id} runs in "${target.runtimeMode}", broader than the caller's "${ceiling.runtimeMode}", so the caller cannot change it.`,
        { threadId: target.id },
      );
    }
    if (interactionModeRank(target.interactionMode) > interactionModeRank(ceiling.interactionMode)) {
      throw new OrchestratorFailure(
        "interaction_mode_escalation_denied",
        `Thread ${target.id} runs in "${target.interactionMode}" mode, broader than the caller's "${ceiling.interactionMode}", so the caller cannot change it.`,
        { threadId: target.id },
      );
    }
  }
}

/** The project whose folder is `folder` or holds it (the deepest such), or null. */
function projectContaining(projects: readonly ProjectRecord[], folder: string): ProjectRecord | null {
  let best: ProjectRecord | null = null;
  for (const project of projects) {
    const root = project.rootPath.replace(/\/+$/, "");
    if (folder !== root && !folder.startsWith(`${root}/`)) continue;
    if (best === null || root.length > best.rootPath.length) best = project;
  }
  return best;
}
