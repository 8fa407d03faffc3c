import type {
  ApprovalKind,
  ApprovalRequest,
  InteractionMode,
  ProviderCapabilities,
  RuntimeMode,
  RuntimeRequestResponse,
  UserInputRequest,
} from "../spec/index.js";

/**
 * The durable records Switchyard keeps. Events carry whole records (upserts), so projections
 * can always be rebuilt from the log, and replay never has to re-derive anything.
 */

/** Who authored something. */
export type Actor = "user" | "agent" | "system" | "provider";

/**
 * Through which door it came in. `attached`: a thread standing for an agent session that runs
 * outside Switchyard (the user's own harness, wired in with `switchyard connect`), created when
 * that session first delegated.
 */
export type CreationSource = "cli" | "mcp" | "api" | "scheduler" | "system" | "provider" | "attached";

/** Every status a run can have. */
export type RunStatus =
  "queued" | "starting" | "running" | "waiting" | "completed" | "failed" | "cancelled" | "interrupted";

/** Run statuses that are final. */
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = ["completed", "failed", "cancelled", "interrupted"];

/** Run statuses in which a provider turn is (or is about to be) live. */
export const ACTIVE_RUN_STATUSES: readonly RunStatus[] = ["starting", "running", "waiting"];

export function isTerminalRunStatus(status: RunStatus): boolean {
  return TERMINAL_RUN_STATUSES.includes(status);
}

export function isActiveRunStatus(status: RunStatus): boolean {
  return ACTIVE_RUN_STATUSES.includes(status);
}

/** A project: a folder threads work in. */
export interface ProjectRecord {
  readonly id: string;
  readonly name: string;
  readonly rootPath: string;
  /** True for the environment's Scratch project (threads launched without a project). */
  readonly scratch: boolean;
  readonly createdAt: string;
  readonly updatedAt: string;
  /**
   * Set by `switchyard project remove`: this upsert is the project's tombstone in the event log
   * and removes its projection row. Absent on live projects.
   */
  readonly removedAt?: string;
}

/** How a thread relates to the thread it came from. */
export interface ThreadLineage {
  /**
   * `attached`: the thread of an agent session outside Switchyard (see {@link AttachedSession});
   * a root of its own tree that never runs a turn here.
   */
  readonly relationship: "root" | "subagent" | "fork" | "attached";
  readonly parentThreadId: string | null;
  readonly parentRunId: string | null;
  /** The parent's execution node this thread hangs off (for sub-agents). */
  readonly parentNodeId: string | null;
  readonly delegatedTaskId: string | null;
  /** 0 for a root thread; a sub-agent of a sub-agent has depth 2. */
  readonly depth: number;
  /** The top of the lineage tree (itself for a root thread). */
  readonly rootThreadId: string;
  /**
   * A child an outside client created under a parent thread (`parentThreadId` without a
   * delegated task): each of its finished turns is delivered to the parent as a message,
   * exactly once. Absent on every other thread (and on threads written before the field).
   */
  readonly reportBack?: boolean;
  /**
   * A child whose parent lives in another environment (a delegation across machines): that
   * environment's id and its parent thread, run and root. Absent on every other thread.
   */
  readonly foreignParent?: {
    readonly environmentId: string;
    readonly threadId: string;
    readonly runId: string;
    readonly rootThreadId: string;
  };
  /** An attached thread's outside session. Absent on every other thread. */
  readonly attached?: AttachedSession;
  /**
   * The linked environment whose call created this thread (a delegation, `create_threads` or
   * `t3_thread_launch` under its grant), or whose reached agent did: work a caller on another
   * environment started never calls out through this environment's links. Absent on every other
   * thread (its ancestors and the runs that started it may still carry one).
   */
  readonly reachedFrom?: ReachOrigin;
}

/**
 * The outside agent session an attached thread stands for: the client token it calls with, the
 * MCP session it identified itself with (null for a client that keeps no session: then the token
 * is the session), and what the client said it is at `initialize` (unverified, for display).
 */
export interface AttachedSession {
  readonly credentialId: string;
  readonly mcpSessionId: string | null;
  readonly client: { readonly name: string; readonly version: string } | null;
}

/**
 * Another environment at the start of a chain of calls: the grant it called under here and that
 * grant's `--for` name. For a foreign child written before this record existed, the parent
 * environment's id and no grant.
 */
export interface ReachOrigin {
  readonly environment: string;
  readonly grantId: string | null;
}

