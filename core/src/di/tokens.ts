import type { DependencyContainer } from "tsyringe";
import type { SwitchyardConfig } from "../config/config-schema.js";
import type { SwitchyardPaths } from "../config/paths.js";
import type { EngineReaction } from "../engine/engine-reaction.js";
import type { EffectHandler } from "../engine/effect-handler.js";
import type { McpGrantIssuer } from "../engine/mcp-grant-issuer.js";
import type { EffectRunner, EffectWorker, Engine, LiveOutputFeed, ProviderEventSink, ProviderSessions, Reconciler } from "../engine/ports.js";
import type { ProviderCatalog } from "../engine/provider-catalog.js";
import type { HarnessProcessControl, PluginCatalog } from "../plugin-host/ports.js";
import type * as policy from "../policy/index.js";
import type { ManagedProviders } from "../providers/ports.js";
import type { PluginLogger, ProcessHelpers } from "../spec/index.js";
import type { EventStore, HarnessProcessLedger } from "../store/ports.js";
import type { Clock } from "../util/clock.js";
import type { IdAllocator } from "../util/ids.js";

// Every token resolves to an interface (a port declared beside its consumers, or the spec's),
// never to the class that implements it: this file imports no implementation module, so no
// consumer of a token depends on an implementation through it. The composition root pairs each
// token with its class.

/** A DI token that remembers the type it resolves to. */
export type Token<T> = symbol & { readonly __resolves?: T };

function token<T>(name: string): Token<T> {
  return Symbol.for(`switchyard.${name}`) as Token<T>;
}

/** The shared policy module, as a service (tests may replace it to observe decisions). */
export type Policy = typeof policy;

/**
 * Tokens for the host's core services. Classes are registered under these tokens, so a test
 * can override any one of them (`startTestHost({ overrides })`) before the host is built.
 * Services with no token are registered under their class, which works the same way.
 */
export const TOKENS = {
  Config: token<SwitchyardConfig>("Config"),
  Paths: token<SwitchyardPaths>("Paths"),
  Logger: token<PluginLogger>("Logger"),
  Clock: token<Clock>("Clock"),
  IdAllocator: token<IdAllocator>("IdAllocator"),
  Policy: token<Policy>("Policy"),
  /** `Store`. */
  Store: token<EventStore>("Store"),
  /** `HarnessProcessLog`. */
  HarnessProcessLog: token<HarnessProcessLedger>("HarnessProcessLog"),
  /** `ProcessRunner`. */
  ProcessRunner: token<ProcessHelpers>("ProcessRunner"),
  /** `HarnessProcessTrees`: every harness's processes, detached ones included. */
  HarnessProcessTrees: token<HarnessProcessControl>("HarnessProcessTrees"),
  /** `PluginHost`. */
  PluginHost: token<PluginCatalog>("PluginHost"),
  /** `ProviderRegistry`, as the host owns it (building, refreshing, disposing instances). */
  ProviderRegistry: token<ManagedProviders>("ProviderRegistry"),
  /** The same registry, as the engine and the services read it. */
  ProviderCatalog: token<ProviderCatalog>("ProviderCatalog"),
  /** `TransactionalEngine`. */
  Engine: token<Engine>("Engine"),
  /** The engine's in-transaction reactions (the delegation saga), in the order they run. */
  EngineReactions: token<readonly EngineReaction[]>("EngineReactions"),
  /** `LiveOutput`. */
  LiveOutput: token<LiveOutputFeed>("LiveOutput"),
  /** `ProviderEventIngestor`. */
  ProviderEventIngestor: token<ProviderEventSink>("ProviderEventIngestor"),
  /** `McpSessionRegistry`. */
  McpGrantIssuer: token<McpGrantIssuer>("McpGrantIssuer"),
  /** `ProviderSessionManager`. */
  ProviderSessionManager: token<ProviderSessions>("ProviderSessionManager"),
  /** Outbox effects carried out above the engine (a workspace's git work), which survive a restart. */
  EffectHandlers: token<readonly EffectHandler[]>("EffectHandlers"),
  /** `EffectExecutor`. */
  EffectExecutor: token<EffectRunner>("EffectExecutor"),
  /** `OutboxWorker`. */
  OutboxWorker: token<EffectWorker>("OutboxWorker"),
  /** `BootReconciler`. */
  BootReconciler: token<Reconciler>("BootReconciler"),
} as const;

/** Resolves a typed token. */
export function resolve<T>(container: DependencyContainer, token: Token<T>): T {
  return container.resolve<T>(token);
}
