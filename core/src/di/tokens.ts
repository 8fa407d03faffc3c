import type { DependencyContainer } from "tsyringe";
import type { SwitchyardConfig } from "../config/config-schema.js";
import type { SwitchyardPaths } from "../config/paths.js";
import type { Logger } from "../logging/logger.js";
import type { Clock } from "../util/clock.js";
import type { IdAllocator } from "../util/ids.js";
import type * as policy from "../policy/index.js";

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
 */
export const TOKENS = {
  Config: token<SwitchyardConfig>("Config"),
  Paths: token<SwitchyardPaths>("Paths"),
  Logger: token<Logger>("Logger"),
  Clock: token<Clock>("Clock"),
  IdAllocator: token<IdAllocator>("IdAllocator"),
  Policy: token<Policy>("Policy"),
  Store: token<import("../store/store.js").Store>("Store"),
  HarnessProcessLog: token<import("../store/harness-process-log.js").HarnessProcessLog>("HarnessProcessLog"),
  ProcessRunner: token<import("../plugin-host/process-runner.js").ProcessRunner>("ProcessRunner"),
  PluginHost: token<import("../plugin-host/plugin-host.js").PluginHost>("PluginHost"),
  ProviderRegistry: token<import("../providers/provider-registry.js").ProviderRegistry>("ProviderRegistry"),
  Engine: token<import("../engine/engine.js").Engine>("Engine"),
  LiveOutput: token<import("../engine/live-output.js").LiveOutput>("LiveOutput"),
  ProviderEventIngestor: token<import("../engine/provider-event-ingestor.js").ProviderEventIngestor>("ProviderEventIngestor"),
  McpGrantIssuer: token<import("../engine/mcp-grant-issuer.js").McpGrantIssuer>("McpGrantIssuer"),
  ProviderSessionManager: token<import("../engine/provider-session-manager.js").ProviderSessionManager>("ProviderSessionManager"),
  EffectExecutor: token<import("../engine/effect-executor.js").EffectExecutor>("EffectExecutor"),
  OutboxWorker: token<import("../engine/outbox-worker.js").OutboxWorker>("OutboxWorker"),
  BootReconciler: token<import("../engine/boot-reconciler.js").BootReconciler>("BootReconciler"),
  /** The engine's in-transaction reactions (the delegation saga), in the order they run. */
  EngineReactions: token<readonly import("../engine/engine-reaction.js").EngineReaction[]>("EngineReactions"),
} as const;

/** Resolves a typed token. */
export function resolve<T>(container: DependencyContainer, token: Token<T>): T {
  return container.resolve<T>(token);
}
