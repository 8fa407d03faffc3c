import "reflect-metadata";
import type { DependencyContainer } from "tsyringe";
import type { SwitchyardConfig } from "../config/config-schema.js";
import { requireUsableHome } from "../config/home-access.js";
import { resolveHome, type SwitchyardPaths } from "../config/paths.js";
import { McpGrantIssuerToken } from "../engine/mcp-grant-issuer.js";
import {
  type Engine,
  type ProviderSessions,
  type ReconcileReport,
  BootReconcilerToken,
  EngineToken,
  OutboxWorkerToken,
  ProviderSessionManagerToken,
} from "../engine/ports.js";
import { type Logger, LoggerToken } from "../logging/logger.js";
import { type PluginCatalog, HarnessProcessTreesToken, PluginHostToken } from "../plugin-host/ports.js";
import { type ManagedProviders, ProviderRegistryToken } from "../providers/ports.js";
import { EventWaiter } from "../services/event-waiter.js";
import { ProjectService } from "../services/project-service.js";
import { ReachLinkClient } from "../services/reach/link-client.js";
import { RemoteResultsPuller } from "../services/reach/remote-results-puller.js";
import { Scheduler } from "../services/scheduling/scheduler.js";
import { ThreadForkService } from "../services/thread-fork-service.js";
import { ThreadManagementService } from "../services/thread-management-service.js";
import { UsageService } from "../services/usage/usage-service.js";
import { WallClockBudgets } from "../services/usage/wall-clock-budgets.js";
import { WorkspaceJanitor } from "../services/workspaces/workspace-janitor.js";
import { ThreadSearchIndexer } from "../services/thread-search-indexer.js";
import { type EventStore, StoreToken } from "../store/ports.js";
import { environmentId } from "../store/settings.js";
import { isTerminalRunStatus, type RunRecord, type StoredEvent, type ThreadRecord } from "../store/records.js";
import { resolve } from "../util/di-token.js";
import { SerialStage } from "../util/serial-stage.js";
import { createContainer, type ContainerOptions } from "./composition-root.js";
import { acquireHomeLock, type HomeLock } from "./home-lock.js";
import { ServedServicesToken, type ServedServices } from "./served-services.js";

/** Options for {@link SwitchyardHost.create}. */
export interface HostOptions extends ContainerOptions {
  /**
   * The home's lock, when the caller took it before building the host (`serve` does, so a
   * second server fails before loading plugins). The host releases it when it stops.
   */
  readonly homeLock?: HomeLock;
}

/**
 * A running Switchyard: plugins loaded, provider instances created, the engine reconciled and
 * its outbox worker started. Transports (MCP, HTTP, CLI) are built on top of it. A host that
 * is never started (one-shot CLI commands) only reads and writes the store: it takes no lock
 * and touches no session or credential.
 */
export class SwitchyardHost {
  private started = false;
  /** The start under way or done (`start` is idempotent). */
  private starting: Promise<ReconcileReport> | null = null;
  private stopped = false;
  private readonly disposers: (() => void)[] = [];
  reconcileReport: ReconcileReport | null = null;

  private constructor(
    readonly container: DependencyContainer,
    readonly paths: SwitchyardPaths,
    readonly config: SwitchyardConfig,
    private homeLock: HomeLock | null,
  ) {}

  /** Builds the container, loads plugins and creates provider instances. */
  static async create(options: HostOptions = {}): Promise<SwitchyardHost> {
    // One clear line for a home this user cannot write, before the database fails to open deep in the container.
    requireUsableHome(resolveHome(options.home));
    const { container, paths, config } = createContainer(options);
    const host = new SwitchyardHost(container, paths, config, options.homeLock ?? null);
    await host.pluginHost.load();
    await host.providers.initialize(config.providers);
    return host;
  }

  /** The engine runs: reconciled, its worker started. */
  get isStarted(): boolean {
    return this.started;
  }

  get logger(): Logger {
    return resolve(this.container, LoggerToken);
  }
  get store(): EventStore {
    return resolve(this.container, StoreToken);
  }
  get engine(): Engine {
    return resolve(this.container, EngineToken);
  }
  get pluginHost(): PluginCatalog {
    return resolve(this.container, PluginHostToken);
  }
  get providers(): ManagedProviders {
    return resolve(this.container, ProviderRegistryToken);
  }
  get sessions(): ProviderSessions {
    return resolve(this.container, ProviderSessionManagerToken);
  }
  get threads(): ThreadManagementService {
    return this.container.resolve(ThreadManagementService);
  }
  get projects(): ProjectService {
    return this.container.resolve(ProjectService);
  }
  get forks(): ThreadForkService {
    return this.container.resolve(ThreadForkService);
  }
  get waiter(): EventWaiter {
    return this.container.resolve(EventWaiter);
  }
  get usage(): UsageService {
    return this.container.resolve(UsageService);
  }
  get scheduler(): Scheduler {
    return this.container.resolve(Scheduler);
  }
  /** The services the transports call, resolved once. */
  get served(): ServedServices {
    return resolve(this.container, ServedServicesToken);
  }

  /**
   * Takes the home's lock (one engine per home), reconciles what a previous process left, then
   * starts carrying out provider effects, which opens sessions: anything that should reach
   * those sessions (the MCP endpoint) must be wired before this. Throws `HomeLockedError` when
   * another live process holds the home.
   */
  start(): Promise<ReconcileReport> {
    this.starting ??= this.startEngine();
    return this.starting;
  }

