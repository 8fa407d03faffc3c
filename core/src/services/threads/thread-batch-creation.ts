import { inject, injectable } from "tsyringe";
import { ConfigToken, type SwitchyardConfig } from "../../config/config-schema.js";
import type { CommandContext } from "../../engine/command-context.js";
import { deliverMessage } from "../../engine/message-delivery.js";
import { conflictsAsInvalid, OrchestratorFailure as Failure } from "../../engine/orchestrator-failure.js";
import { EngineToken, type Engine } from "../../engine/ports.js";
import type { ProjectionReader } from "../../engine/run-lifecycle.js";
import { createThread, titleFromMessage } from "../../engine/thread-records.js";
import type { InteractionMode, RuntimeMode } from "../../spec/index.js";
import type {
  BudgetLimits,
  ProjectRecord,
  ReachOrigin,
  Authority,
  ThreadHarness,
  ThreadProfile,
  ThreadRecord,
} from "../../store/records.js";
import { derive } from "../../util/ids.js";
import { creationSourceOf, type Caller } from "../caller.js";
import { CallerContext } from "../caller-context.js";
import { ProviderSelectionService, type ResolvedSelection, type TargetRequest } from "../provider-selection-service.js";
import { rootThreadBudget, routerChildProfileNotes } from "../profiles/profile-application.js";
import { checkProfileSupport } from "../profiles/profile-harness.js";
import { ProfileLibrary } from "../profiles/profile-library.js";
import { ReachOrigins } from "../reach/reach-origin.js";
import { routerChildLineage, routerParent, showChildInParent } from "../router-children/router-child-lineage.js";
import { recordProfileRootBudget } from "../usage/budget-scopes.js";
import { WorkspacePlanner, type WorkspaceChoice, type WorkspacePlan } from "../workspaces/workspace-planner.js";
import { ThreadCommands } from "./thread-commands.js";

/** One thread of a create_threads call. */
export interface ThreadBatchEntry {
  prompt?: string | undefined;
  title?: string | undefined;
  target?: TargetRequest | undefined;
  runtimeMode?: RuntimeMode | "inherit" | undefined;
  interactionMode?: InteractionMode | "inherit" | undefined;
  /** Create it as a router child of this thread (see CreateThreadRequest.parentThreadId). */
  parentThreadId?: string | undefined;
  /** With parentThreadId: deliver each finished turn to the parent (default true). */
  reportBack?: boolean | undefined;
  /** Where the thread works (Switchyard's addition): default the project's, else `shared`. */
  workspace?: WorkspaceChoice | undefined;
  /** The profile the thread runs with (Switchyard's addition, docs/profiles.md); explicit fields narrow it. */
  profile?: string | undefined;
}

/** A create_threads call. */
export interface ThreadBatchInput {
  threads: readonly ThreadBatchEntry[];
  clientRequestId?: string | undefined;
  projectId?: string | undefined;
}

/** What create_threads answers: each thread, the run its prompt started, and what its selection noted. */
export interface ThreadBatchResult {
  threads: { index: number; thread: ThreadRecord; runId: string | null; notes: readonly string[] }[];
  replayed: boolean;
}

/** The receipt of a create_threads call (`runIds` and `notes` are absent in receipts written before they were kept). */
interface CreatedThreads {
  readonly threadIds: string[];
  readonly runIds?: (string | null)[];
  readonly notes?: (readonly string[])[];
}

/** Where a batch is created: its project, and the calling agent's thread when it works there. */
interface BatchPlace {
  readonly project: ProjectRecord;
  readonly callerThread: ThreadRecord | null;
  readonly sameProject: boolean;
}

/** What is decided for every entry before anything is written. */
interface BatchDecisions {
  readonly selections: ResolvedSelection[];
  /** Each entry's profile: the instructions its prompt goes with, its record, its harness settings. */
  readonly profiles: EntryProfile[];
  readonly plans: (WorkspacePlan | null)[];
  readonly authority: Authority | null;
  readonly reachedFrom: ReachOrigin | null;
}

/** What an entry's profile gives its thread. */
interface EntryProfile {
  readonly instructions: string | null;
  readonly stamp: ThreadProfile | null;
  readonly harness: ThreadHarness | null;
  /** The limits its profile puts on the thread's tree (a top-level thread's), or null. */
  readonly budget: BudgetLimits | null;
}

/** A failure of one entry names it: `threads[i]: …`, with `index` in its details. */
function entryFailure(index: number, error: unknown): unknown {
  if (error instanceof Failure)
    return new Failure(error.code, `threads[${index}]: ${error.message}`, { ...error.details, index });
  return error;
}

async function forEntryAsync<T>(index: number, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw entryFailure(index, error);
  }
}

/** The first run of a thread, or null. */
async function firstRun(reader: ProjectionReader, threadId: string): Promise<string | null> {
  return (await reader.select("run", "thread_id = ?", [threadId], "ORDER BY ordinal LIMIT 1"))[0]?.id ?? null;
}