/** A pull request linked to a thread. */
export interface LinkedPullRequest {
  readonly url: string;
  readonly number: number | null;
  readonly linkedAt: string;
}

/** A thread: one conversation on one provider instance. */
export interface ThreadRecord {
  readonly id: string;
  readonly projectId: string;
  readonly title: string;
  readonly titleSource: "default" | "user" | "generated";
  /** A title regeneration was asked for and has not finished. */
  readonly titleRegenerationPending: boolean;
  readonly providerInstanceId: string;
  readonly model: string | null;
  /** The reasoning effort new runs use (one of the model's efforts), or null for the provider's default; absent in older records. */
  readonly effort?: string | null;
  readonly runtimeMode: RuntimeMode;
  readonly interactionMode: InteractionMode;
  /** Absolute working directory. */
  readonly cwd: string;
  readonly branch: string | null;
  readonly worktreePath: string | null;
  readonly workspaceStrategy: "root" | "worktree" | "existing_worktree" | "scratch";
  readonly lineage: ThreadLineage;
  readonly createdBy: Actor;
  readonly creationSource: CreationSource;
  readonly linkedPullRequest: LinkedPullRequest | null;
  readonly snoozedUntil: string | null;
  readonly snoozedAt: string | null;
  /**
   * When the thread was settled (its work is done and it leaves the active list until revived),
   * or null. Absent in records written before settling existed, which means not settled.
   */
  readonly settledAt?: string | null;
  readonly deletedAt: string | null;
  /** Stop was pressed: queued runs are held until the next explicit send. */
  readonly stopped: boolean;
  /**
   * Whose authority the thread's work acts under: the credential (or grant) of whoever created
   * it, which a thread created by an agent inherits from the agent's own thread, so every thread
   * of a tree carries its root's. Absent on threads made before it was recorded.
   */
  readonly authority?: Authority | null;
  /** The profile a delegated thread was started with, and the version of its definition; absent otherwise. */
  readonly profile?: ThreadProfile | null;
  /** How its harness sessions run, from its profile (tool rules, harness home); absent for none. */
  readonly harness?: ThreadHarness | null;
  /**
   * The limits its profile sets on its whole tree, kept on a top-level thread started with a
   * profile that has a budget (docs/profiles.md): the root thread's budget is the tighter of
   * these and the config's `budgets.rootThread`, limit by limit. Absent otherwise.
   */
  readonly profileBudget?: BudgetLimits | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** The profile work was started with (docs/profiles.md): its name, where it was defined, and that definition's content hash. */
export interface ThreadProfile {
  readonly name: string;
  readonly source: "config" | "switchyard" | "claude" | "opencode";
  readonly file: string;
  /** `sha256:` and 16 hex digits of the definition's content. */
  readonly version: string;
}

/**
 * What a thread's profile asks of every harness session the thread opens (docs/profiles.md).
 * Environment values are not stored here (records are shown and streamed): only their names;
 * the values are read from the user's config profile when a session opens.
 */
export interface ThreadHarness {
  readonly toolRules: {
    readonly allow: readonly string[];
    readonly deny: readonly string[];
    readonly ask: readonly string[];
    readonly allowOnly: boolean;
  } | null;
  /** An absolute path, or null for the instance's home. */
  readonly harnessHome: string | null;
  /** The names of the environment variables the profile sets (values stay in config.json). */
  readonly environmentNames: readonly string[];
  /** The names of the MCP servers the profile adds (their definitions stay in config.json); absent in older records. */
  readonly mcpServerNames?: readonly string[];
}

/**
 * A credential that work acts for, checked again whenever the work acts on its own (a scheduled
 * task firing): a client token (a script, the HTTP API, an MCP client, the web UI signed in with
 * it), a linked environment's grant, or the owner of the home acting on it directly (the CLI).
 */
export type Authority =
  | { readonly kind: "token"; readonly credentialId: string }
  | { readonly kind: "grant"; readonly grantId: string }
  | { readonly kind: "owner" };

/** An authority as one string (the scheduled-task column `authority_id`): the credential's or grant's id, or `owner`. */
export function authorityId(authority: Authority): string {
  return authority.kind === "token" ? authority.credentialId : authority.kind === "grant" ? authority.grantId : "owner";
}

/** Why a run exists. */
export type RunKind = "work" | "notification";

/** A run: the work one user message asked for, across one or more attempts. */
export interface RunRecord {
  readonly id: string;
  readonly threadId: string;
  /** 1, 2, 3… within the thread. */
  readonly ordinal: number;
  readonly status: RunStatus;
  readonly kind: RunKind;
  /** The user message that started it. */
  readonly messageId: string;
  readonly text: string;
  /** Instructions delivered with the first attempt (role, orchestration, portable context). */
  readonly instructions: string | null;
  readonly model: string | null;
  /** The reasoning effort this run's turns ask for, or null for the provider's default; absent in older records. */
  readonly effort?: string | null;
  readonly runtimeMode: RuntimeMode;
  readonly interactionMode: InteractionMode;
  readonly createdBy: Actor;
  readonly creationSource: CreationSource;
  /**
   * The delegated task this run is known work of: the task's original run, and the follow-up
   * runs the system started in the child thread for that work (nested results, questions)
   * before the task was finalized.
   */
  readonly delegatedTaskId: string | null;
  /** Queue order among queued runs: lower runs first. */
  readonly queueOrder: number;
  /** Held queued runs wait for Resume or the next explicit send (set by Stop). */
  readonly held: boolean;
  readonly currentAttemptId: string | null;
  readonly attemptCount: number;
  /** Latest assistant content of the run. */
  readonly summary: string | null;
  readonly error: { readonly code?: string; readonly message: string } | null;
  /** Why it ended, when not plainly completed (`interrupted_by_user`, `server_restart`…). */
  readonly terminalReason: string | null;
  /** An interrupt was asked for and has not landed yet. */
  readonly interruptRequested: boolean;
  /** A runtime request that notified a parent, whose queued notice this run is. */
  readonly notifiesRequestId: string | null;
  /**
   * The delegated task whose result this notification run delivers to its parent thread: a local
   * task's id, or the key of a task in a linked environment (absent on runs written before the
   * field existed).
   */
  readonly deliversResultOf?: string | null;
  /**
   * An explicit interrupt or Stop (a person, an agent, task_cancel) asked this run to end, so no
   * automatic catch-up turn follows it (absent on runs written before the field existed).
   */
  readonly interruptedOnRequest?: boolean;
  /** The scheduled task whose trigger started this run (absent on runs no schedule started). */
  readonly scheduledTaskId?: string | null;
  /**
   * The linked environment whose message started or steered this run, directly or through an
   * agent it reached (`ThreadLineage.reachedFrom`); absent on every other run.
   */
  readonly reachedFrom?: ReachOrigin;
  /** The trigger of that task that started it. */
  readonly scheduledTriggerId?: string | null;
  /**
   * How the provider session this run's latest attempt opened went on with the thread's
   * conversation (the shared policy's decision: resumed, or handed over as portable context and
   * why); null or absent when the run used a session that was already open.
   */
  readonly sessionContinuation?: SessionContinuationRecord | null;
  readonly createdAt: string;
  readonly startedAt: string | null;
  readonly endedAt: string | null;
}

/**
 * How a thread's conversation went on in a provider session that opened, and why (the shared
 * policy's `decideSessionContinuation`).
 */
export interface SessionContinuationRecord {
  /** `resume` when the thread had a conversation to go on with, else `new`. */
  readonly asked: "resume" | "new";
  /**
   * `resume`: the provider reopened its own conversation. `handoff`: a new provider conversation
   * whose first turn got the thread's history as portable context (what forks to another
   * provider get). `new`: a new conversation with nothing to carry over.
   */
  readonly action: "resume" | "handoff" | "new";
  /** Less than was asked: the conversation travels as a summary, not natively. */
  readonly degraded: boolean;
  readonly reason: string;
}

/** Attempt statuses. */
export type AttemptStatus = "pending" | "starting" | "running" | "completed" | "failed" | "interrupted" | "cancelled";

/** One provider turn of a run. A run restarted with new input has several. */
export interface AttemptRecord {
  /** Also the `turnId` the adapter sees. */
  readonly id: string;
  readonly runId: string;
  readonly threadId: string;
  readonly ordinal: number;
  readonly status: AttemptStatus;
  readonly providerSessionId: string | null;
  readonly providerTurnId: string | null;
  /** The text sent with this attempt. */
  readonly text: string;
  readonly instructions: string | null;
  readonly restartOfAttemptId: string | null;
  /** Why it was created (`initial`, `steer_restart`, `continue_after_restart`). */
  readonly reason: "initial" | "steer_restart" | "continue_after_restart";
  readonly createdAt: string;
  readonly startedAt: string | null;
  readonly endedAt: string | null;
  readonly error: { readonly code?: string; readonly message: string } | null;
}

/** Kinds of timeline items. */
export type TimelineItemKind =
  | "user_message"
  | "assistant_message"
  | "reasoning"
  | "tool_call"
  | "runtime_request"
  | "subagent"
  | "proposed_plan"
  | "handoff"
  | "notice";

/** One entry in a thread's visible timeline. */
export interface TimelineItemRecord {
  readonly id: string;
  readonly threadId: string;
  readonly runId: string | null;
  readonly attemptId: string | null;
  /** 1, 2, 3… within the thread, in order of creation. */
  readonly position: number;
  readonly kind: TimelineItemKind;
  readonly status: "in_progress" | "completed" | "failed" | "declined" | "cancelled" | "pending";
  readonly text: string;
  readonly data: Readonly<Record<string, unknown>>;
  readonly createdBy: Actor;
  readonly creationSource: CreationSource;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** A provider session record. */
export interface ProviderSessionRecord {
  readonly id: string;
  readonly threadId: string;
  readonly providerInstanceId: string;
  readonly status: "opening" | "open" | "closed";
  readonly resumeCursor: string | null;
  readonly capabilities: ProviderCapabilities;
  readonly openedAt: string;
  readonly closedAt: string | null;
  readonly closeReason: string | null;
  /**
   * Set on a session that started a new conversation because reopening the thread's earlier one
   * failed (its provider state missing or corrupt after a crash): why. Until this session leaves
   * a cursor of its own, later sessions start new conversations with the thread's history too,
   * never trying the broken cursor again. Absent in older records.
   */
  readonly resumeFailure?: string | null;
}

/** A runtime request (approval or question) a provider raised. */
/** The provider-native sub-agent a runtime request came from. */
export interface RuntimeRequestNativeOrigin {
  readonly nativeId: string;
  /** Its `subagent` timeline item (may not exist when the harness asked before reporting it). */
  readonly itemId: string;
  readonly title: string | null;
}

export interface RuntimeRequestRecord {
  readonly id: string;
  readonly threadId: string;
  readonly runId: string;
  readonly attemptId: string;
  readonly providerSessionId: string;
  /** The adapter's own request id. */
  readonly nativeRequestId: string;
  readonly kind: "approval" | "user_input";
  readonly approvalKind: ApprovalKind | null;
  readonly blocking: boolean;
  readonly status: "pending" | "answered" | "cancelled" | "expired";
  readonly request: ApprovalRequest | UserInputRequest;
  readonly response: RuntimeRequestResponse | null;
  /** The timeline item showing it. */
  readonly itemId: string;
  /**
   * The provider-native sub-agent that asked through its parent's session, when one did (the
   * adapter's `subagentNativeId`): its id, its `subagent` item and title. Absent on older records.
   */
  readonly nativeSubagent?: RuntimeRequestNativeOrigin | null;
  /** How a sub-agent's question reached its parent: through its wait, steered, or a queued notice. */
  readonly parentNotice: {
    readonly mode: "wait" | "steered" | "queued" | "started";
    readonly runId: string | null;
  } | null;
  readonly createdAt: string;
  readonly resolvedAt: string | null;
}

/** Context moving between threads. */
export interface ContextTransferRecord {
  readonly id: string;
  /** Spawn and result of a delegated task, a fork, or a thread's history handed to a new provider session. */
  readonly kind: "subagent_spawn" | "subagent_result" | "fork" | "session_handoff";
  readonly sourceThreadId: string;
  readonly targetThreadId: string;
  /** How it travels: only the prompt, natively, as portable text, or as a result. */
  readonly strategy: "prompt_only" | "native" | "portable" | "result";
  readonly status: "pending" | "consumed";
  readonly content: string;
  readonly delegatedTaskId: string | null;
  readonly createdAt: string;
  readonly consumedAt: string | null;
}

/** Roles a delegated task can take (seed 000). */
export type DelegatedTaskRole = "implementation" | "research" | "review" | "design" | "test" | "general";

/** A delegated task: an orchestrator-owned child thread and its result. */
export interface DelegatedTaskRecord {
  readonly id: string;
  readonly parentThreadId: string;
  readonly parentRunId: string;
  readonly parentNodeId: string;
  /** The parent's timeline item showing the sub-agent. */
  readonly parentItemId: string;
  readonly childThreadId: string;
  readonly childRunId: string;
  readonly childNodeId: string;
  readonly providerInstanceId: string;
  readonly model: string | null;
  readonly role: DelegatedTaskRole | null;
  readonly title: string;
  readonly task: string;
  /**
   * The original child run's status when the task was created; once finalized, the published
   * status (the final work turn's). Views derive the live status from the task's runs.
   */
  readonly status: RunStatus;
  /** The published result: the latest assistant content of the final work turn (or its error). */
  readonly summary: string | null;
  readonly spawnContextTransferId: string;
  readonly resultContextTransferId: string | null;
  /** The run whose content was published: the final work turn (absent before finalization and on older records). */
  readonly resultRunId?: string | null;
  readonly finalizedAt: string | null;
  readonly cancelRequestedAt: string | null;
  readonly cancelReason: string | null;
  readonly rootThreadId: string;
  readonly depth: number;
  /** The caller scope (the parent thread, or a client token) whose clientRequestId created it. */
  readonly requestScope: string;
  /**
   * Delivery of the result to the parent: `pending` until the parent reads it (a wait or a
   * terminal task_status acknowledges it), a wake message delivers it, or cancellation disposes it.
   */
  readonly delivery: "pending" | "delivered" | "acknowledged" | "disposed";
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** An execution node: the root of a run, or a sub-agent hanging off one. */
export interface NodeRecord {
  readonly id: string;
  readonly threadId: string;
  readonly runId: string | null;
  readonly kind: "run_root" | "subagent";
  readonly parentNodeId: string | null;
  readonly status: RunStatus;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** The token figures of a turn as its provider reported them; null: not reported. */
export interface UsageFigures {
  readonly inputTokens: number | null;
  readonly outputTokens: number | null;
  readonly cacheReadInputTokens: number | null;
  readonly cacheCreationInputTokens: number | null;
  /** Of the output tokens, those spent on reasoning (a breakdown, already in `outputTokens`). */
  readonly reasoningOutputTokens: number | null;
}

/**
 * Where a turn's cost comes from: the provider's own figure, the price table (an estimate), or
 * neither (the tokens are known, no price is).
 */
export type CostBasis = "reported" | "estimated" | "unpriced";

/**
 * What one provider turn (an attempt) used, written when the turn ended with a usage report. A
 * turn that reached its provider and ended without one has no record: its usage is unknown,
 * never zero.
 */
export interface TurnUsageRecord extends UsageFigures {
  /** The attempt's id (one record per provider turn). */
  readonly id: string;
  readonly runId: string;
  readonly threadId: string;
  readonly rootThreadId: string;
  readonly providerInstanceId: string;
  /** The model the turn ran (the run's, else the thread's; null: the provider's default). */
  readonly model: string | null;
  /** Input, cache read, cache write and output tokens: what a token budget counts. */
  readonly totalTokens: number;
  /** The cost in US dollars; null when it could not be priced. */
  readonly costUsd: number | null;
  readonly costBasis: CostBasis;
  /** For an estimate: the price table entries used, and the date their prices were taken. */
  readonly pricing: {
    readonly entries: readonly {
      readonly model: string;
      readonly source: "config" | "default";
      readonly asOf: string | null;
    }[];
  } | null;
  /** The same figures per model, when the provider reported them so. */
  readonly byModel: Readonly<Record<string, UsageFigures & { readonly costUsd: number | null }>> | null;
  readonly createdAt: string;
}

/** A limit a budget can set. */
export type BudgetLimitName = "tokens" | "costUsd" | "wallClockMs";

/** The limits of a budget; null: no limit. */
export interface BudgetLimits {
  readonly tokens: number | null;
  readonly costUsd: number | null;
  readonly wallClockMs: number | null;
}

/** Why a budget stopped its tree. */
export interface BudgetExceeded {
  readonly limit: BudgetLimitName;
  /** What the tree had used when it was stopped (tokens, dollars or milliseconds). */
  readonly used: number;
  readonly allowed: number;
  readonly at: string;
}

/**
 * A budget on a delegation tree: a delegated task's (its child thread and everything below it)
 * or a root thread's (the whole tree). A task's limits are fixed when it is created (its
 * `delegate_task` budget, else the config's defaults); a root thread's come from the config and
 * the profile it was started with (its thread's `profileBudget`). A root's record is written
 * with the thread when that profile sets a budget (its limits), else when the budget stops the
 * tree; a stop rewrites it with the limits in force.
 */
export interface BudgetRecord {
  /** `budget:task:<taskId>` or `budget:root:<threadId>`. */
  readonly id: string;
  readonly scope: "delegated_task" | "root_thread";
  /** The thread at the top of what the budget covers: the task's child thread, or the root thread. */
  readonly threadId: string;
  readonly taskId: string | null;
  readonly rootThreadId: string;
  readonly limits: BudgetLimits;
  /**
   * Where the limits came from: the caller's `delegate_task` budget (with a profile's, merged
   * into it), the config, or both; for a root thread, its profile's, the config's, or both.
   */
  readonly origin: "delegate_task" | "config" | "delegate_task_and_config" | "profile" | "profile_and_config";
  /** Set once the budget was reached and its tree stopped. */
  readonly exceeded: BudgetExceeded | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** A filter a webhook request must pass to start a run: a header, or a JSON value in the body, equal to a value. */
export type WebhookFilter =
  | { readonly header: string; readonly equals: string }
  | { readonly jsonPath: string; readonly equals: string | number | boolean | null };

/** How a webhook task recognises a delivery it has had before. */
export interface WebhookDedupe {
  /** A header carrying the sender's delivery id (e.g. `X-GitHub-Delivery`); falls back to the body hash when absent. */
  readonly deliveryIdHeader: string | null;
  /** Without a delivery id header (or when a request lacks it), the SHA-256 of the body is the key. */
  readonly bodyHash: boolean;
  /** A key seen within this window is a duplicate. */
  readonly windowMs: number;
}

/**
 * A webhook signature secret at rest: AES-256-GCM under the home's scheduling key file, bound
 * to its task (the task id is the additional data), so the event log never holds it in clear.
 */
export interface SealedSecret {
  readonly v: 1;
  /** The first bytes of the key's SHA-256, so a replaced key file is recognised. */
  readonly keyId: string;
  readonly iv: string;
  readonly tag: string;
  readonly ciphertext: string;
}

/** What triggers a scheduled task. */
export type ScheduleSpec =
  | { readonly type: "interval"; readonly everyMs: number }
  | { readonly type: "fixed_time"; readonly cron: string }
  | {
      readonly type: "fixed_time";
      /** The one-shot time as given (local to the server's time zone unless it has an offset). */
      readonly at: string;
      /** The instant it names, as resolved when it was set. */
      readonly atInstant: string;
    }
  | {
      readonly type: "webhook";
      readonly signature: SealedSecret | null;
      readonly filters: readonly WebhookFilter[];
      readonly dedupe: WebhookDedupe | null;
    };

/** A scheduled task (seed 000 `schedule_task`): a prompt that runs on a trigger, even when no turn is active. */
export interface ScheduledTaskRecord {
  readonly id: string;
  readonly projectId: string;
  readonly title: string;
  readonly prompt: string;
  readonly schedule: ScheduleSpec;
  /** `enabled: false` pauses it: no trigger fires and webhook requests are skipped. */
  readonly enabled: boolean;
  /** Bound runs post into this thread; null: each run launches a fresh thread in the project. */
  readonly boundThreadId: string | null;
  readonly providerInstanceId: string;
  readonly model: string | null;
  /** The reasoning effort its runs use; null or omitted (tasks made before efforts): the provider's default. */
  readonly effort?: string | null;
  readonly runtimeMode: RuntimeMode;
  readonly interactionMode: InteractionMode;
  /** The creator's privilege ceiling: later updates never make the task broader than this. */
  readonly creatorCeiling: { readonly runtimeMode: RuntimeMode; readonly interactionMode: InteractionMode };
  /** Set when an agent reached from another environment made it: every run it starts carries it. */
  readonly reachedFrom?: ReachOrigin;
  /**
   * Occurrences of an interval or fixed-time schedule count from here: when the schedule was set
   * or the task last resumed (intervals are `anchorAt + k × everyMs`).
   */
  readonly anchorAt: string;
  readonly createdBy: Actor;
  readonly creationSource: CreationSource;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** Set by `delete_scheduled_task`: this upsert is the tombstone; its projection row is removed. */
  readonly deletedAt?: string;
  /**
   * The credential its runs start under (whoever created it, or last resumed it): it fires only
   * while that credential stands. Absent on tasks made before it was recorded: such a task is
   * paused (`authority_unknown`) until someone who may resumes it.
   */
  readonly authority?: Authority | null;
  /** Why Switchyard paused it (with `enabled: false`); null or absent when running or paused on request. */
  readonly pause?: SchedulePause | null;
  /**
   * The profile its runs start with, by name (docs/profiles.md): resolved again at every fire,
   * so an edited profile counts from the next run on. Null or absent: no profile.
   */
  readonly profile?: ScheduledTaskProfile | null;
}

/** A scheduled task's profile: its name and the target fields its maker gave beside it (they narrow the profile at every fire). */
export interface ScheduledTaskProfile {
  readonly name: string;
  readonly target: {
    readonly providerInstanceId?: string;
    readonly driverKind?: string;
    readonly model?: string;
    readonly effort?: string;
  } | null;
}

/** Why Switchyard paused a scheduled task by itself. */
export type SchedulePauseReason = "credential_revoked" | "credential_expired" | "authority_unknown";

/** A pause Switchyard made, not a person: its reason, in words, and when. */
export interface SchedulePause {
  readonly reason: SchedulePauseReason;
  readonly detail: string;
  readonly at: string;
}

/** What became of a trigger. */
export type ScheduledTriggerOutcome = "started" | "skipped" | "failed";

/** Why a trigger started no run. */
export type ScheduledTriggerReason =
  | "overlap"
  | "missed"
  | "paused"
  | "filtered"
  | "duplicate"
  | "thread_stopped"
  | "thread_not_found"
  | "project_not_found"
  | "provider_unavailable"
  /** The task's profile no longer exists. */
  | "profile_not_found"
  /** The task's profile, as it is now, would be refused for the task (see the detail). */
  | "profile_refused"
  /** The task runs under a grant that does not list its profile. */
  | "profile_not_granted"
  | SchedulePauseReason;

/**
 * One firing of a scheduled task: an interval or fixed-time occurrence, or a webhook request that
 * passed its signature check. Its id derives from the task and the occurrence (or the signed
 * request), so no trigger is recorded, or runs, twice.
 */
export interface ScheduledTriggerRecord {
  readonly id: string;
  readonly scheduledTaskId: string;
  readonly kind: "interval" | "fixed_time" | "webhook";
  /** The occurrence it fired for (interval and fixed-time triggers). */
  readonly scheduledFor: string | null;
  /** True when it ran late because the server was down or asleep at the occurrence. */
  readonly catchUp: boolean;
  /** Earlier occurrences that were missed meanwhile and coalesced into this one. */
  readonly coalesced: number;
  readonly outcome: ScheduledTriggerOutcome;
  readonly reason: ScheduledTriggerReason | null;
  /** What a person reads about a skip or failure. */
  readonly detail: string | null;
  readonly runId: string | null;
  readonly threadId: string | null;
  /** Webhook requests: the dedupe key (delivery id or body hash), when the task dedupes. */
  readonly dedupeKey: string | null;
  /** Webhook requests: the SHA-256 of their signature, so a replay within the window is refused. */
  readonly signatureDigest: string | null;
  /** Webhook requests: what arrived (never the body itself, which is in the run's prompt). */
  readonly request: {
    readonly contentType: string | null;
    readonly bytes: number;
    readonly deliveryId: string | null;
  } | null;
  readonly createdAt: string;
}

/**
 * How a thread's work is placed on disk (Switchyard's addition to seed 000): `shared`, the
 * parent's (or project's) workspace; `worktree`, a new git worktree on a new branch; `scratch`,
 * an empty folder; `existing`, a git worktree that already exists.
 */
export type WorkspaceStrategy = "shared" | "worktree" | "scratch" | "existing";

/** What a child's workspace holds compared with its base, as last recorded (end of a run, a read, an apply). */
export interface ChangeSummary {
  /** The workspace's commit when it was recorded. */
  readonly head: string | null;
  /** Commits since the base. */
  readonly commits: number;
  /** Files that differ from the base (at most 200 are listed; `fileCount` counts all). */
  readonly files: readonly string[];
  readonly fileCount: number;
  readonly insertions: number;
  readonly deletions: number;
  readonly recordedAt: string;
}

/** What became of one apply, discard or keep. */
export interface WorkspaceOutcome {
  readonly action: "apply" | "discard" | "keep";
  /**
   * `applied`; `conflict` (nothing was changed: `files` are the conflicting ones);
   * `nothing_to_apply` (the target already has every change); `failed` (`message`);
   * `discarded`; `kept`.
   */
  readonly outcome: "applied" | "conflict" | "nothing_to_apply" | "failed" | "discarded" | "kept";
  readonly method: "merge" | "cherry-pick" | null;
  /** The target's new commit (applied). */
  readonly commit: string | null;
  readonly files: readonly string[];
  readonly message: string | null;
  /** The request it answers (its command id). */
  readonly requestId: string;
  readonly at: string;
}

/**
 * A thread's own workspace (a worktree, a scratch folder or a named existing worktree): where
 * it is, what it started from, where its changes go back to, and what its parent decided.
 * Threads that share a workspace have none.
 */
export interface WorkspaceRecord {
  /** `workspace:<threadId>`. */
  readonly id: string;
  readonly threadId: string;
  readonly projectId: string;
  readonly strategy: Exclude<WorkspaceStrategy, "shared">;
  /** The folder (absolute): a worktree's top. */
  readonly path: string;
  /**
   * Where in it the thread works: the parent's folder's place in its repository (`packages/app/`
   * for a project that is a folder of a larger repository), else empty. Absent: empty.
   */
  readonly subfolder?: string;
  /** The git common directory the worktree belongs to; null for a scratch folder. */
  readonly repository: string | null;
  readonly branch: string | null;
  /** The base as asked (`baseRef`), or null: the parent's commit at the time. */
  readonly baseRef: string | null;
  /** The commit the change set is measured from. */
  readonly baseCommit: string | null;
  /** Created by Switchyard, so Switchyard may remove it (never true for `existing`). */
  readonly owned: boolean;
  /** Where its changes go back to: the parent's thread and folder (a client's: the project root, no thread). */
  readonly target: { readonly threadId: string | null; readonly path: string };
  /** `creating` until the folder exists; `failed` when it could not be made (`error`); `removed` once gone. */
  readonly status: "creating" | "ready" | "failed" | "removed";
  /** What the parent decided: applied (maybe again later), discarded, or kept for a pull request. */
  readonly disposition: "applied" | "discarded" | "kept" | null;
  readonly changes: ChangeSummary | null;
  /** An apply asked for and not finished (its command id and method). */
  readonly pendingApply: {
    readonly requestId: string;
    readonly method: "merge" | "cherry-pick";
    readonly requestedAt: string;
  } | null;
  /**
   * An apply whose result is known and that is changing the target now: the target's commit
   * before, the commit it moves to, and the paths that change. Recorded before the target's
   * tree is touched, so a crash is finished from here, never started over.
   */
  readonly applying: {
    readonly requestId: string;
    /** The workspace's commit being applied. */
    readonly head: string;
    readonly from: string;
    readonly to: string;
    readonly paths: readonly string[];
    readonly at: string;
  } | null;
  /** The workspace's commit the last apply brought over (an apply with nothing newer has nothing to do). */
  readonly appliedHead: string | null;
  /** A removal asked for (discard, retention, prune) and not finished. */
  readonly pendingRemoval: {
    readonly keepBranch: boolean;
    readonly reason: string;
    readonly requestedAt: string;
  } | null;
  /** What became of each apply, discard and keep, oldest first (the newest 20). */
  readonly outcomes: readonly WorkspaceOutcome[];
  readonly error: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly removedAt: string | null;
}

/** Every record kind, by entity name. */
export interface EntityRecords {
  project: ProjectRecord;
  thread: ThreadRecord;
  run: RunRecord;
  attempt: AttemptRecord;
  item: TimelineItemRecord;
  providerSession: ProviderSessionRecord;
  runtimeRequest: RuntimeRequestRecord;
  contextTransfer: ContextTransferRecord;
  delegatedTask: DelegatedTaskRecord;
  node: NodeRecord;
  turnUsage: TurnUsageRecord;
  budget: BudgetRecord;
  scheduledTask: ScheduledTaskRecord;
  scheduledTrigger: ScheduledTriggerRecord;
  workspace: WorkspaceRecord;
}

/** An entity name. */
export type EntityName = keyof EntityRecords;

/** A stored event: a record upsert, in log order. */
export interface StoredEvent<E extends EntityName = EntityName> {
  readonly sequence: number;
  readonly type: `${E}.upserted`;
  readonly entity: E;
  readonly threadId: string | null;
  readonly commandId: string | null;
  readonly record: EntityRecords[E];
  readonly createdAt: string;
}