  private async startEngine(): Promise<ReconcileReport> {
    try {
      this.homeLock ??= acquireHomeLock(this.paths.home);
    } catch (error) {
      this.starting = null;
      throw error;
    }
    this.started = true;
    // Created on first read otherwise, by whichever caller comes first (a session's credential):
    // that write could meet a command's transaction open, and be refused.
    environmentId(this.store);
    this.reconcileReport = await resolve(this.container, BootReconcilerToken).reconcile();
    // Close a thread's provider session once it has been idle for a while, and at once when the
    // thread was stopped (task_cancel, a budget): a stopped tree leaves no harness process behind,
    // also when it was stopped between turns (a background process its harness left running).
    // The decisions read, so they run in a stage of their own: one commit's events at a time,
    // in commit order, outside the commit's async context (see SerialStage).
    const sessionDecisions = new SerialStage<readonly StoredEvent[]>(
      (events) => this.closeIdleSessions(events),
      (error) => this.logger.error("closing idle provider sessions failed", { error: (error as Error).message }),
    );
    this.disposers.push(
      this.engine.onEvents((events) => {
        if (events.some(mayEndSession)) sessionDecisions.push(events);
      }),
    );
    resolve(this.container, OutboxWorkerToken).start();
    // Wall-clock budgets: deadlines that passed while the host was down stop their trees now.
    const wallClocks = this.container.resolve(WallClockBudgets);
    wallClocks.start();
    this.disposers.push(() => wallClocks.stop());
    // Scheduled tasks resume from the store: what came due while no engine ran fires now, once.
    this.scheduler.start();
    // Workspaces whose retention passed while the host was down go now; later ones as they come due.
    const janitor = this.container.resolve(WorkspaceJanitor);
    janitor.start();
    this.disposers.push(() => janitor.stop());
    // The thread search index: built now if a migration or a rebuild left it to be, then kept
    // close behind the log (a search catches up the rest before it answers).
    const searchIndexer = this.container.resolve(ThreadSearchIndexer);
    searchIndexer.start();
    this.disposers.push(() => searchIndexer.stop());
    // Results of tasks delegated to linked environments that finished while this side was down.
    await this.container.resolve(RemoteResultsPuller).start();
    // Probe providers in the background from now on, so no answer waits on a harness.
    this.providers.startRefreshing(this.config.server.providerStatusRefreshMs);
    return this.reconcileReport;
  }

  /** Closes (or schedules closing) the sessions of threads a commit stopped or left without a live run. */
  private async closeIdleSessions(events: readonly StoredEvent[]): Promise<void> {
    const reader = this.engine.reader;
    const idle = async (threadId: string) =>
      (
        await reader.select(
          "run",
          "thread_id = ? AND status IN ('starting', 'running', 'waiting')",
          [threadId],
          "ORDER BY ordinal DESC LIMIT 1",
        )
      ).length === 0;
    for (const event of events) {
      // A stopping host closes every session itself (and its store may be closed already).
      if (this.stopped) return;
      if (event.entity === "thread") {
        const thread = event.record as ThreadRecord;
        if (thread.stopped && this.sessions.get(thread.id) !== null && (await idle(thread.id)) && !this.stopped)
          void this.sessions.close(thread.id, "stopped");
        continue;
      }
      if (event.entity !== "run") continue;
      const run = event.record as RunRecord;
      if (!isTerminalRunStatus(run.status) || !(await idle(run.threadId))) continue;
      const threadStopped = (await reader.get("thread", run.threadId))?.stopped === true;
      if (this.stopped) return;
      if (threadStopped) void this.sessions.close(run.threadId, "stopped");
      else this.sessions.scheduleIdleClose(run.threadId);
    }
  }

  /** Waits until no provider effect is due or in flight. */
  async drainEffects(): Promise<void> {
    await resolve(this.container, OutboxWorkerToken).drain();
  }

  /**
   * Stops the worker, closes provider sessions (revoking each one's credentials as it closes),
   * disposes adapters, closes the database and gives the home up.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const dispose of this.disposers) dispose();
    if (this.started) await this.scheduler.stop();
    if (this.started) await this.container.resolve(RemoteResultsPuller).stop();
    // Pooled connections to linked environments (their kept-alive sockets) end with the host.
    await this.container.resolve(ReachLinkClient).close();
    if (this.started) await resolve(this.container, OutboxWorkerToken).stop();
    await this.sessions.closeAll("server_shutdown");
    // A session whose opening failed half-way never became live: its credentials go too. Only
    // the engine's owner may sweep; a one-shot command runs beside a live server.
    if (this.started) {
      const issuer = resolve(this.container, McpGrantIssuerToken);
      await this.store.writeAsync(() => issuer.revokeCredentialsOfClosedSessions());
    }
    await this.providers.dispose();
    // Whatever a harness started that outlived its session (the sessions closed above stop
    // their trees; this is the last word), so nothing of this host runs on after it.
    resolve(this.container, HarnessProcessTreesToken).endAll();
    this.store.close();
    this.homeLock?.release();
    this.homeLock = null;
  }
}

/** Whether an event may end a thread's need for its provider session (a stop, a run that ended). */
function mayEndSession(event: StoredEvent): boolean {
  if (event.entity === "thread") return (event.record as ThreadRecord).stopped;
  return event.entity === "run" && isTerminalRunStatus((event.record as RunRecord).status);
}
