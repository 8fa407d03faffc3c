import "reflect-metadata";
import { dirname } from "node:path";
import { container as rootContainer, instanceCachingFactory, Lifecycle, type DependencyContainer } from "tsyringe";
import { loadConfig, parseConfig } from "../config/config-loader.js";
import { type SwitchyardConfig, ConfigToken } from "../config/config-schema.js";
import { pathsFor, resolveHome, type SwitchyardPaths, PathsToken } from "../config/paths.js";
import { securePrivateHome } from "../config/private-home.js";
import { BootReconciler } from "../engine/boot-reconciler.js";
import { EffectExecutor } from "../engine/effect-executor.js";
import { type EffectHandler, EffectHandlersToken } from "../engine/effect-handler.js";
import { type EngineReaction, EngineReactionsToken } from "../engine/engine-reaction.js";
import { TransactionalEngine } from "../engine/engine.js";
import { LiveOutput } from "../engine/live-output.js";
import { McpGrantIssuerToken } from "../engine/mcp-grant-issuer.js";
import { OutboxWorker } from "../engine/outbox-worker.js";
import {
  BootReconcilerToken,
  EffectExecutorToken,
  EngineToken,
  LiveOutputToken,
  OutboxWorkerToken,
  ProviderEventIngestorToken,
  ProviderSessionManagerToken,
} from "../engine/ports.js";
import { ProviderCatalogToken } from "../engine/provider-catalog.js";
import { ProviderEventIngestor } from "../engine/provider-event-ingestor.js";
import { ProviderSessionManager } from "../engine/provider-session-manager.js";
import { StopFreezesHarnessTools } from "../engine/stop-freezes-harness-tools.js";
import { createLogger, type Logger, LoggerToken } from "../logging/logger.js";
import { defaultBuiltinPlugins } from "../plugin-host/builtin-plugins.js";
import { HarnessProcessTrees } from "../plugin-host/harness-process-trees.js";
import { PluginHost } from "../plugin-host/plugin-host.js";
import { HarnessProcessTreesToken, PluginHostToken, ProcessRunnerToken } from "../plugin-host/ports.js";
import { HarnessProcessRegistryToken, ProcessRunner } from "../plugin-host/process-runner.js";
import * as policy from "../policy/index.js";
import { PolicyToken } from "../policy/policy-token.js";
import { ProviderRegistryToken } from "../providers/ports.js";
import { ProviderRegistry } from "../providers/provider-registry.js";
import { CallerContext } from "../services/caller-context.js";
import { CapabilitiesService } from "../services/capabilities-service.js";
import { McpSessionRegistry } from "../services/credentials/mcp-session-registry.js";
import { DelegatedTaskService } from "../services/delegation/delegated-task-service.js";
import { DelegationSaga } from "../services/delegation/delegation-saga.js";
import { TaskCreation } from "../services/delegation/task-creation.js";
import { EventWaiter } from "../services/event-waiter.js";
import { EventStreamService } from "../services/events/event-stream-service.js";
import { PublicEventFeed } from "../services/events/public-event-feed.js";
import { LiveWaits } from "../services/live-waits.js";
import { ThreadLinks } from "../services/thread-links.js";
import { PendingRequestService } from "../services/pending-request-service.js";
import { ProjectService } from "../services/project-service.js";
import { DriverKindsToken } from "../services/provider-doctor-service.js";
import { ProviderSelectionService } from "../services/provider-selection-service.js";
import { ForeignTaskOutbox, ForeignTasks } from "../services/reach/foreign-tasks.js";
import { ReachLinkCalls } from "../services/reach/link-calls.js";
import { ReachLinkClient } from "../services/reach/link-client.js";
import { ReachForwarder } from "../services/reach/reach-forwarder.js";
import { RemoteResultsPuller } from "../services/reach/remote-results-puller.js";
import { RemoteTaskResults } from "../services/reach/remote-task-results.js";
import { RemoteTasks } from "../services/reach/remote-tasks.js";
import { RouterChildResults } from "../services/router-children/router-child-results.js";
import { ScheduledTaskService } from "../services/scheduling/scheduled-task-service.js";
import { ScheduledTriggerService } from "../services/scheduling/scheduled-trigger-service.js";
import { Scheduler } from "../services/scheduling/scheduler.js";
import { WebhookSecretBox } from "../services/scheduling/webhook-secret-box.js";
import { ThreadForkService } from "../services/thread-fork-service.js";
import { ThreadLaunchService } from "../services/thread-launch-service.js";
import { ThreadManagementService } from "../services/thread-management-service.js";
import { ThreadMetadataService } from "../services/thread-metadata-service.js";
import { ThreadQueryService } from "../services/thread-query-service.js";
import { ThreadSearchIndexer } from "../services/thread-search-indexer.js";
import { CallerThreadCommands } from "../services/threads/caller-thread-commands.js";
import { RunWaits } from "../services/threads/run-waits.js";
import { ThreadBatchCreation } from "../services/threads/thread-batch-creation.js";
import { ThreadCommands } from "../services/threads/thread-commands.js";
import { TreeBudgets } from "../services/usage/tree-budgets.js";
import { UsageReaction } from "../services/usage/usage-reaction.js";
import { UsageService } from "../services/usage/usage-service.js";
import { WallClockBudgets } from "../services/usage/wall-clock-budgets.js";
import { ChangeSetService } from "../services/workspaces/change-set-service.js";
import { RepositoryLocks } from "../services/workspaces/repository-locks.js";
import { WorkspaceEffects } from "../services/workspaces/workspace-effects.js";
import { WorkspaceJanitor } from "../services/workspaces/workspace-janitor.js";
import { WorkspacePlanner } from "../services/workspaces/workspace-planner.js";
import { WorkspaceRunEnd } from "../services/workspaces/workspace-run-end.js";
import { HarnessProcessLog } from "../store/harness-process-log.js";
import { HarnessProcessLogToken, StoreToken } from "../store/ports.js";
import { Store } from "../store/store.js";
import { systemClock, ClockToken } from "../util/clock.js";
import { resolve } from "../util/di-token.js";
import { randomIdAllocator, IdAllocatorToken } from "../util/ids.js";
import { resolveServedServices, ServedServicesToken } from "./served-services.js";

