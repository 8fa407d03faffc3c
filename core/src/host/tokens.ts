import { ConfigToken } from "../config/config-schema.js";
import { PathsToken } from "../config/paths.js";
import { EffectHandlersToken } from "../engine/effect-handler.js";
import { EngineReactionsToken } from "../engine/engine-reaction.js";
import { McpGrantIssuerToken } from "../engine/mcp-grant-issuer.js";
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
import { LoggerToken } from "../logging/logger.js";
import { HarnessProcessTreesToken, PluginHostToken, ProcessRunnerToken } from "../plugin-host/ports.js";
import { PolicyToken } from "../policy/policy-token.js";
import { ProviderRegistryToken } from "../providers/ports.js";
import { HarnessProcessLogToken, StoreToken } from "../store/ports.js";
import { ClockToken } from "../util/clock.js";
import { IdAllocatorToken } from "../util/ids.js";

// Each token is declared beside the port it names; this catalogue sits at the top, beside the
// composition root, for whoever replaces a service from outside core (`overrides` in tests and
// benches, `@switchyard/core`'s `TOKENS`). Code inside core imports the token from its port.

/**
 * Tokens for the host's core services. Classes are registered under these tokens, so a test
 * can override any one of them (`startTestHost({ overrides })`) before the host is built.
 * Services with no token are registered under their class, which works the same way.
 */
export const TOKENS = {
  Config: ConfigToken,
  Paths: PathsToken,
  Logger: LoggerToken,
  Clock: ClockToken,
  IdAllocator: IdAllocatorToken,
  Policy: PolicyToken,
  Store: StoreToken,
  HarnessProcessLog: HarnessProcessLogToken,
  ProcessRunner: ProcessRunnerToken,
  HarnessProcessTrees: HarnessProcessTreesToken,
  PluginHost: PluginHostToken,
  ProviderRegistry: ProviderRegistryToken,
  ProviderCatalog: ProviderCatalogToken,
  Engine: EngineToken,
  EngineReactions: EngineReactionsToken,
  LiveOutput: LiveOutputToken,
  ProviderEventIngestor: ProviderEventIngestorToken,
  McpGrantIssuer: McpGrantIssuerToken,
  ProviderSessionManager: ProviderSessionManagerToken,
  EffectHandlers: EffectHandlersToken,
  EffectExecutor: EffectExecutorToken,
  OutboxWorker: OutboxWorkerToken,
  BootReconciler: BootReconcilerToken,
} as const;
