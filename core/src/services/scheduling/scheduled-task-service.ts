import { randomBytes } from "node:crypto";
import { inject, injectable } from "tsyringe";
import { interactionModeRank, runtimeModeRank, type InteractionMode, type RuntimeMode } from "../../spec/index.js";
import { type SwitchyardConfig, ConfigToken } from "../../config/config-schema.js";
import { type Engine, EngineToken } from "../../engine/ports.js";
import { conflictsAsInvalid, OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import { titleFromMessage } from "../../engine/thread-records.js";
import type {
  Authority,
  CreationSource,
  ScheduledTaskRecord,
  ScheduleSpec,
  SealedSecret,
  ThreadRecord,
} from "../../store/records.js";
import { derive } from "../../util/ids.js";
import { creationSourceOf, type Caller } from "../caller.js";
import { CallerContext } from "../caller-context.js";
import {
  ProviderSelectionService,
  type InheritedSelection,
  type ResolvedSelection,
  type TargetRequest,
} from "../provider-selection-service.js";
import {
  checkSchedule,
  timeZoneName,
  type CheckedSchedule,
  type ScheduleInput,
  type SignatureInput,
} from "./schedule-validation.js";
import { describeAuthority, ScheduleStanding } from "./schedule-standing.js";
import { scheduledTaskView, webhookPath, type ScheduledTaskView } from "./scheduled-task-view.js";
import { WebhookSecretBox } from "./webhook-secret-box.js";
import { ReachOrigins } from "../reach/reach-origin.js";
import type { ProfiledWork, ProfileShapedInput } from "../profiles/profile-application.js";
import { checkProfileSupport } from "../profiles/profile-harness.js";
import { ProfileLibrary } from "../profiles/profile-library.js";

/** schedule_task input: creates a task, or with `scheduledTaskId` updates one (omitted fields stay). */
export interface ScheduleTaskInput {
  readonly scheduledTaskId?: string | undefined;
  readonly projectId?: string | undefined;
  readonly title?: string | undefined;
  readonly prompt?: string | undefined;
  readonly schedule?: ScheduleInput | undefined;
  readonly target?: TargetRequest | undefined;
  readonly runtimeMode?: RuntimeMode | "inherit" | undefined;
  readonly interactionMode?: InteractionMode | "inherit" | undefined;
  readonly enabled?: boolean | undefined;
  readonly bindToCurrentThread?: boolean | undefined;
  /**
   * A profile its runs start with (docs/profiles.md), stored by name and resolved again at every
   * fire; null (on update) removes it. A profiled task's runs launch fresh threads.
   */
  readonly profile?: string | null | undefined;
  readonly clientRequestId?: string | undefined;
}

/** What schedule_task answers: the task, whether this call created it, and a generated secret (shown once). */
export type ScheduleTaskResult = ScheduledTaskView & {
  readonly created: boolean;
  readonly replayed: boolean;
  /** The generated signature secret, shown only by the call that generated it. */
  readonly signatureSecret: string | null;
  /** What was stepped down or kept, in words. */
  readonly notes: string[];
};

type Ceiling = { readonly runtimeMode: RuntimeMode; readonly interactionMode: InteractionMode };

const MAX_TITLE_CHARS = 200;

function narrower(a: Ceiling, b: Ceiling): Ceiling {
  return {
    runtimeMode: runtimeModeRank(a.runtimeMode) <= runtimeModeRank(b.runtimeMode) ? a.runtimeMode : b.runtimeMode,
    interactionMode:
      interactionModeRank(a.interactionMode) <= interactionModeRank(b.interactionMode)
        ? a.interactionMode
        : b.interactionMode,
  };
}

/**
 * Scheduled tasks (seed 000 `schedule_task`, `list_scheduled_tasks`, `delete_scheduled_task`):
 * a prompt that runs on an interval, at a fixed time in the server's time zone, or on each
 * qualifying webhook request, even when no turn is active. Runs resolve their provider, model and
 * modes as `delegate_task` does and are never broader than the task's creator. Every transport
 * (MCP, the CLI, the HTTP API) goes through here; the scheduler fires them
 * (`ScheduledTriggerService`).
 */
@injectable()
export class ScheduledTaskService {
  private webhookBaseUrl: string | null = null;

  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(ConfigToken) private readonly config: SwitchyardConfig,
    private readonly callers: CallerContext,
    private readonly selection: ProviderSelectionService,
    private readonly secrets: WebhookSecretBox,
    private readonly standing: ScheduleStanding,
    private readonly origins: ReachOrigins,
    private readonly profiles: ProfileLibrary,
  ) {}

  /** The server's address, once it listens (webhook URLs are built on it); null when it stops. */
  setWebhookBaseUrl(url: string | null): void {
    this.webhookBaseUrl = url;
  }

  /** A task as results show this caller: an unsigned webhook's URL only to a caller that may manage the task. */
  async view(caller: Caller, task: ScheduledTaskRecord, recentTriggers?: number): Promise<ScheduledTaskView> {
    let path: string | null = null;
    if (task.schedule.type === "webhook") {
      if (task.schedule.signature !== null) path = webhookPath(task.id, null);
      else if (await this.mayManage(caller, task)) path = webhookPath(task.id, this.secrets.webhookUrlKey(task.id));
    }
    return await scheduledTaskView(this.engine.reader, task, {
      nowMs: this.engine.clock.nowMs(),
      timeZone: this.config.scheduling.timeZone,
      timeZoneName: timeZoneName(this.config.scheduling),
      webhookBaseUrl: this.webhookBaseUrl,
      ...(recentTriggers !== undefined ? { recentTriggers } : {}),
      webhookPath: path,
      authorityState: await this.standing.state(task.authority),
    });
  }

  /**
   * Whether a caller may change a task (and so see what triggers it): it may operate, in the
   * task's project, with modes at least as broad as the task's. The same test updates and
   * deletions pass; an agent additionally needs its live run to make the change.
   */
  async mayManage(caller: Caller, task: ScheduledTaskRecord): Promise<boolean> {
    if (
      !caller.capabilities.has("orchestration:operate") ||
      !(await this.callers.mayUseProject(caller, task.projectId))
    )
      return false;
    const ceiling = await this.callers.ceiling(caller);
    return (
      runtimeModeRank(task.runtimeMode) <= runtimeModeRank(ceiling.runtimeMode) &&
      interactionModeRank(task.interactionMode) <= interactionModeRank(ceiling.interactionMode)
    );
  }

  /**
   * The credential a task the caller makes (or resumes) will run under, which must stand now:
   * an agent's is its thread's (whoever started its tree), so a thread that records none, or
   * whose credential was revoked or expired while its agent works, cannot schedule.
   */
  private async requireStandingAuthority(caller: Caller, action: string): Promise<Authority> {
    const authority = await this.callers.authority(caller);
    if (authority === null) {
      throw new OrchestratorFailure(
        "capability_denied",
        caller.kind === "agent"
          ? `${action} records the credential a task runs under, and this thread was started before Switchyard recorded who starts threads, so a task made here would run under no one's. Ask the user to ${action === "schedule_task" ? "schedule it" : "resume it"} (the HTTP API, switchyard schedules, or an agent in a thread started since).`
          : `${action} records the credential a task runs under, and this caller presented none.`,
        { action },
      );
    }
    const lapse = await this.standing.lapse(authority, "");
    if (lapse !== null) {
      throw new OrchestratorFailure(
        "capability_denied",
        `${action} would make a task run under ${describeAuthority(authority)}${caller.kind === "agent" ? " (the credential this thread's tree was started with)" : ""}, which is ${lapse.reason === "credential_expired" ? "expired" : "revoked"}; a task cannot outlive its credential.`,
        { action, reason: lapse.reason },
      );
    }
    return authority;
  }

  /**
   * The task, or `task_not_found`: also for a task in a project the caller's token may not use,
   * so a project-scoped token learns nothing about other projects' schedules.
   */
  private async requireTask(caller: Caller, scheduledTaskId: string): Promise<ScheduledTaskRecord> {
    const task = await this.engine.reader.get("scheduledTask", scheduledTaskId);
    if (task === null || !(await this.callers.mayUseProject(caller, task.projectId))) {
      throw new OrchestratorFailure(
        "task_not_found",
        `Scheduled task ${scheduledTaskId} does not exist${task === null ? " (deleting one is permanent)" : " in the projects this token may use"}. Call list_scheduled_tasks to see the tasks.`,
        { scheduledTaskId },
      );
    }
    return task;
  }

  /** Refuses to change a task that runs with broader modes than the caller's. */
  private async requireTaskWithinCeiling(caller: Caller, task: ScheduledTaskRecord): Promise<void> {
    const ceiling = await this.callers.ceiling(caller);
    if (runtimeModeRank(task.runtimeMode) > runtimeModeRank(ceiling.runtimeMode)) {
      throw new OrchestratorFailure(
        "runtime_mode_escalation_denied",
        `Scheduled task ${task.id} runs in "${task.runtimeMode}", broader than the caller's "${ceiling.runtimeMode}", so the caller cannot change it.`,
        { scheduledTaskId: task.id },
      );
    }
    if (interactionModeRank(task.interactionMode) > interactionModeRank(ceiling.interactionMode)) {
      throw new OrchestratorFailure(
        "interaction_mode_escalation_denied",
        `Scheduled task ${task.id} runs in "${task.interactionMode}" mode, broader than the caller's "${ceiling.interactionMode}", so the caller cannot change it.`,
        { scheduledTaskId: task.id },
      );
    }
  }

  private checkPrompt(prompt: string): string {
    if (prompt.trim() === "")
      throw new OrchestratorFailure(
        "invalid_request",
        "prompt is empty: it is what every run of the task is asked to do.",
        { field: "prompt" },
      );
    const limit = this.config.scheduling.maxPromptChars;
    if (prompt.length > limit) {
      throw new OrchestratorFailure(
        "invalid_request",
        `prompt has ${prompt.length} characters, more than the ${limit} a scheduled task may have (scheduling.maxPromptChars); shorten it.`,
        { field: "prompt", limit },
      );
    }
    return prompt;
  }

  private checkTitle(title: string): string {
    const trimmed = title.trim();
    if (trimmed === "" || trimmed.length > MAX_TITLE_CHARS)
      throw new OrchestratorFailure("invalid_request", `title must be 1 to ${MAX_TITLE_CHARS} characters.`, {
        field: "title",
      });
    return trimmed;
  }

  /** The caller's thread when it is in `projectId` (the thread runs can be bound to), else null. */
  private async callerThreadIn(caller: Caller, projectId: string): Promise<ThreadRecord | null> {
    const thread = await this.callers.thread(caller);
    return thread !== null && thread.projectId === projectId ? thread : null;
  }

  /** `bindToCurrentThread: true` without a caller thread in the task's project is refused (seed 000). */
  private async requireBindableThread(caller: Caller, projectId: string): Promise<ThreadRecord> {
    const thread = await this.callerThreadIn(caller, projectId);
    if (thread === null) {
      throw new OrchestratorFailure(
        "invalid_request",
        caller.threadId === null
          ? `bindToCurrentThread: true needs a caller thread in project ${projectId}, and this caller has no thread; omit it (runs then launch a fresh thread each) or call from an agent's thread in that project.`
          : `bindToCurrentThread: true needs a caller thread in project ${projectId}, and the calling thread is in another project; omit it, or schedule the task in the calling thread's project.`,
        { field: "bindToCurrentThread", projectId },
      );
    }
    return thread;
  }

  /** Resolves where runs go: a bound task runs on its thread's provider; the rest as delegate_task does. */
  private async resolveSelection(options: {
    target: TargetRequest | undefined;
    boundThread: ThreadRecord | null;
    inherited: InheritedSelection | null;
    ceiling: Ceiling;
    runtimeMode: RuntimeMode | "inherit" | undefined;
    interactionMode: InteractionMode | "inherit" | undefined;
  }): Promise<ResolvedSelection> {
    let target = options.target;
    if (options.boundThread !== null) {
      const thread = options.boundThread;
      if (target?.providerInstanceId !== undefined && target.providerInstanceId !== thread.providerInstanceId) {
        throw new OrchestratorFailure(
          "invalid_request",
          `A bound task runs in thread ${thread.id}, on its provider "${thread.providerInstanceId}", not "${target.providerInstanceId}"; omit target.providerInstanceId, or use bindToCurrentThread: false to run each time in a fresh thread on that provider.`,
          { field: "target.providerInstanceId" },
        );
      }
      target = {
        providerInstanceId: thread.providerInstanceId,
        ...(target?.driverKind !== undefined ? { driverKind: target.driverKind } : {}),
        ...(target?.model !== undefined ? { model: target.model } : {}),
      };
    }
    return this.selection.resolve({
      target,
      inherited: options.inherited,
      ceiling: options.ceiling,
      runtimeMode: options.runtimeMode,
      interactionMode: options.interactionMode,
    });
  }

  /** Seals the secret a schedule asks for, keeps the current one, or none. */
  private sealSignature(
    taskId: string,
    asked: SignatureInput | undefined,
    current: ScheduleSpec | null,
  ): { sealed: SealedSecret | null; generated: string | null } {
    if (asked === undefined) return { sealed: current?.type === "webhook" ? current.signature : null, generated: null };
    if (asked === "none") return { sealed: null, generated: null };
    if (asked === "generate") {
      const secret = this.secrets.generate();
      return { sealed: this.secrets.seal(taskId, secret), generated: secret };
    }
    return { sealed: this.secrets.seal(taskId, asked.secret), generated: null };
  }

  private storedSchedule(checked: CheckedSchedule, sealed: SealedSecret | null): ScheduleSpec {
    return checked.type === "webhook"
      ? { type: "webhook", signature: sealed, filters: checked.filters, dedupe: checked.dedupe }
      : checked;
  }

  /** A schedule as a command's request (hashed into its receipt): a secret only as a keyed digest. */
  private requestSchedule(schedule: ScheduleInput | undefined): unknown {
    if (
      schedule === undefined ||
      schedule.type !== "webhook" ||
      schedule.signature === undefined ||
      typeof schedule.signature === "string"
    )
      return schedule ?? null;
    return { ...schedule, signature: { secretDigest: this.secrets.requestDigest(schedule.signature.secret) } };
  }

  /**
   * schedule_task: creates a task (prompt and schedule required) or, with `scheduledTaskId`,
   * updates one (omitted fields stay; `enabled: false` pauses it). All or nothing: a bad field
   * changes nothing.
   */
  async schedule(
    caller: Caller,
    input: ScheduleTaskInput,
    origin: { creationSource?: CreationSource } = {},
  ): Promise<ScheduleTaskResult> {
    return input.scheduledTaskId === undefined
      ? this.create(caller, input, origin.creationSource ?? creationSourceOf(caller))
      : this.update(caller, input.scheduledTaskId, input);
  }

  private async create(
    caller: Caller,
    input: ScheduleTaskInput,
    creationSource: CreationSource,
  ): Promise<ScheduleTaskResult> {
    if (input.prompt === undefined)
      throw new OrchestratorFailure(
        "invalid_request",
        "prompt is required to create a scheduled task (pass scheduledTaskId to update one).",
        { field: "prompt" },
      );
    if (input.schedule === undefined)
      throw new OrchestratorFailure(
        "invalid_request",
        'schedule is required to create a scheduled task: {type: "interval", everyMs}, {type: "fixed_time", cron | at} or {type: "webhook"}.',
        { field: "schedule" },
      );
    const projectId = await this.callers.project(caller, input.projectId);
    const commandId = derive.command(
      caller.requestScope,
      "schedule_task",
      input.clientRequestId ?? this.engine.ids.random("req"),
    );
    const request = {
      projectId,
      title: input.title ?? null,
      prompt: input.prompt,
      schedule: this.requestSchedule(input.schedule),
      target: input.target ?? null,
      runtimeMode: input.runtimeMode ?? null,
      interactionMode: input.interactionMode ?? null,
      enabled: input.enabled ?? true,
      bindToCurrentThread: input.bindToCurrentThread ?? null,
      ...(input.profile != null ? { profile: input.profile } : {}),
    };
    const replay = await conflictsAsInvalid(() =>
      this.engine.replay<{ scheduledTaskId: string }>(commandId, "scheduled_task.create", request),
    );
    if (replay !== null) {
      const task = await this.requireTask(caller, replay.result.scheduledTaskId);
      return {
        ...(await this.view(caller, task)),
        created: false,
        replayed: true,
        signatureSecret: null,
        notes: [
          "This clientRequestId created the task before; it is returned as it is now (a generated secret is shown only once).",
        ],
      };
    }
    await this.callers.requireLiveRunForChanges(caller, "schedule_task");
    const authority = await this.requireStandingAuthority(caller, "schedule_task");
    const prompt = this.checkPrompt(input.prompt);
    const title = input.title !== undefined ? this.checkTitle(input.title) : titleFromMessage(prompt);
    const checked = checkSchedule(input.schedule, this.config.scheduling, this.engine.clock.nowMs());
    const sameProjectThread = await this.callerThreadIn(caller, projectId);
    const profileName = input.profile ?? null;
    // Seed 000: bound by default only when the caller has a thread in the task's project; a
    // profiled task's runs start threads of their own (the profile shapes a thread from its start).
    const bind = input.bindToCurrentThread ?? (sameProjectThread !== null && profileName === null);
    if (bind && profileName !== null) throw profileOnBoundTask(profileName);
    const boundThread = bind ? await this.requireBindableThread(caller, projectId) : null;
    const ceiling = await this.callers.ceiling(caller);
    // The one path every entry point takes: unknown profiles, widening and the trust rule are refused here.
    const profiled = await this.profiles.apply(caller, profileName ?? undefined, input, ceiling, projectId);
    const resolved = await this.resolveSelection({
      target: profiled.input.target,
      boundThread,
      inherited: await this.callers.inherited(caller),
      ceiling: profiled.ceiling,
      runtimeMode: profiled.input.runtimeMode,
      interactionMode: profiled.input.interactionMode,
    });
    const supported = checkProfileSupport(profiled.harness, profileName, resolved);
    const selection = {
      ...resolved,
      notes: [...resolved.notes, ...supported.notes, ...workspaceNotes(profiled)],
    };
    let generated: string | null = null;
    const reachedFrom = await this.origins.of(caller);
    const outcome = await conflictsAsInvalid(() =>
      this.engine.execute({
        commandId,
        operation: "scheduled_task.create",
        request,
        handle: async (ctx) => {
          if ((await ctx.get("project", projectId)) === null)
            throw new OrchestratorFailure("invalid_request", `Project ${projectId} does not exist.`, { projectId });
          const id = `sched_${randomBytes(16).toString("hex")}`;
          const signature = this.sealSignature(id, checked.type === "webhook" ? checked.signature : undefined, null);
          generated = signature.generated;
          ctx.put("scheduledTask", {
            id,
            projectId,
            title,
            prompt,
            schedule: this.storedSchedule(checked, signature.sealed),
            enabled: input.enabled ?? true,
            boundThreadId: boundThread?.id ?? null,
            providerInstanceId: selection.providerInstanceId,
            model: selection.model,
            effort: selection.effort,
            runtimeMode: selection.runtimeMode,
            interactionMode: selection.interactionMode,
            creatorCeiling: ceiling,
            anchorAt: ctx.now,
            createdBy: caller.kind === "agent" ? "agent" : "user",
            creationSource,
            // Made by work another environment started: its runs never call out through links.
            ...(reachedFrom !== null ? { reachedFrom } : {}),
            createdAt: ctx.now,
            updatedAt: ctx.now,
            authority,
            pause: null,
            ...(profileName !== null ? { profile: { name: profileName, target: input.target ?? null } } : {}),
          });
          return { scheduledTaskId: id };
        },
      }),
    );
    return {
      ...(await this.view(caller, await this.requireTask(caller, outcome.result.scheduledTaskId))),
      created: true,
      replayed: false,
      signatureSecret: generated,
      notes: [...selection.notes],
    };
  }

  private async update(caller: Caller, scheduledTaskId: string, input: ScheduleTaskInput): Promise<ScheduleTaskResult> {
    const task = await this.requireTask(caller, scheduledTaskId);
    const commandId =
      input.clientRequestId === undefined
        ? `cmd:scheduled_task.update:${this.engine.ids.random("req")}`
        : derive.command(caller.requestScope, "schedule_task", `${task.id}:${input.clientRequestId}`);
    const request = {
      scheduledTaskId: task.id,
      title: input.title ?? null,
      prompt: input.prompt ?? null,
      schedule: this.requestSchedule(input.schedule),
      target: input.target ?? null,
      runtimeMode: input.runtimeMode ?? null,
      interactionMode: input.interactionMode ?? null,
      enabled: input.enabled ?? null,
      bindToCurrentThread: input.bindToCurrentThread ?? null,
      ...(input.profile !== undefined ? { profile: input.profile } : {}),
    };
    const replay = await conflictsAsInvalid(() => this.engine.replay(commandId, "scheduled_task.update", request));
    if (replay !== null)
      return {
        ...(await this.view(caller, await this.requireTask(caller, task.id))),
        created: false,
        replayed: true,
        signatureSecret: null,
        notes: [],
      };
    await this.callers.requireLiveRunForChanges(caller, "schedule_task");
    await this.requireTaskWithinCeiling(caller, task);
    if (input.projectId !== undefined && input.projectId !== task.projectId) {
      throw new OrchestratorFailure(
        "invalid_request",
        `Scheduled task ${task.id} belongs to project ${task.projectId}; a task's project cannot change (delete it and schedule a new one there).`,
        { field: "projectId" },
      );
    }
    const nowMs = this.engine.clock.nowMs();
    const prompt = input.prompt !== undefined ? this.checkPrompt(input.prompt) : task.prompt;
    const title = input.title !== undefined ? this.checkTitle(input.title) : task.title;
    const checked = input.schedule !== undefined ? checkSchedule(input.schedule, this.config.scheduling, nowMs) : null;
    // Omitted, the binding stays (even to a thread that is gone: its triggers then say so).
    const boundThreadId =
      input.bindToCurrentThread === undefined
        ? task.boundThreadId
        : input.bindToCurrentThread
          ? (await this.requireBindableThread(caller, task.projectId)).id
          : null;
    const boundThread = boundThreadId === null ? null : await this.engine.reader.get("thread", boundThreadId);
    const rebinds = boundThreadId !== task.boundThreadId;
    // Omitted, the profile stays; null removes it. Its target fields given beside it stay with it.
    const profileName = input.profile === undefined ? (task.profile?.name ?? null) : input.profile;
    const profileChanges = input.profile !== undefined && input.profile !== (task.profile?.name ?? null);
    if (profileName !== null && boundThreadId !== null) throw profileOnBoundTask(profileName);
    const profileTarget = profileName === null ? null : (input.target ?? task.profile?.target ?? null);
    let selection: ResolvedSelection | null = null;
    if (
      input.target !== undefined ||
      input.runtimeMode !== undefined ||
      input.interactionMode !== undefined ||
      profileChanges ||
      rebinds
    ) {
      // Never broader than the creator, nor than the caller changing it.
      const ceiling = narrower(await this.callers.ceiling(caller), task.creatorCeiling);
      const current: InheritedSelection = {
        providerInstanceId: task.providerInstanceId,
        model: task.model,
        effort: task.effort ?? null,
        runtimeMode: task.runtimeMode,
        interactionMode: task.interactionMode,
      };
      // The same shared path as creation: the profile supplies the target and lowers the ceiling.
      const profiled = await this.profiles.apply(
        caller,
        profileName ?? undefined,
        {
          target: profileTarget ?? input.target,
          runtimeMode: input.runtimeMode,
          interactionMode: input.interactionMode,
        },
        ceiling,
        task.projectId,
      );
      const target = profiled.input.target;
      const sameProvider =
        !profileChanges &&
        (target?.providerInstanceId ?? boundThread?.providerInstanceId ?? task.providerInstanceId) ===
          task.providerInstanceId &&
        target?.driverKind === undefined;
      const resolved = await this.resolveSelection({
        target,
        boundThread,
        inherited: current,
        ceiling: profiled.ceiling,
        // Modes not asked for stay as they are, unless the provider or profile changes (then they step down as for new work).
        runtimeMode: input.runtimeMode ?? (sameProvider ? task.runtimeMode : undefined),
        interactionMode: input.interactionMode ?? (sameProvider ? task.interactionMode : undefined),
      });
      const supported = checkProfileSupport(profiled.harness, profileName, resolved);
      selection = {
        ...resolved,
        notes: [...resolved.notes, ...supported.notes, ...workspaceNotes(profiled)],
      };
    }
    const enabled = input.enabled ?? task.enabled;
    const resumes = enabled && !task.enabled;
    // A resume binds the task to the resumer's credential (within the resumer's ceiling, which
    // requireTaskWithinCeiling held it to above): whoever turns it on answers for it.
    const rebound = resumes
      ? {
          authority: await this.requireStandingAuthority(caller, "resuming a scheduled task"),
          creatorCeiling: await this.callers.ceiling(caller),
        }
      : null;
    const schedule = checked ?? task.schedule;
    if (
      resumes &&
      checked === null &&
      schedule.type === "fixed_time" &&
      "at" in schedule &&
      Date.parse(schedule.atInstant) <= nowMs
    ) {
      throw new OrchestratorFailure(
        "invalid_request",
        `Scheduled task ${task.id} ran once at ${schedule.atInstant}, which has passed; give a new schedule.at to run it again.`,
        { field: "enabled" },
      );
    }
    let generated: string | null = null;
    const reachedFrom = await this.origins.of(caller);
    const outcome = await conflictsAsInvalid(() =>
      this.engine.execute({
        commandId,
        operation: "scheduled_task.update",
        request,
        handle: async (ctx) => {
          const current = await ctx.get("scheduledTask", task.id);
          if (current === null)
            throw new OrchestratorFailure("task_not_found", `Scheduled task ${task.id} was deleted meanwhile.`, {
              scheduledTaskId: task.id,
            });
          let stored = current.schedule;
          if (checked !== null) {
            const signature = this.sealSignature(
              task.id,
              checked.type === "webhook" ? checked.signature : undefined,
              current.schedule,
            );
            generated = signature.generated;
            stored = this.storedSchedule(checked, signature.sealed);
          }
          ctx.put("scheduledTask", {
            ...current,
            title,
            prompt,
            schedule: stored,
            enabled,
            boundThreadId,
            ...(selection !== null
              ? {
                  providerInstanceId: selection.providerInstanceId,
                  model: selection.model,
                  effort: selection.effort,
                  runtimeMode: selection.runtimeMode,
                  interactionMode: selection.interactionMode,
                }
              : {}),
            // A new schedule, or a resume, counts its occurrences from now: nothing missed while paused runs.
            anchorAt: checked !== null || resumes ? ctx.now : current.anchorAt,
            ...(rebound !== null ? rebound : {}),
            // Whatever paused it, the pause ends with a resume; a pause on request leaves none.
            pause: enabled ? null : input.enabled === false ? null : (current.pause ?? null),
            // Changed by work another environment started: its runs stay marked as such.
            ...(reachedFrom !== null && current.reachedFrom === undefined ? { reachedFrom } : {}),
            profile: profileName === null ? null : { name: profileName, target: profileTarget },
            updatedAt: ctx.now,
          });
          return { scheduledTaskId: task.id };
        },
      }),
    );
    return {
      ...(await this.view(caller, await this.requireTask(caller, outcome.result.scheduledTaskId))),
      created: false,
      replayed: false,
      signatureSecret: generated,
      notes: [...(selection?.notes ?? [])],
    };
  }

  /** list_scheduled_tasks: one project's tasks (an agent's own by default; a client's every project it may use), newest first. */
  async list(
    caller: Caller,
    input: { projectId?: string | undefined; limit?: number | undefined; offset?: number | undefined },
  ): Promise<{ tasks: ScheduledTaskView[]; total: number; offset: number; limit: number; hasMore: boolean }> {
    let projectId: string | null;
    if (input.projectId !== undefined) projectId = await this.callers.project(caller, input.projectId);
    else projectId = (await this.callers.thread(caller))?.projectId ?? null;
    const limit = Math.min(Math.max(input.limit ?? 50, 1), 100);
    const offset = Math.max(input.offset ?? 0, 0);
    // Without a project, a client sees every project its token may use.
    const scoped = caller.projects === undefined || caller.projects === "*" ? null : [...caller.projects];
    const where =
      projectId !== null
        ? "project_id = ?"
        : scoped === null
          ? "1 = 1"
          : `project_id IN (${scoped.map(() => "?").join(", ") || "NULL"})`;
    const params = projectId !== null ? [projectId] : (scoped ?? []);
    const total = await this.engine.reader.count("scheduledTask", where, params);
    const tasks = [];
    for (const task of await this.engine.reader.select(
      "scheduledTask",
      where,
      params,
      `ORDER BY created_at DESC, id LIMIT ${limit} OFFSET ${offset}`,
    ))
      tasks.push(await this.view(caller, task, 5));
    return { tasks, total, offset, limit, hasMore: offset + tasks.length < total };
  }

  /** One task with its recent triggers, or `task_not_found`. */
  async read(caller: Caller, scheduledTaskId: string): Promise<ScheduledTaskView> {
    return await this.view(caller, await this.requireTask(caller, scheduledTaskId), 20);
  }

  /**
   * delete_scheduled_task: permanent. No trigger fires after it (its webhook URL answers 404);
   * a run it already started goes on, and its triggers stay in the record. The same caller's
   * retry of a deletion answers the same; anyone else then gets `task_not_found` (so a token
   * scoped to other projects learns nothing from a deletion's receipt).
   */
  async delete(
    caller: Caller,
    input: { scheduledTaskId: string },
  ): Promise<{ scheduledTaskId: string; title: string; deleted: true; replayed: boolean }> {
    const commandId = derive.command(caller.requestScope, "delete_scheduled_task", input.scheduledTaskId);
    const request = { scheduledTaskId: input.scheduledTaskId };
    const replay = await this.engine.replay<{ scheduledTaskId: string; title: string }>(
      commandId,
      "scheduled_task.delete",
      request,
    );
    if (replay !== null) return { ...replay.result, deleted: true, replayed: true };
    const task = await this.requireTask(caller, input.scheduledTaskId);
    await this.callers.requireLiveRunForChanges(caller, "delete_scheduled_task");
    await this.requireTaskWithinCeiling(caller, task);
    const outcome = await this.engine.execute({
      commandId,
      operation: "scheduled_task.delete",
      request,
      handle: async (ctx) => {
        const current = await ctx.get("scheduledTask", task.id);
        if (current === null)
          throw new OrchestratorFailure("task_not_found", `Scheduled task ${task.id} does not exist.`, {
            scheduledTaskId: task.id,
          });
        ctx.put("scheduledTask", { ...current, enabled: false, updatedAt: ctx.now, deletedAt: ctx.now });
        return { scheduledTaskId: task.id, title: current.title };
      },
    });
    return { ...outcome.result, deleted: true, replayed: false };
  }
}

/** A bound task's runs post into its thread, which keeps the provider and settings it has. */
function profileOnBoundTask(profile: string): OrchestratorFailure {
  return new OrchestratorFailure(
    "invalid_request",
    `A bound task's runs post into its thread, which keeps its own provider and settings, so it cannot run with profile "${profile}"; use bindToCurrentThread: false (each run then launches a fresh thread with the profile).`,
    { field: "bindToCurrentThread", profile },
  );
}

/** A profile's workspace default does not reach a scheduled run, which starts in the project's folder: said, not dropped silently. */
function workspaceNotes(profiled: ProfiledWork<ProfileShapedInput>): string[] {
  const workspace = profiled.profileWorkspace;
  if (profiled.stamp === null || workspace === undefined || workspace === "shared") return [];
  return [
    `Profile "${profiled.stamp.name}"'s workspace "${workspace}" is not applied: a scheduled task's runs start in the project's folder.`,
  ];
}