/** Services (and the reactions the engine runs): one instance per container. */
const SCOPED_SERVICES = [
  EventWaiter,
  LiveWaits,
  ThreadLinks,
  CallerContext,
  ProviderSelectionService,
  ProjectService,
  ThreadCommands,
  RunWaits,
  CallerThreadCommands,
  ThreadBatchCreation,
  ThreadManagementService,
  ThreadQueryService,
  ThreadSearchIndexer,
  ThreadMetadataService,
  ThreadLaunchService,
  ThreadForkService,
  PendingRequestService,
  CapabilitiesService,
  TaskCreation,
  DelegatedTaskService,
  DelegationSaga,
  McpSessionRegistry,
  PublicEventFeed,
  EventStreamService,
  TreeBudgets,
  UsageReaction,
  UsageService,
  WallClockBudgets,
  WebhookSecretBox,
  ScheduledTaskService,
  ScheduledTriggerService,
  Scheduler,
  ReachLinkClient,
  ReachLinkCalls,
  ReachForwarder,
  RemoteResultsPuller,
  RemoteTasks,
  RemoteTaskResults,
  ForeignTasks,
  ForeignTaskOutbox,
  StopFreezesHarnessTools,
  RepositoryLocks,
  WorkspacePlanner,
  WorkspaceEffects,
  WorkspaceRunEnd,
  ChangeSetService,
  WorkspaceJanitor,
] as const;

/** The engine's reactions, in order (a bench builds an engine without one of them). */
export const ENGINE_REACTIONS = [
  DelegationSaga,
  RouterChildResults,
  UsageReaction,
  RemoteTaskResults,
  ForeignTaskOutbox,
  StopFreezesHarnessTools,
  WorkspaceRunEnd,
] as const;

/** Outbox effects carried out above the engine: workspaces' git work. */
export const EFFECT_HANDLERS = [WorkspaceEffects] as const;

/** Options for building a host. */
export interface ContainerOptions {
  /** `$SWITCHYARD_HOME` (default: SWITCHYARD_HOME, then `~/.switchyard`). */
  readonly home?: string;
  /** A config to use instead of `config.json` (validated the same way). */
  readonly config?: unknown;
  /** Where built-in plugins are; default the launcher's plugin packages, else the repository's `plugins/` folder (null: none). */
  readonly builtinPluginsDir?: string | null;
  /** A logger to use instead of the default stderr one. */
  readonly logger?: Logger;
  /** Replaces services before anything is resolved (tests). */
  readonly overrides?: (container: DependencyContainer) => void;
}

/**
 * The repository's `plugins/` folder, when this core runs from a checkout and no launcher named
 * its built-in plugins (see plugin-host/builtin-plugins.ts).
 */
export function defaultBuiltinPluginsDir(): string | null {
  return defaultBuiltinPlugins().builtinDir;
}

/**
 * The one composition root: registers every core service under its token in a child
 * container (so several hosts can live in one process), then lets `overrides` replace any.
 */
