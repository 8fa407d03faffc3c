import { inject, injectable } from "tsyringe";
import { type SwitchyardConfig, ConfigToken } from "../../config/config-schema.js";
import { type Engine, EngineToken } from "../../engine/ports.js";
import { OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import { environmentId } from "../../store/settings.js";
import type { Caller } from "../caller.js";
import { CallerContext } from "../caller-context.js";
import { FORWARDED_TOOLS } from "./forwarded-tools.js";
import { ReachLinkCalls, unknownEnvironment, type ReachCallMeta } from "./link-calls.js";
import { ReachAudit } from "./reach-audit.js";
import { ReachLinks } from "./reach-links.js";
import { ReachOrigins } from "./reach-origin.js";
import { grantVerbOf } from "./tool-grant-verbs.js";
import { RemoteResultsPuller } from "./remote-results-puller.js";
import { RemoteTasks } from "./remote-tasks.js";
import { webPageOf } from "./remote-web-page.js";

/** How long orchestrator_capabilities waits for each linked environment's answer. */
const CAPABILITIES_TIMEOUT_MS = 5_000;

/** A linked environment as orchestrator_capabilities lists it. */
export interface LinkedEnvironment {
  /** What `environmentId` takes to reach it: the link's name. */
  environmentId: string;
  url: string;
  /** Its own id (the one in the links it builds), once it answered. */
  ownEnvironmentId: string | null;
  reachable: boolean;
  problem: { code: string; reason: string; message: string } | null;
  /** What its grant allows: verbs and the broadest runtime mode (null when it did not say). */
  verbs: string[] | null;
  maxRuntimeMode: string | null;
  projects: { projectId: string; name: string }[];
  /**
   * The profiles its grant lets this side name there, as it defines them; null when it did not
   * say (unreachable, or a server from before grants named profiles, which refuses a profile).
   */
  profiles: LinkedProfile[] | null;
  providers: {
    providerInstanceId: string;
    driverKind: string;
    canRunChildTasks: boolean;
    models: string[];
    runtimeModes: string[];
    interactionModes: string[];
  }[];
}

/** A profile a linked environment's grant allows, as that environment describes it. */
export interface LinkedProfile {
  name: string;
  description: string;
  target?: { providerInstanceId?: string; driverKind?: string; model?: string; effort?: string };
  maxRuntimeMode?: string;
  maxInteractionMode?: string;
}

/** The profiles in a linked environment's capabilities answer, or null when its grant does not name them. */
function linkedProfilesOf(
  answer: Record<string, unknown>,
  grant: { profiles?: unknown } | null,
): LinkedProfile[] | null {
  if (grant === null || !Array.isArray(grant.profiles)) return null;
  const profiles = Array.isArray(answer.profiles) ? (answer.profiles as Record<string, unknown>[]) : [];
  return profiles
    .filter((profile) => typeof profile.name === "string")
    .map((profile) => ({
      name: String(profile.name),
      description: typeof profile.description === "string" ? profile.description : "",
      ...(typeof profile.target === "object" && profile.target !== null
        ? { target: profile.target as NonNullable<LinkedProfile["target"]> }
        : {}),
      ...(typeof profile.maxRuntimeMode === "string" ? { maxRuntimeMode: profile.maxRuntimeMode } : {}),
      ...(typeof profile.maxInteractionMode === "string" ? { maxInteractionMode: profile.maxInteractionMode } : {}),
    }));
}

const LINK_PATTERN = /switchyard-thread:\/\/v2\/([^/"\s]+)\//;

/**
 * Forwards a tool call to the linked environment it names (`environmentId`), as one mechanism
 * for every tool in `FORWARDED_TOOLS`: the call goes there with the caller's mode ceiling (which
 * the other side intersects with its grant, and enforces the grant on), and its answer comes back
 * as the other side built it, links included. A delegation additionally carries the parent's
 * lineage and depth budget, and its task is recorded here so the result is received once and
 * delivered to the parent as an event; `task_status` and `task_cancel` of such a task forward
 * without `environmentId`.
 */
@injectable()
export class ReachForwarder {
  /** The other environments' own ids (as their links name them), learned from their answers. */
  private readonly learned = new Map<string, string>();

  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(ConfigToken) private readonly config: SwitchyardConfig,
    private readonly links: ReachLinks,
    private readonly calls: ReachLinkCalls,
    private readonly callers: CallerContext,
    private readonly remoteTasks: RemoteTasks,
    private readonly puller: RemoteResultsPuller,
    private readonly origins: ReachOrigins,
    private readonly audit: ReachAudit,
  ) {}

  /** Whether a tool takes `environmentId`. */
  forwards(toolName: string): boolean {
    return Object.hasOwn(FORWARDED_TOOLS, toolName);
  }

  /**
   * The link a call goes to, or null when it runs here: its `environmentId` (a link's name, or
   * the id in a link that environment built; this environment's own id means here), or, for a
   * task tool, the link its task was delegated to.
   */
  async destination(toolName: string, args: Record<string, unknown>): Promise<string | null> {
    const forwarded = FORWARDED_TOOLS[toolName];
    if (forwarded === undefined) return null;
    const named = args.environmentId;
    if (typeof named === "string")
      return named === environmentId(this.engine.store) ? null : await this.linkNamed(named);
    if (forwarded.kind === "task" && typeof args.taskId === "string")
      return (await this.remoteTasks.byRemoteTaskId(args.taskId))?.linkName ?? null;
    return null;
  }

  /** Carries out a call on the link `linkName`; the answer is the other side's. */
  async forward(
    caller: Caller,
    toolName: string,
    args: Record<string, unknown>,
    linkName: string,
    control: { signal?: AbortSignal; onProgress?: () => void } = {},
  ): Promise<Record<string, unknown>> {
    const forwarded = FORWARDED_TOOLS[toolName]!;
    // A caller held to some projects here (a scoped token, an agent under reach.agentProjects
    // "own") does not reach past them through a link the user made for broader use.
    if ((await this.callers.projectScope(caller)) !== "*") {
      throw new OrchestratorFailure(
        "capability_denied",
        `This ${caller.kind === "agent" ? "agent may use only its own project here" : "token is scoped to some projects"}, so it may not call linked environments (environment ${linkName}). ${caller.kind === "agent" ? 'Ask the user to set reach.agentProjects to "all".' : "Use a token for every project (switchyard token issue --projects '*')."}`,
        {
          reason: "scoped_caller",
          environmentId: linkName,
        },
      );
    }
    await this.refuseTransitive(caller, toolName, linkName);
    const { environmentId: _named, ...rest } = args;
    const own = environmentId(this.engine.store);
    let meta: ReachCallMeta = {
      environmentId: own,
      callerThreadId: caller.threadId,
      ceiling: await this.callers.ceiling(caller),
    };
    let outgoing: Record<string, unknown> = rest;
    let parentRunId: string | null = null;
    if (forwarded.kind === "delegation") {
      const run = await this.callers.liveRun(caller);
      if (caller.kind !== "agent" || run === null) {
        throw new OrchestratorFailure(
          "parent_not_active",
          "delegate_task needs an active parent run owned by this credential's provider session; call it during a turn.",
        );
      }
      const parent = (await this.engine.reader.get("thread", run.threadId))!;
      const depth = parent.lineage.depth + 1;
      if (depth > this.config.budgets.maxDelegationDepth) {
        throw new OrchestratorFailure(
          "invalid_request",
          `Delegation depth ${depth} exceeds the budget of ${this.config.budgets.maxDelegationDepth} (budgets.maxDelegationDepth); finish this work here instead of delegating further.`,
          {
            budget: "maxDelegationDepth",
            limit: this.config.budgets.maxDelegationDepth,
          },
        );
      }
      await this.checkBreadth(run.id, parent.lineage.rootThreadId);
      meta = {
        ...meta,
        delegation: {
          environmentId: own,
          threadId: parent.id,
          runId: run.id,
          rootThreadId: parent.lineage.rootThreadId,
          depth,
          maxDepth: this.config.budgets.maxDelegationDepth,
        },
      };
      // The other side scopes the key to this environment and the parent thread (which it gets in
      // the lineage), so a retry of the same delegation finds the same task there.
      outgoing = {
        ...rest,
        clientRequestId:
          typeof rest.clientRequestId === "string" ? rest.clientRequestId : this.engine.ids.random("req"),
      };
      parentRunId = run.id;
    }
    if (forwarded.kind === "task" && caller.kind === "agent") {
      // An agent sees only the tasks its own thread delegated, there as here.
      const task = typeof rest.taskId === "string" ? await this.remoteTasks.get(linkName, rest.taskId) : null;
      if (task === null || task.parentThreadId !== caller.threadId) {
        throw new OrchestratorFailure(
          "task_not_found",
          `Task ${String(rest.taskId)} does not exist among the tasks your thread delegated to environment ${linkName} (an agent sees only its own tasks).`,
          { taskId: rest.taskId, environmentId: linkName },
        );
      }
    }
    const answer = await this.calls.call(linkName, toolName, outgoing, meta, control);
    this.learn(linkName, answer);
    if (forwarded.kind === "delegation" && typeof answer.taskId === "string") {
      const task = await this.remoteTasks.record({
        linkName,
        remoteTaskId: answer.taskId,
        environmentId: this.learned.get(linkName) ?? linkName,
        parentThreadId: caller.threadId!,
        parentRunId: parentRunId!,
        childThreadId: String(answer.childThreadId ?? ""),
        childThreadLink: String(answer.childThreadLink ?? ""),
        ...webPageOf(answer.childThreadWebUrl),
        title:
          typeof rest.title === "string"
            ? rest.title
            : String(rest.task ?? "")
                .split("\n")[0]!
                .slice(0, 60),
        providerInstanceId: typeof answer.providerInstanceId === "string" ? answer.providerInstanceId : null,
        model: typeof answer.model === "string" ? answer.model : null,
        ...(typeof rest.profile === "string" ? { profile: rest.profile } : {}),
      });
      // As locally, only a wait reads the result (an async call's answer is not a reading of it).
      await this.settleFromAnswer(linkName, task.remoteTaskId, answer, rest.mode === "wait" ? "read" : "none");
      this.puller.wake(linkName);
    } else if (forwarded.kind === "task" && typeof answer.taskId === "string") {
      // An agent's task_status reads the result for its thread; a client's reads on the side.
      await this.settleFromAnswer(
        linkName,
        answer.taskId,
        answer,
        toolName === "task_cancel" ? "cancel" : caller.kind === "agent" ? "read" : "none",
      );
    }
    return answer;
  }

  /**
   * Work whose chain of callers began on another environment never leaves this one: a grant here
   * lets its holder use this machine, not this machine's links. Refused before anything is sent,
   * with a row in the audit.
   */
  private async refuseTransitive(caller: Caller, toolName: string, linkName: string): Promise<void> {
    const origin = await this.origins.of(caller);
    if (origin === null) return;
    this.audit.record({
      direction: "out",
      grantId: origin.grantId,
      environment: linkName,
      remoteEnvironmentId: this.learned.get(linkName) ?? null,
      callerThreadId: caller.threadId,
      verb: grantVerbOf(toolName) ?? null,
      tool: toolName,
      outcome: "capability_denied",
      reason: "transitive",
    });
    throw new OrchestratorFailure(
      "capability_denied",
      `This work was started from environment ${origin.environment}${origin.grantId === null ? "" : ` (grant ${origin.grantId})`}, so it may not call linked environments from here (environment ${linkName}): a grant lets that environment use this machine, never this machine's links. Do the work here, or let the user on ${origin.environment} link ${linkName} directly.`,
      {
        reason: "transitive",
        environmentId: linkName,
        reachedFrom: origin.environment,
        ...(origin.grantId !== null ? { grantId: origin.grantId } : {}),
      },
    );
  }

  /**
   * Breadth budgets count a run's children here and in every linked environment: unfinished ones
   * against maxConcurrentChildrenPerRun, all of a tree's against maxTasksPerRootThread.
   */
  private async checkBreadth(parentRunId: string, rootThreadId: string): Promise<void> {
    const budgets = this.config.budgets;
    const remoteOfRun = await this.remoteTasks.unreceivedCountOfRun(parentRunId);
    const localOfRun = (await this.engine.reader.select("delegatedTask", "parent_run_id = ?", [parentRunId])).filter(
      (task) => task.finalizedAt === null,
    ).length;
    if (remoteOfRun + localOfRun >= budgets.maxConcurrentChildrenPerRun) {
      throw new OrchestratorFailure(
        "invalid_request",
        `This run already has ${remoteOfRun + localOfRun} unfinished delegated tasks (${remoteOfRun} in linked environments), the budget (budgets.maxConcurrentChildrenPerRun); wait for one before starting another.`,
        {
          budget: "maxConcurrentChildrenPerRun",
          limit: budgets.maxConcurrentChildrenPerRun,
        },
      );
    }
    const remoteOfTree = await this.remoteTasks.countOfTree(rootThreadId);
    const localOfTree = await this.engine.reader.count("delegatedTask", "root_thread_id = ?", [rootThreadId]);
    if (remoteOfTree + localOfTree >= budgets.maxTasksPerRootThread) {
      throw new OrchestratorFailure(
        "invalid_request",
        `This thread tree has already delegated ${remoteOfTree + localOfTree} tasks (${remoteOfTree} to linked environments), the budget (budgets.maxTasksPerRootThread).`,
        {
          budget: "maxTasksPerRootThread",
          limit: budgets.maxTasksPerRootThread,
        },
      );
    }
  }

  /**
   * A task answer the parent saw: a result it read (a wait or status) needs no wake message; a
   * cancel it asked for disposes the automatic delivery, as for a local task.
   */
  private async settleFromAnswer(
    linkName: string,
    remoteTaskId: string,
    answer: Record<string, unknown>,
    how: "read" | "cancel" | "none",
  ): Promise<void> {
    if ((await this.remoteTasks.get(linkName, remoteTaskId)) === null) return;
    if (how === "cancel") await this.remoteTasks.dispose(linkName, remoteTaskId);
    else if (how === "read" && answer.workState === "result_available")
      await this.remoteTasks.acknowledge(linkName, remoteTaskId);
    if (answer.workState === "result_available" && typeof answer.status === "string") {
      await this.remoteTasks.receive(linkName, {
        taskId: remoteTaskId,
        status: answer.status,
        summary: typeof answer.summary === "string" ? answer.summary : "",
      });
    }
  }

  /** The link an environmentId names: a link's name, or the id another environment's links carry. */
  private async linkNamed(named: string): Promise<string> {
    if ((await this.links.get(named)) !== null) return named;
    for (const [linkName, id] of this.learned)
      if (id === named && (await this.links.get(linkName)) !== null) return linkName;
    const known = await this.remoteTasks.linkOfEnvironment(named);
    if (known !== null && (await this.links.get(known)) !== null) return known;
    throw unknownEnvironment(
      named,
      (await this.links.list()).map((link) => link.name),
    );
  }

  /** Remembers the other environment's own id from a link in its answer. */
  private learn(linkName: string, answer: Record<string, unknown>): void {
    const match = LINK_PATTERN.exec(JSON.stringify(answer));
    if (match !== null) this.learned.set(linkName, match[1]!);
  }

  /**
   * The linked environments and what their grants let this caller do there, as each answers
   * orchestrator_capabilities for its grant (bounded: an environment that does not answer in
   * time is listed as unreachable, with why).
   */
  async environments(caller: Caller): Promise<LinkedEnvironment[]> {
    // A caller held to some projects here, or whose work another environment started, may not
    // call linked environments (see forward).
    if ((await this.callers.projectScope(caller)) !== "*" || (await this.origins.of(caller)) !== null) return [];
    const meta: ReachCallMeta = {
      environmentId: environmentId(this.engine.store),
      callerThreadId: caller.threadId,
      ceiling: await this.callers.ceiling(caller),
    };
    // In parallel: network calls, outside any transaction.
    return Promise.all(
      (await this.links.list()).map(async (link): Promise<LinkedEnvironment> => {
        const base = { environmentId: link.name, url: link.url };
        try {
          const answer = await this.calls.call(link.name, "orchestrator_capabilities", {}, meta, {
            signal: AbortSignal.timeout(CAPABILITIES_TIMEOUT_MS),
          });
          this.learn(link.name, answer);
          const grant = (answer.grant ?? null) as {
            verbs?: string[];
            maxRuntimeMode?: string;
            profiles?: unknown;
          } | null;
          const providers = Array.isArray(answer.providers) ? (answer.providers as Record<string, unknown>[]) : [];
          return {
            ...base,
            ownEnvironmentId:
              this.learned.get(link.name) ?? (typeof answer.environmentId === "string" ? answer.environmentId : null),
            reachable: true,
            problem: null,
            verbs: grant?.verbs ?? null,
            maxRuntimeMode: grant?.maxRuntimeMode ?? null,
            projects: Array.isArray(answer.projects)
              ? (answer.projects as { projectId: string; name: string }[]).map((project) => ({
                  projectId: project.projectId,
                  name: project.name,
                }))
              : [],
            profiles: linkedProfilesOf(answer, grant),
            providers: providers.map((provider) => ({
              providerInstanceId: String(provider.providerInstanceId),
              driverKind: String(provider.driverKind),
              canRunChildTasks: provider.canRunChildTasks === true,
              models: Array.isArray(provider.models)
                ? (provider.models as { id: string }[]).map((model) => model.id)
                : [],
              runtimeModes: Array.isArray(provider.runtimeModes) ? (provider.runtimeModes as string[]) : [],
              interactionModes: Array.isArray(provider.interactionModes) ? (provider.interactionModes as string[]) : [],
            })),
          };
        } catch (error) {
          const failure = error as { code?: string; message?: string; details?: { reason?: unknown } };
          return {
            ...base,
            ownEnvironmentId: this.learned.get(link.name) ?? null,
            reachable: false,
            problem: {
              code: failure.code ?? "provider_unavailable",
              reason: typeof failure.details?.reason === "string" ? failure.details.reason : "unreachable",
              message: String(failure.message ?? error).slice(0, 300),
            },
            verbs: null,
            maxRuntimeMode: null,
            projects: [],
            profiles: null,
            providers: [],
          };
        }
      }),
    );
  }

  /** The environment id learned for a link, if any answer named it yet. */
  environmentIdOf(linkName: string): string | null {
    return this.learned.get(linkName) ?? null;
  }
}
