/**
 * The shapes the UI reads from the HTTP API (/api/v1, see its openapi.json): only the fields
 * the UI uses, so an API that gains fields keeps working.
 */

export type Verb = "read" | "operate" | "approve" | "install";

export interface SessionView {
  readonly verbs: readonly Verb[];
  readonly projects: "*" | readonly string[];
  readonly ceiling: { readonly runtimeMode: string; readonly interactionMode: string } | null;
  readonly expiresAt: string | null;
}

export interface Project {
  readonly projectId: string;
  readonly name: string;
  readonly rootPath: string;
  readonly scratch: boolean;
}

export type RunStatus = "queued" | "starting" | "running" | "waiting" | "completed" | "failed" | "cancelled" | "interrupted";

export interface ThreadShell {
  readonly threadId: string;
  readonly title: string;
  readonly projectId: string;
  readonly providerInstanceId: string;
  readonly model: string | null;
  readonly runtimeMode: string;
  readonly interactionMode: string;
  readonly status: RunStatus | "idle";
  readonly latestRunId: string | null;
  readonly queuedRuns: number;
  /** `attached`: the thread of an agent session outside Switchyard (switchyard connect). */
  readonly relationship: "root" | "subagent" | "fork" | "attached";
  /** An attached thread's outside session: the client as it named itself. */
  readonly attached?: { readonly client: { readonly name: string; readonly version: string } | null };
  readonly parentThreadId: string | null;
  readonly delegatedTaskId: string | null;
  readonly snoozed: boolean;
  /** When it was settled (set_thread_settled, seed 002), or null. */
  readonly settledAt?: string | null;
  readonly settled?: boolean;
  /** The reasoning effort it runs with, when the provider has one. */
  readonly effort?: string | null;
  /** Stop was pressed: its queued runs are held until Resume or the next message (absent from older servers). */
  readonly stopped?: boolean;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface ThreadList {
  readonly threads: readonly ThreadShell[];
  readonly total: number;
  readonly hasMore: boolean;
  readonly nextOffset: number | null;
}

export interface RunView {
  readonly runId: string;
  readonly ordinal: number;
  readonly status: RunStatus;
  readonly summary: string | null;
  readonly error: { readonly code?: string; readonly message: string } | null;
}

export interface TimelineItem {
  readonly position: number;
  readonly itemId: string;
  readonly kind: string;
  readonly role: "user" | "assistant" | null;
  readonly status: string;
  readonly text: string;
  readonly truncated: boolean;
  readonly runId: string | null;
  readonly createdAt: string;
  readonly details: Readonly<Record<string, unknown>>;
}

export interface ThreadRead {
  readonly thread: ThreadShell;
  readonly runs: readonly RunView[];
  readonly view: "messages" | "activity";
  readonly items: readonly TimelineItem[];
  readonly earlierPosition: number | null;
  readonly nextPosition: number | null;
  readonly hasMore: boolean;
}

export interface PendingRequest {
  readonly requestId: string;
  readonly threadId: string;
  readonly runId: string;
  readonly kind: "user_input" | "approval";
  readonly status: "pending" | "answered" | "cancelled" | "expired";
  readonly questions: readonly { readonly id: string; readonly question: string }[];
  readonly approval: {
    readonly approvalKind: string;
    readonly title: string;
    readonly detail: string | null;
    readonly options: readonly { readonly id: string; readonly label: string; readonly decision: "accept" | "accept_for_session" | "decline" | "cancel" }[];
  } | null;
  readonly createdAt: string;
}

export interface DelegatedTask {
  readonly taskId: string;
  readonly childThreadId: string;
  readonly status: string;
  readonly workState: string;
  readonly providerInstanceId: string;
  readonly model: string | null;
  readonly summary: string | null;
  readonly latestTerminalSummary: string | null;
  /** The child thread's own usage and its whole tree's (absent from servers before usage records). */
  readonly usage?: { readonly own: UsageTotals; readonly subtree: UsageTotals };
  /** The child's own workspace and its change set; null (or absent) when it shares its parent's. */
  readonly changes?: WorkspaceView | null;
}

/** What became of an apply, discard or keep. */
export interface WorkspaceOutcome {
  readonly action: "apply" | "discard" | "keep";
  readonly outcome: "applied" | "conflict" | "nothing_to_apply" | "failed" | "discarded" | "kept";
  readonly commit: string | null;
  readonly files: readonly string[];
  readonly message: string | null;
}

/** A thread's own worktree or scratch folder (GET /tasks/{taskId} `changes`). */
export interface WorkspaceView {
  readonly strategy: "worktree" | "scratch" | "existing";
  readonly status: "creating" | "ready" | "failed" | "removed";
  readonly path: string;
  readonly branch: string | null;
  readonly hasChanges: boolean | null;
  readonly changes: { readonly commits: number; readonly fileCount: number; readonly insertions: number; readonly deletions: number } | null;
  readonly disposition: "applied" | "discarded" | "kept" | null;
  readonly pending: "apply" | "removal" | null;
  readonly lastOutcome: WorkspaceOutcome | null;
}

/** GET /threads/{threadId}/changes: files, commits and a page of the diff. */
export interface ChangeSet {
  readonly workspace: WorkspaceView;
  readonly files: readonly { readonly path: string; readonly status: string; readonly insertions: number | null; readonly deletions: number | null }[];
  readonly commits: readonly { readonly commit: string; readonly subject: string }[];
  readonly diff: string;
  readonly nextOffset: number | null;
  readonly totalChars: number;
}

/** POST /threads/{threadId}/changes/apply|discard. */
export interface ChangeSetDecision {
  readonly outcome: WorkspaceOutcome | null;
  readonly pending: boolean;
  readonly workspace: WorkspaceView;
}

/** A child a thread delegated to a linked environment (GET /threads/{threadId}/remote-tasks); its thread lives there, not here. */
export interface RemoteTask {
  /** The link's name here: the environment the child runs in. */
  readonly environment: string;
  readonly environmentId: string;
  readonly taskId: string;
  readonly childThreadId: string;
  readonly childThreadLink: string;
  readonly title: string;
  readonly status: "queued" | "running" | "waiting" | "completed" | "failed" | "cancelled" | "interrupted" | "unreachable";
  readonly workState: string | null;
  readonly providerInstanceId: string | null;
  readonly model: string | null;
  readonly summary: string | null;
  readonly createdAt: string;
  readonly finishedAt: string | null;
  readonly problem: { readonly code: string; readonly reason: string; readonly message: string } | null;
}

/** A thread's or tree's usage as the API reports it: unknown is never shown as zero. */
export interface UsageTotals {
  readonly status: "reported" | "partial" | "unknown" | "none";
  readonly tokens: { readonly total: number } | null;
  readonly cost: { readonly usd: number | null; readonly basis: "reported" | "estimated" | "partial" | "unpriced" | "none" };
}

export type SendMode = "auto" | "queue" | "steer" | "restart";

export interface SendResult {
  readonly messageId: string;
  readonly asked: string;
  readonly action: string;
  readonly degraded: boolean;
  readonly reason: string | null;
}

/** A model of a provider's short list (GET /providers). */
export interface ProviderModel {
  readonly id: string;
  /** The reasoning efforts it takes (`target.effort`), weakest first; absent when it takes none. */
  readonly efforts?: readonly string[];
  /** The effort the provider uses when none is given. */
  readonly defaultEffort?: string;
}

export interface ProviderSummary {
  readonly providerInstanceId: string;
  readonly driverKind: string;
  readonly displayName: string;
  readonly canRunChildTasks: boolean;
  readonly constraints: readonly string[];
  readonly models: readonly ProviderModel[];
  readonly omittedModels: number;
  readonly runtimeModes?: readonly string[];
  readonly interactionModes: readonly string[];
  readonly steering: string;
  readonly fork: string;
  readonly interrupt: string;
}

/** POST /threads's answer (create_threads). */
export interface CreatedThreads {
  readonly replayed: boolean;
  readonly threads: readonly { readonly index: number; readonly runId: string | null; readonly notes: readonly string[]; readonly thread: ThreadShell }[];
}

/** POST /projects's answer. */
export interface AddedProject {
  readonly project: Project;
  /** The folder was a project already. */
  readonly existed: boolean;
}

/** doctor's verdict on one thing it looked at. */
export type FindingStatus = "ok" | "info" | "warn" | "fail";

/** One provider instance as GET /providers/doctor describes it. */
export interface ProviderFinding {
  readonly providerInstanceId: string;
  readonly driverKind: string;
  readonly displayName: string;
  readonly status: FindingStatus;
  readonly detail: string;
  readonly canRunWork: boolean;
  /** Its first check is still running. */
  readonly checking: boolean;
  readonly enabled: boolean;
  /** Why it cannot run work, in words that name the fix; null when it can. */
  readonly problem: string | null;
  /** The command that installs its harness, when none was found. */
  readonly install: string | null;
  readonly version: string | null;
  readonly authenticated: boolean | "unknown" | null;
  readonly mcp: "http" | "stdio" | "none";
  readonly warnings: readonly string[];
}

/** GET /providers/doctor: doctor's provider findings. */
export interface ProviderDoctor {
  /** Where provider instances are configured. */
  readonly configFile: string;
  /** Driver kinds the loaded plugins offer. */
  readonly drivers: readonly string[];
  /** Some instance can run work. */
  readonly ready: boolean;
  readonly providers: readonly ProviderFinding[];
}

/** One pushed event (GET /api/v1/events). */
export interface StreamedEvent {
  readonly sequence: number;
  readonly type: string;
  readonly threadId: string;
  readonly projectId: string | null;
  readonly data: Readonly<Record<string, unknown>>;
}

/** A failed call, as the API answers it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** POST /threads/{threadId}/fork's answer. */
export interface ForkResult {
  readonly thread: ThreadShell;
  readonly strategy: "native" | "portable";
  readonly reason: string;
  readonly transferId: string;
  readonly replayed: boolean;
}

/** One agent of GET /plugins/acp-registry/agents (the ACP Registry plugin's search). */
export interface RegistryAgent {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  /** The registry's current version. */
  readonly version: string;
  /** Versions installed on this machine. */
  readonly installedVersions: readonly string[];
  /** The registry's current version is installed and runnable. */
  readonly installed: boolean;
  /** Platforms with a binary build (`linux-x86_64`…). */
  readonly platforms: readonly string[];
  /** Package distributions that run anywhere their runner is (`npx`, `uvx`). */
  readonly packages: readonly string[];
  readonly available: boolean;
  readonly distribution: string | null;
  readonly unavailableReason: "unsupported" | "missing_runner" | null;
}

export interface RegistrySearch {
  readonly query: string;
  readonly agents: readonly RegistryAgent[];
  readonly total: number;
  readonly hiddenUnavailable: number;
  readonly index: { readonly url: string; readonly stale: boolean; readonly fetchedAt: string };
}

/** One installed agent version (GET /plugins/acp-registry/installed). */
export interface InstalledRegistryAgent {
  readonly agentId: string;
  readonly version: string;
  readonly distribution: string;
  readonly platform: string | null;
  readonly integrity: string;
  readonly installedAt: string;
}

export type InstallPhase = "waiting" | "download" | "verify" | "extract" | "install_package" | "done" | "failed";

/** An install job (POST /plugins/acp-registry/install-jobs, GET …/install-jobs/{jobId}). */
export interface InstallJob {
  readonly jobId: string;
  readonly agentId: string;
  readonly version: string;
  readonly phase: InstallPhase;
  readonly receivedBytes: number;
  readonly totalBytes: number | null;
  readonly percent: number | null;
  readonly revision: number;
  readonly alreadyInstalled: boolean | null;
  readonly error: { readonly code: string; readonly message: string } | null;
}