export function createContainer(options: ContainerOptions = {}): {
  container: DependencyContainer;
  paths: SwitchyardPaths;
  config: SwitchyardConfig;
} {
  const home = resolveHome(options.home);
  const paths = pathsFor(home);
  const config =
    options.config === undefined ? loadConfig(paths.configFile) : parseConfig(options.config, paths.configFile);
  const container = rootContainer.createChildContainer();
  const scoped = { lifecycle: Lifecycle.ContainerScoped } as const;

  container.register(ConfigToken, { useValue: config });
  container.register(PathsToken, { useValue: paths });
  container.register(LoggerToken, { useValue: options.logger ?? createLogger() });
  container.register(ClockToken, { useValue: systemClock });
  container.register(IdAllocatorToken, { useValue: randomIdAllocator });
  container.register(PolicyToken, { useValue: policy });
  container.register(StoreToken, {
    useFactory: instanceCachingFactory((c) => {
      // Whatever opens the database (the server, a one-shot command) first makes the home
      // private; tightening an existing home is said, never silent.
      for (const tightened of securePrivateHome(paths)) {
        resolve(c, LoggerToken).warn("made a file in the Switchyard home private: other users could read it", {
          path: tightened.path,
          from: tightened.from.toString(8),
          to: tightened.to.toString(8),
        });
      }
      return new Store(paths.databaseFile, { busyTimeoutMs: config.server.storeBusyTimeoutMs });
    }),
  });
  container.register(HarnessProcessLogToken, { useClass: HarnessProcessLog }, scoped);
  container.register(HarnessProcessTrees, { useClass: HarnessProcessTrees }, scoped);
  container.register(HarnessProcessTreesToken, { useFactory: (c) => c.resolve(HarnessProcessTrees) });
  container.register(ProcessRunnerToken, { useClass: ProcessRunner }, scoped);
  // The plugin host and the store sit beside each other: the runner records its processes in
  // the store's log through its own port.
  container.register(HarnessProcessRegistryToken, { useFactory: (c) => c.resolve(HarnessProcessLogToken) });
  container.register(PluginHostToken, {
    useFactory: instanceCachingFactory(
      (c) =>
        new PluginHost(
          {
            ...(options.builtinPluginsDir === undefined
              ? defaultBuiltinPlugins()
              : { builtinDir: options.builtinPluginsDir }),
            managedDir: paths.pluginsDir,
            configEntries: config.plugins,
            configBaseDir: dirname(paths.configFile),
          },
          c.resolve(LoggerToken),
        ),
    ),
  });
  // The provider doctor (a service) reads the driver kinds off the plugin host, through its own port.
  container.register(DriverKindsToken, { useFactory: (c) => c.resolve(PluginHostToken) });
  container.register(ProviderRegistryToken, { useClass: ProviderRegistry }, scoped);
  // One registry behind both tokens; replacing ProviderRegistry replaces what work reads too.
  container.register(ProviderCatalogToken, { useFactory: (c) => c.resolve(ProviderRegistryToken) });
  // The engine's in-transaction reactions, handed to it when it is built: the delegation saga,
  // the router children's report-back, usage accounting (records, tree budgets), remote task
  // results (receipts from linked environments), the foreign-task outbox and the queuing of a
  // workspace's commit when a run ends run for every command of every engine, and nothing has
  // to be resolved early to install them.
  container.register(EngineReactionsToken, {
    useFactory: (c) => ENGINE_REACTIONS.map((reaction) => c.resolve<EngineReaction>(reaction)),
  });
  container.register(EngineToken, { useClass: TransactionalEngine }, scoped);
  container.register(EffectHandlersToken, {
    useFactory: (c) => EFFECT_HANDLERS.map((handler) => c.resolve<EffectHandler>(handler)),
  });
  container.register(LiveOutput, { useClass: LiveOutput }, scoped);
  container.register(LiveOutputToken, { useFactory: (c) => c.resolve(LiveOutput) });
  container.register(ProviderEventIngestorToken, { useClass: ProviderEventIngestor }, scoped);
  // The engine issues and revokes session credentials through the registry from the first
  // session on; grants point at the endpoint once the HTTP listener is bound.
  container.register(McpGrantIssuerToken, { useFactory: (c) => c.resolve(McpSessionRegistry) });
  container.register(ProviderSessionManagerToken, { useClass: ProviderSessionManager }, scoped);
  container.register(EffectExecutorToken, { useClass: EffectExecutor }, scoped);
  container.register(OutboxWorkerToken, { useClass: OutboxWorker }, scoped);
  container.register(BootReconcilerToken, { useClass: BootReconciler }, scoped);
  for (const service of SCOPED_SERVICES) container.register(service as never, { useClass: service as never }, scoped);
  // What the transports call, resolved once when the server starts: a transport resolves nothing itself.
  container.register(ServedServicesToken, { useFactory: instanceCachingFactory(resolveServedServices) });
  options.overrides?.(container);
  return { container, paths, config };
}