/**
 * create_threads: 1–20 ordinary top-level threads (or router children), each resolving
 * provider, model and modes on its own; they inherit the caller's project, branch and worktree.
 * All or nothing: every entry is checked, selected and given its workspace before one command
 * writes them all.
 */
@injectable()
export class ThreadBatchCreation {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(ConfigToken) private readonly config: SwitchyardConfig,
    private readonly commands: ThreadCommands,
    private readonly callers: CallerContext,
    private readonly selection: ProviderSelectionService,
    private readonly origins: ReachOrigins,
    private readonly workspaces: WorkspacePlanner,
    private readonly profiles: ProfileLibrary,
  ) {}

  async create(caller: Caller, input: ThreadBatchInput): Promise<ThreadBatchResult> {
    if (input.threads.length < 1 || input.threads.length > 20)
      throw new Failure("invalid_request", "create_threads takes between 1 and 20 threads.");
    for (const [index, entry] of input.threads.entries()) {
      if (entry.reportBack !== undefined && entry.parentThreadId === undefined) {
        throw new Failure(
          "invalid_request",
          `threads[${index}]: reportBack needs parentThreadId: only a child thread reports its turns to a parent.`,
          { index, field: "reportBack" },
        );
      }
    }
    const place = await this.placeOf(caller, input);
    const projectId = place.project.id;
    const commandId = derive.command(
      caller.requestScope,
      "create_threads",
      input.clientRequestId ?? this.engine.ids.random("req"),
    );
    const request = { projectId, threads: input.threads };
    const replay = await conflictsAsInvalid(() =>
      this.engine.replay<CreatedThreads>(commandId, "create_threads", request),
    );
    let created: CreatedThreads;
    if (replay !== null) {
      created = replay.result;
    } else {
      await this.authorize(caller, input.threads, projectId);
      const decisions = await this.decide(caller, input.threads, commandId, place);
      created = (
        await this.engine.execute<CreatedThreads>({
          commandId,
          operation: "create_threads",
          request,
          handle: async (ctx) => await this.write(ctx, caller, input.threads, commandId, place, decisions),
        })
      ).result;
    }
    // A replay answers with the runs the call created, never a run queued on those threads since.
    const threads = [];
    for (const [index, threadId] of created.threadIds.entries()) {
      threads.push({
        index,
        thread: await this.commands.getThread(threadId),
        runId:
          created.runIds !== undefined ? (created.runIds[index] ?? null) : await firstRun(this.engine.reader, threadId),
        notes: created.notes?.[index] ?? [],
      });
    }
    return { replayed: replay !== null, threads };
  }

  /** The batch's project: the one named, else the first parent's (children live in their parent's project), else the caller's. */
  private async placeOf(caller: Caller, input: ThreadBatchInput): Promise<BatchPlace> {
    const firstParent = input.threads.find((entry) => entry.parentThreadId !== undefined)?.parentThreadId;
    const projectId =
      input.projectId === undefined && firstParent !== undefined
        ? (await this.commands.getThread(firstParent)).projectId
        : (await this.callers.workProject(caller, input.projectId)).projectId;
    const project = (await this.engine.reader.get("project", projectId))!;
    const callerThread = await this.callers.thread(caller);
    return { project, callerThread, sameProject: callerThread !== null && callerThread.projectId === projectId };
  }

  /**
   * A first call needs the caller's live run; a child's finished turns start turns in its
   * parent, so an agent may attach children only to threads it could message itself.
   */
  private async authorize(caller: Caller, entries: readonly ThreadBatchEntry[], projectId: string): Promise<void> {
    await this.callers.requireLiveRunForChanges(caller, "create_threads");
    for (const [index, entry] of entries.entries()) {
      if (entry.parentThreadId === undefined) continue;
      await forEntryAsync(index, async () =>
        this.callers.requireTargetWithinCeiling(
          caller,
          await routerParent(this.engine.reader, entry.parentThreadId!, projectId, this.config.budgets),
        ),
      );
    }
  }

  /**
   * Each entry's provider selection and workspace, decided (and checked) before anything is
   * created. Changes go back to the parent of a child, else to the calling agent's workspace in
   * this project, else (a client's) to the project's folder.
   */
  private async decide(
    caller: Caller,
    entries: readonly ThreadBatchEntry[],
    commandId: string,
    place: BatchPlace,
  ): Promise<BatchDecisions> {
    const selections: ResolvedSelection[] = [];
    const profiles: EntryProfile[] = [];
    const choices: (WorkspaceChoice | undefined)[] = [];
    for (const [index, entry] of entries.entries()) {
      await forEntryAsync(index, async () => {
        // A profile supplies defaults and lowers the ceiling before anything is resolved from the entry.
        const profiled = await this.profiles.apply(
          caller,
          entry.profile,
          entry,
          await this.callers.ceiling(caller),
          place.project.id,
        );
        if (profiled.instructions !== null && (entry.prompt === undefined || entry.prompt === ""))
          throw new Failure(
            "invalid_request",
            `profile "${entry.profile}" has instructions, which go with the thread's first prompt: give this entry a prompt.`,
            { field: "prompt", profile: entry.profile },
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
        const routerChild = entry.parentThreadId !== undefined;
        selections.push({
          ...selection,
          notes: [...selection.notes, ...supported.notes, ...(routerChild ? routerChildProfileNotes(profiled) : [])],
        });
        profiles.push({
          instructions: profiled.instructions,
          stamp: profiled.stamp,
          harness: supported.harness,
          // A top-level thread's profile budget limits its tree; a router child is in its parent's.
          budget: routerChild ? null : rootThreadBudget(profiled),
        });
        choices.push(profiled.input.workspace);
      });
    }
    const plans: (WorkspacePlan | null)[] = [];
    for (const [index, entry] of entries.entries()) {
      const parent = entry.parentThreadId === undefined ? null : await this.commands.getThread(entry.parentThreadId);
      const from = parent ?? (place.sameProject ? place.callerThread : null);
      const planned = await forEntryAsync(index, () =>
        this.workspaces.plan({
          choice: choices[index],
          threadId: derive.threadFromCommand(commandId, index),
          title: entry.title ?? titleFromMessage(entry.prompt ?? "thread"),
          source: { projectId: place.project.id, cwd: from?.cwd ?? place.project.rootPath, threadId: from?.id ?? null },
          field: `threads[${index}].workspace`,
        }),
      );
      plans.push(planned.plan);
      if (planned.notes.length > 0)
        selections[index] = { ...selections[index]!, notes: [...selections[index]!.notes, ...planned.notes] };
    }
    // Threads a linked environment (or an agent it reached) creates carry where that began.
    return {
      selections,
      profiles,
      plans,
      authority: await this.callers.authority(caller),
      reachedFrom: await this.origins.of(caller),
    };
  }

  /** Writes every thread of the batch, and starts the run of each one with a prompt, in one command. */
  private async write(
    ctx: CommandContext,
    caller: Caller,
    entries: readonly ThreadBatchEntry[],
    commandId: string,
    place: BatchPlace,
    decisions: BatchDecisions,
  ): Promise<CreatedThreads> {
    const { project, callerThread, sameProject } = place;
    const { selections, profiles, plans, authority, reachedFrom } = decisions;
    const ids: string[] = [];
    const runIds: (string | null)[] = [];
    for (const [index, entry] of entries.entries()) {
      const selection = selections[index]!;
      const profile = profiles[index]!;
      const threadId = derive.threadFromCommand(commandId, index);
      const parent = await forEntryAsync(index, async () =>
        entry.parentThreadId === undefined
          ? null
          : await routerParent(ctx, entry.parentThreadId, project.id, this.config.budgets),
      );
      const plan = plans[index] ?? null;
      const workspace =
        plan !== null
          ? await this.workspaces.record(ctx, plan)
          : (parent ??
            (sameProject
              ? callerThread!
              : { cwd: project.rootPath, branch: null, worktreePath: null, workspaceStrategy: "root" as const }));
      const thread = await createThread(
        ctx,
        {
          id: threadId,
          projectId: project.id,
          title: entry.title ?? null,
          providerInstanceId: selection.providerInstanceId,
          model: selection.model,
          effort: selection.effort,
          runtimeMode: selection.runtimeMode,
          interactionMode: selection.interactionMode,
          cwd: workspace.cwd,
          branch: workspace.branch,
          worktreePath: workspace.worktreePath,
          workspaceStrategy: workspace.workspaceStrategy,
          lineage: {
            ...(parent === null
              ? {
                  relationship: "root" as const,
                  parentThreadId: null,
                  parentRunId: null,
                  parentNodeId: null,
                  delegatedTaskId: null,
                }
              : await routerChildLineage(ctx, parent, entry.reportBack ?? true)),
            ...(reachedFrom !== null ? { reachedFrom } : {}),
          },
          createdBy: "agent",
          creationSource: creationSourceOf(caller),
          authority,
          profile: profile.stamp,
          harness: profile.harness,
          profileBudget: profile.budget,
        },
        entry.prompt ?? null,
      );
      if (parent !== null) await showChildInParent(ctx, parent, thread);
      else await recordProfileRootBudget(ctx, thread);
      let runId: string | null = null;
      if (entry.prompt !== undefined && entry.prompt !== "") {
        runId = (
          await deliverMessage(ctx, {
            threadId: thread.id,
            messageId: derive.messageFromCommand(commandId, index),
            text: entry.prompt,
            mode: "auto",
            createdBy: "agent",
            creationSource: creationSourceOf(caller),
            instructions: profile.instructions,
            capabilities: selection.capabilities,
          })
        ).runId;
      }
      ids.push(threadId);
      runIds.push(runId);
    }
    return { threadIds: ids, runIds, notes: selections.map((selection) => selection.notes) };
  }
}
